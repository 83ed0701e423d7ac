#pragma once
// The JSON Schemas of the four kinds of file (schemas/*.schema.json), built into fib so that
// `fib schema NAME` prints them wherever fib is installed.

#include <optional>
#include <span>
#include <string_view>

namespace fib {

// --- Interface ---

struct SchemaFile {
  std::string_view kind;      // definition, solution, workload, trace
  std::string_view file_name; // definition.v1.schema.json, ...
  std::string_view text;      // the file, byte for byte
};

// Every schema, in file-name order (generated from schemas/ at build time).
std::span<const SchemaFile> all_schemas();

// Every schema's "$id" is this followed by its file name.
inline constexpr std::string_view k_schema_id_base = "https://flashinfer-trace.fib/schemas/";

// The schema of `kind` (a kind, a file name, or a schema's "$id": how fib resolves the ids, which
// name the schemas rather than locate them), or nullopt.
std::optional<SchemaFile> find_schema(std::string_view kind);

} // namespace fib
