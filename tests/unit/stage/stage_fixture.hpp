#pragma once
// What the stage tests share: a small valid rmsnorm definition, a temporary dump directory beside
// an empty dataset root, and the lookup of an input's entry in a StageResult.

#include "test_support.hpp"

#include <fib/io/json_io.hpp>
#include <fib/stage/stage.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace fib::testing {

// A valid definition named `name` under `op_type`, with a runnable reference.
inline Json make_definition(std::string_view name, std::string_view op_type = "rmsnorm") {
  Json d = Json::parse(R"({"name": "", "description": "RMSNorm", "op_type": "",
    "tags": ["fi_api:flashinfer.norm.rmsnorm", "status:verified"],
    "axes": {"batch_size": {"type": "var"}, "hidden_size": {"type": "const", "value": 128}},
    "inputs": {"hidden_states": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"},
               "weight": {"shape": ["hidden_size"], "dtype": "bfloat16"}},
    "outputs": {"output": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}},
    "reference": "import torch\n\ndef run(hidden_states, weight):\n    return hidden_states * weight\n"})");
  d["name"] = std::string(name);
  d["op_type"] = std::string(op_type);
  return d;
}

// DIR/dumps (written by dump()) and an existing, empty DIR/dataset.
struct StageFixture {
  TempDir dir;
  std::filesystem::path dumps = dir.path() / "dumps";
  std::filesystem::path dataset = dir.path() / "dataset";

  StageFixture() { std::filesystem::create_directories(dataset); }

  std::filesystem::path dump(const std::string& file, const Json& document) const {
    return dir.write(std::filesystem::path("dumps") / file, document.dump(2));
  }
};

// The entry of the input whose file name is `file_name`; nullptr when there is none.
inline const StageEntry* find_entry(const StageResult& result, std::string_view file_name) {
  for (const auto& entry : result.entries) {
    if (entry.source.filename() == file_name) {
      return &entry;
    }
  }
  return nullptr;
}

} // namespace fib::testing
