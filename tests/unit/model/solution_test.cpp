// Solution, BuildSpec and SourceFile (the old tool's solution tests 53-66).

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/solution.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fib {
namespace {

using testing::describe;

using testing::has;

using Pairs = std::vector<std::pair<std::string, std::string>>;

constexpr std::string_view k_solution = R"({
  "name": "rmsnorm_triton_v1",
  "definition": "rmsnorm_h128",
  "author": "alice",
  "spec": {"language": "python", "target_hardware": ["cuda"], "entry_point": "main.py::run"},
  "sources": [{"path": "main.py", "content": "def run(x):\n    return x\n"}]
})";

struct Parsed {
  Solution solution;
  DiagnosticList diagnostics;
};

Parsed parse_text(std::string_view text) {
  Parsed out;
  const JsonDocument document = testing::parse_or_die(text, "solution.json");
  out.solution = parse_solution(document, out.diagnostics);
  return out;
}

// k_solution with the value at `pointer` replaced by the JSON `value`.
Parsed parse_patched(std::string_view pointer, std::string_view value) {
  Json root = Json::parse(k_solution);
  root[Json::json_pointer(std::string(pointer))] = Json::parse(value);
  return parse_text(root.dump(2));
}

TEST(Solution, BaseFixtureIsValid) {
  const Parsed p = parse_text(k_solution);
  EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
  EXPECT_EQ(p.solution.name, "rmsnorm_triton_v1");
  EXPECT_EQ(p.solution.definition, "rmsnorm_h128");
  EXPECT_EQ(p.solution.author, "alice");
  EXPECT_EQ(p.solution.spec.language, Language::python);
  EXPECT_EQ(p.solution.spec.destination_passing_style, DestinationPassing::yes);
  EXPECT_FALSE(p.solution.spec.binding.has_value());
  EXPECT_TRUE(p.solution.spec.dependencies.empty());
  EXPECT_FALSE(p.solution.description.has_value());
}

// --- the old tool's test_solution.py ---

TEST(SourceFile, Item53PathAndContentAreAccepted) {
  const Parsed p = parse_text(k_solution);
  EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
  ASSERT_EQ(p.solution.sources.size(), 1u);
  EXPECT_EQ(p.solution.sources[0].path, "main.py");
  EXPECT_EQ(p.solution.sources[0].content, "def run(x):\n    return x\n");
}

TEST(SourceFile, Item54EmptyPathIsRejected) {
  const Parsed p = parse_patched("/sources/0/path", R"("")");
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_empty, "/sources/0/path"))
      << describe(p.diagnostics);
}

TEST(SourceFile, Item55NonStringContentIsRejected) {
  const Parsed p = parse_patched("/sources/0/content", "123");
  EXPECT_EQ(testing::code_pointers(p.diagnostics), (Pairs{{"schema.type", "/sources/0/content"}}))
      << describe(p.diagnostics);
}

TEST(SourceFile, EmptyContentIsRejected) {
  const Parsed p = parse_patched("/sources/0/content", R"("")");
  EXPECT_EQ(testing::code_pointers(p.diagnostics), (Pairs{{"schema.empty", "/sources/0/content"}}))
      << describe(p.diagnostics);
}

TEST(BuildSpec, Item56DependenciesAreAccepted) {
  const Parsed p = parse_patched("/spec/dependencies", R"(["numpy"])");
  EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
  EXPECT_EQ(p.solution.spec.dependencies, std::vector<std::string>{"numpy"});
  EXPECT_EQ(p.solution.spec.target_hardware, std::vector<std::string>{"cuda"});
}

TEST(BuildSpec, Item57EntryWithoutSeparatorIsRejected) {
  const Parsed p = parse_patched("/spec/entry_point", R"("main.py")");
  EXPECT_EQ(testing::code_pointers(p.diagnostics),
            (Pairs{{"solution.entry.format", "/spec/entry_point"}}))
      << describe(p.diagnostics);
  ASSERT_EQ(p.diagnostics.items().size(), 1u);
  EXPECT_EQ(p.diagnostics.items()[0].message,
            R"(Invalid entry point format: main.py. Expected "<file_path>::<function_name>".)");
}

