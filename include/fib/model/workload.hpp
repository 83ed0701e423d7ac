#pragma once
// Workload and its input specs (random, scalar, safetensors): the concrete axis values and inputs a
// definition is run on.

#include <fib/io/json_io.hpp>
#include <fib/model/definition.hpp>

#include <cstdint>
#include <string>
#include <variant>

namespace fib {

// --- Interface ---

// Generated at run time; any extra keys (`seed`, …) are ignored.
struct RandomInput {};

// A Python scalar. JSON `true` stays a bool, `1` an int, `1.0` a float; "3" becomes the int 3.
struct ScalarInput {
  std::variant<std::int64_t, double, bool> value;
};

// A tensor stored in a safetensors blob; `path` is relative to the dataset root (an absolute
// path is used as is).
struct SafetensorsInput {
  std::string path;
  std::string tensor_key;
};

using InputSpec = std::variant<RandomInput, ScalarInput, SafetensorsInput>;

// "random", "scalar" or "safetensors".
std::string_view input_type_name(const InputSpec& input);

struct Workload {
  OrderedMap<std::int64_t> axes; // values ≥ 0 (the schema allows 0; dataset validation does not)
  OrderedMap<InputSpec> inputs;
  std::string uuid;
};

// Reads the Workload `object`, found at `pointer` of `document` (a JSON Lines line holds it under
// "/workload"). Union choice without `type` follows the old tool: {} → random, {"value"} → scalar,
// {"path","tensor_key"} → safetensors, {"path"} alone or {"value":"abc"} → random.
Workload parse_workload(const JsonDocument& document, const Json& object,
                        const std::string& pointer, DiagnosticSink& sink);

Json to_json(const Workload& workload);

} // namespace fib
