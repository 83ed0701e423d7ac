// The JSON Schemas built into fib are the files of schemas/, byte for byte.

#include "test_support.hpp"

#include <fib/model/schemas.hpp>

#include <gtest/gtest.h>

#include <string>

#include <filesystem>

namespace fib {
namespace {

TEST(Schemas, TheBuiltInTextsAreTheFilesOfTheTree) {
  const std::filesystem::path folder = std::filesystem::path(FIB_SOURCE_DIR) / "schemas";
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() == ".json") {
      ++files;
      const auto schema = find_schema(entry.path().filename().string());
      ASSERT_TRUE(schema) << entry.path();
      EXPECT_EQ(schema->text, testing::read_file(entry.path())) << entry.path();
    }
  }
  EXPECT_EQ(all_schemas().size(), files);
  EXPECT_EQ(files, 4u);
}

TEST(Schemas, KindsNameTheFourKindsOfFile) {
  for (const char* kind : {"definition", "solution", "workload", "trace"}) {
    const auto schema = find_schema(kind);
    ASSERT_TRUE(schema) << kind;
    EXPECT_NE(schema->text.find("\"$id\""), std::string_view::npos) << kind;
  }
  EXPECT_EQ(find_schema("workload")->file_name, "workload-line.v1.schema.json");
  EXPECT_FALSE(find_schema("nosuch"));
  EXPECT_FALSE(find_schema(""));
}

TEST(Schemas, EachIdResolvesToItsOwnSchema) {
  for (const SchemaFile& schema : all_schemas()) {
    const std::string id = std::string(k_schema_id_base) + std::string(schema.file_name);
    EXPECT_NE(schema.text.find("\"$id\": \"" + id + "\""), std::string_view::npos)
        << schema.file_name << " has the $id " << id;
    const auto found = find_schema(id);
    ASSERT_TRUE(found) << id;
    EXPECT_EQ(found->file_name, schema.file_name);
  }
  EXPECT_FALSE(find_schema(std::string(k_schema_id_base) + "nosuch.v1.schema.json"));
  EXPECT_FALSE(find_schema("https://elsewhere.example/definition.v1.schema.json"));
}

} // namespace
} // namespace fib