TEST(BuildSpec, Item58EntryWithTwoSeparatorsIsRejected) {
  const Parsed p = parse_patched("/spec/entry_point", R"("main.py::run::add")");
  EXPECT_EQ(testing::code_pointers(p.diagnostics),
            (Pairs{{"solution.entry.format", "/spec/entry_point"}}))
      << describe(p.diagnostics);
}

TEST(BuildSpec, EntryQuirksOfNonOverlappingCount) {
  {
    const Parsed p = parse_patched("/spec/entry_point", R"("main.py::")");
    EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
    EXPECT_EQ(p.solution.spec.entry_file(), "main.py");
    EXPECT_EQ(p.solution.spec.entry_symbol(), "");
  }
  {
    const Parsed p = parse_patched("/spec/entry_point", R"("main.py:::run")");
    EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
    EXPECT_EQ(p.solution.spec.entry_file(), "main.py");
    EXPECT_EQ(p.solution.spec.entry_symbol(), ":run");
  }
  {
    const Parsed p = parse_patched("/spec/entry_point", R"("main.py::::run")");
    EXPECT_EQ(testing::code_pointers(p.diagnostics),
              (Pairs{{"solution.entry.format", "/spec/entry_point"}}))
        << describe(p.diagnostics);
  }
}

TEST(BuildSpec, Item59EmptyTargetHardwareIsRejected) {
  const Parsed p = parse_patched("/spec/target_hardware", "[]");
  EXPECT_EQ(testing::code_pointers(p.diagnostics),
            (Pairs{{"schema.too-short", "/spec/target_hardware"}}))
      << describe(p.diagnostics);
}

TEST(BuildSpec, EmptyTargetHardwareElementIsAllowed) {
  const Parsed p = parse_patched("/spec/target_hardware", R"([""])");
  EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
  EXPECT_EQ(p.solution.spec.target_hardware, std::vector<std::string>{""});
}

TEST(BuildSpec, Item60NonStringDependencyIsRejected) {
  const Parsed p = parse_patched("/spec/dependencies", "[1]");
  EXPECT_EQ(testing::code_pointers(p.diagnostics), (Pairs{{"schema.type", "/spec/dependencies/0"}}))
      << describe(p.diagnostics);
}

TEST(BuildSpec, NullAndEmptyDependenciesAreRejected) {
  const Parsed null_deps = parse_patched("/spec/dependencies", "null");
  EXPECT_EQ(testing::code_pointers(null_deps.diagnostics),
            (Pairs{{"schema.type", "/spec/dependencies"}}))
      << describe(null_deps.diagnostics);
  const Parsed empty = parse_patched("/spec/dependencies", R"(["numpy", ""])");
  EXPECT_EQ(testing::code_pointers(empty.diagnostics),
            (Pairs{{"schema.empty", "/spec/dependencies/1"}}))
      << describe(empty.diagnostics);
}

TEST(BuildSpec, LanguageIsCaseSensitiveWithAHint) {
  const Parsed p = parse_patched("/spec/language", R"("Triton")");
  EXPECT_EQ(testing::code_pointers(p.diagnostics), (Pairs{{"schema.choice", "/spec/language"}}))
      << describe(p.diagnostics);
  ASSERT_EQ(p.diagnostics.items().size(), 1u);
  EXPECT_NE(p.diagnostics.items()[0].hint.find("\"triton\""), std::string::npos)
      << p.diagnostics.items()[0].hint;
}

TEST(BuildSpec, EveryLanguageParses) {
  for (const Language language :
       {Language::python, Language::triton, Language::cpp, Language::cuda, Language::tilelang}) {
    const Parsed p = parse_patched("/spec/language", Json(std::string(to_string(language))).dump());
    EXPECT_TRUE(p.diagnostics.items().empty()) << to_string(language) << describe(p.diagnostics);
    EXPECT_EQ(p.solution.spec.language, language);
  }
}

TEST(BuildSpec, Binding) {
  {
    const Parsed p = parse_patched("/spec/binding", R"("tvm-ffi")");
    EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
    EXPECT_EQ(p.solution.spec.binding, std::optional<Binding>(Binding::tvm_ffi));
  }
  {
    const Parsed p = parse_patched("/spec/binding", R"("torch")");
    EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
    EXPECT_EQ(p.solution.spec.binding, std::optional<Binding>(Binding::torch));
  }
  {
    const Parsed p = parse_patched("/spec/binding", "null");
    EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
    EXPECT_FALSE(p.solution.spec.binding.has_value());
  }
  {
    const Parsed p = parse_patched("/spec/binding", R"("tvm_ffi")");
    EXPECT_EQ(testing::code_pointers(p.diagnostics), (Pairs{{"schema.choice", "/spec/binding"}}))
        << describe(p.diagnostics);
  }
}

