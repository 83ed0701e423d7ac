// Looking up the built-in JSON Schemas (their texts are generated: cmake/EmbedSchemas.cmake).

#include <fib/model/schemas.hpp>

namespace fib {

std::optional<SchemaFile> find_schema(std::string_view kind) {
  for (const SchemaFile& schema : all_schemas()) {
    const bool by_id = kind.starts_with(k_schema_id_base) &&
                       kind.substr(k_schema_id_base.size()) == schema.file_name;
    if (schema.kind == kind || schema.file_name == kind || by_id) {
      return schema;
    }
  }
  return std::nullopt;
}

} // namespace fib
