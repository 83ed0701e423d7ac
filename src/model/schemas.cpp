// Looking up the built-in JSON Schemas (their texts are generated: cmake/EmbedSchemas.cmake).

#include <fib/model/schemas.hpp>

namespace fib {

std::optional<SchemaFile> find_schema(std::string_view kind) {
  for (const SchemaFile& schema : all_schemas()) {
    if (schema.kind == kind || schema.file_name == kind) {
      return schema;
    }
  }
  return std::nullopt;
}

} // namespace fib