TEST(BuildSpec, DestinationPassingStyleCoercion) {
  {
    const Parsed p = parse_patched("/spec/destination_passing_style", "false");
    EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
    EXPECT_EQ(p.solution.spec.destination_passing_style, DestinationPassing::no);
  }
  {
    const Parsed p = parse_patched("/spec/destination_passing_style", R"("false")");
    EXPECT_EQ(testing::code_pointers(p.diagnostics),
              (Pairs{{"schema.coerced", "/spec/destination_passing_style"}}))
        << describe(p.diagnostics);
    EXPECT_EQ(p.solution.spec.destination_passing_style, DestinationPassing::no);
  }
  {
    const Parsed p = parse_patched("/spec/destination_passing_style", R"("maybe")");
    EXPECT_EQ(testing::code_pointers(p.diagnostics),
              (Pairs{{"schema.type", "/spec/destination_passing_style"}}))
        << describe(p.diagnostics);
  }
}

TEST(Solution, Item61EntrySourceIsTheNamedFile) {
  const Parsed p = parse_patched("/sources", R"([{"path": "main.py", "content": "def run(): pass"},
                                                 {"path": "util.py", "content": "X = 1"}])");
  EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
  ASSERT_EQ(p.solution.sources.size(), 2u);
  EXPECT_EQ(p.solution.entry_source(), &p.solution.sources[0]);
  EXPECT_EQ(p.solution.entry_source()->path, "main.py");
}

TEST(Solution, Item62LanguageAndExtensionAreNotCompared) {
  const Parsed p = parse_patched("/spec/language", R"("cuda")");
  EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
  EXPECT_EQ(p.solution.spec.language, Language::cuda);
  EXPECT_EQ(p.solution.spec.entry_point, "main.py::run");
}

TEST(Solution, Item63DuplicateSourcePathIsRejected) {
  const Parsed p = parse_patched("/sources", R"([{"path": "main.py", "content": "a"},
                                                 {"path": "main.py", "content": "b"}])");
  EXPECT_EQ(testing::code_pointers(p.diagnostics),
            (Pairs{{"solution.source.duplicate", "/sources/1/path"}}))
      << describe(p.diagnostics);
  ASSERT_EQ(p.diagnostics.items().size(), 1u);
  EXPECT_EQ(p.diagnostics.items()[0].message, "Duplicate source path 'main.py'");
}

TEST(Solution, Item64EntryFileNotAmongSourcesIsRejected) {
  const Parsed p = parse_patched("/spec/entry_point", R"("kernel.py::run")");
  EXPECT_EQ(testing::code_pointers(p.diagnostics),
            (Pairs{{"solution.entry.missing-source", "/spec/entry_point"}}))
      << describe(p.diagnostics);
  ASSERT_EQ(p.diagnostics.items().size(), 1u);
  EXPECT_EQ(p.diagnostics.items()[0].message, "Entry source file 'kernel.py' not found in sources");
  EXPECT_EQ(p.solution.entry_source(), nullptr);
}

TEST(Solution, EntryPathsAreNotNormalized) {
  const Parsed p = parse_patched("/spec/entry_point", R"("./main.py::run")");
  EXPECT_EQ(testing::code_pointers(p.diagnostics),
            (Pairs{{"solution.entry.missing-source", "/spec/entry_point"}}))
      << describe(p.diagnostics);
}

TEST(Solution, Item65ParentTraversalIsRejected) {
  Json root = Json::parse(k_solution);
  root["spec"]["language"] = "cuda";
  root["spec"]["entry_point"] = "../../kernel.cpp::run";
  root["sources"][0]["path"] = "../../kernel.cpp";
  const Parsed p = parse_text(root.dump());
  EXPECT_EQ(testing::code_pointers(p.diagnostics),
            (Pairs{{"solution.source.traversal", "/sources/0/path"}}))
      << describe(p.diagnostics);
  ASSERT_EQ(p.diagnostics.items().size(), 1u);
  EXPECT_NE(p.diagnostics.items()[0].message.find(
                "Invalid source path (parent directory traversal not allowed)"),
            std::string::npos)
      << p.diagnostics.items()[0].message;
}

