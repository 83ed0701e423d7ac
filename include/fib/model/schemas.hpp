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

// The schema of `kind` (a kind or a file name), or nullopt.
std::optional<SchemaFile> find_schema(std::string_view kind);

} // namespace fib