TEST(Solution, Item66AbsolutePathIsRejected) {
  Json root = Json::parse(k_solution);
  root["spec"]["entry_point"] = "/tmp/kernel.cpp::run";
  root["sources"][0]["path"] = "/tmp/kernel.cpp";
  const Parsed p = parse_text(root.dump());
  EXPECT_EQ(testing::code_pointers(p.diagnostics),
            (Pairs{{"solution.source.absolute", "/sources/0/path"}}))
      << describe(p.diagnostics);
  ASSERT_EQ(p.diagnostics.items().size(), 1u);
  EXPECT_NE(p.diagnostics.items()[0].message.find("absolute path not allowed"), std::string::npos)
      << p.diagnostics.items()[0].message;
}

TEST(Solution, TraversalNeedsADotDotComponent) {
  for (const std::string_view path : {"a/../b.py", "..", "x/.."}) {
    Json root = Json::parse(k_solution);
    root["sources"].push_back(Json{{"path", path}, {"content", "x"}});
    const Parsed p = parse_text(root.dump());
    EXPECT_EQ(testing::code_pointers(p.diagnostics),
              (Pairs{{"solution.source.traversal", "/sources/1/path"}}))
        << path << "\n"
        << describe(p.diagnostics);
  }
  for (const std::string_view path : {"..foo/x.py", "a/..b/c.py", "..\\x.py", "./x.py"}) {
    Json root = Json::parse(k_solution);
    root["sources"].push_back(Json{{"path", path}, {"content", "x"}});
    const Parsed p = parse_text(root.dump());
    EXPECT_TRUE(p.diagnostics.items().empty()) << path << "\n" << describe(p.diagnostics);
    ASSERT_EQ(p.solution.sources.size(), 2u);
    EXPECT_EQ(p.solution.sources[1].path, path);
  }
}

TEST(Solution, SourcesMustBeANonEmptyList) {
  const Parsed empty = parse_patched("/sources", "[]");
  EXPECT_EQ(testing::code_pointers(empty.diagnostics), (Pairs{{"schema.too-short", "/sources"}}))
      << describe(empty.diagnostics);
  const Parsed object = parse_patched("/sources", "{}");
  EXPECT_EQ(testing::code_pointers(object.diagnostics), (Pairs{{"schema.type", "/sources"}}))
      << describe(object.diagnostics);
}

TEST(Solution, RequiredKeys) {
  const Parsed p = parse_text("{}");
  EXPECT_EQ(testing::code_pointers(p.diagnostics), (Pairs{{"schema.required", "/name"},
                                                          {"schema.required", "/definition"},
                                                          {"schema.required", "/author"},
                                                          {"schema.required", "/spec"},
                                                          {"schema.required", "/sources"}}))
      << describe(p.diagnostics);
}

TEST(Solution, UnknownKeysAreNotes) {
  Json root = Json::parse(k_solution);
  root["spec"]["build_commands"] = Json::array();
  root["version"] = 2;
  const Parsed p = parse_text(root.dump());
  EXPECT_EQ(
      testing::code_pointers(p.diagnostics),
      (Pairs{{"schema.unknown-key", "/spec/build_commands"}, {"schema.unknown-key", "/version"}}))
      << describe(p.diagnostics);
  EXPECT_FALSE(p.diagnostics.has_errors());
}

TEST(SolutionIdentity, HashExcludesNameAndCoversContent) {
  const Parsed a = parse_text(k_solution);
  const Parsed renamed = parse_patched("/name", R"("other_name")");
  const Parsed edited = parse_patched("/sources/0/content", R"("def run(x):\n    return -x\n")");
  // SHA-1 of "rmsnorm_h128" "python" "main.py::run" "" "main.py" "def run(x):\n    return x\n".
  EXPECT_EQ(a.solution.content_hash(), "5d5aab3f6b5fad6fe7d31a397f3a7eda80251ff7");
  EXPECT_EQ(renamed.solution.content_hash(), a.solution.content_hash());
  EXPECT_NE(edited.solution.content_hash(), a.solution.content_hash());
  EXPECT_EQ(a.solution.unique_name(), "rmsnorm_triton_v1_5d5aab3f");
}

} // namespace
} // namespace fib
