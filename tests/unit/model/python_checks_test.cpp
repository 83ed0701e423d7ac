// Python-exact definition checks (the old tool's model validators for the reference and the
// constraints; its definition tests 8, 10, 11, 12, 15) through the test binary's embedded
// interpreter, and validate_definition_document.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/definition.hpp>
#include <fib/model/python_checks.hpp>
#include <fib/validate/files.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fib {
namespace {

using testing::describe;

using testing::has;

// Skips the test when the embedded interpreter cannot start .
#define FIB_REQUIRE_PYTHON()                                                                       \
  do {                                                                                             \
    auto probe_ = testing::python().check_expression("1");                                         \
    if (!probe_) {                                                                                 \
      GTEST_SKIP() << "embedded Python unavailable: " << probe_.error().message;                   \
    }                                                                                              \
  } while (false)

constexpr std::string_view k_minimal = R"({
  "name": "gemm_n16",
  "op_type": "gemm",
  "axes": {
    "M": {"type": "var"},
    "N": {"type": "const", "value": 16}
  },
  "inputs": {"A": {"shape": ["M", "N"], "dtype": "float16"}},
  "outputs": {"B": {"shape": ["M", "N"], "dtype": "float16"}},
  "reference": "def run(A):\n    return A\n"
})";

struct Checked {
  Definition definition;
  DiagnosticList schema; // parse_definition
  DiagnosticList python; // check_definition_python
  std::optional<Diagnostic> failure;
};

// parse_definition, then check_definition_python with the test binary's runtime.
Checked check(std::string_view text, ArityCheck arity = ArityCheck::yes) {
  Checked out;
  const JsonDocument document = testing::parse_or_die(text, "def.json");
  out.definition = parse_definition(document, out.schema);
  out.failure =
      check_definition_python(out.definition, document, testing::python(), arity, out.python);
  if (out.failure) {
    ADD_FAILURE() << "Python check could not run: " << out.failure->message;
  }
  return out;
}

std::string with_reference(std::string_view reference) {
  Json root = Json::parse(k_minimal);
  root["reference"] = std::string(reference);
  return root.dump(2);
}

std::string with_constraints(std::string_view constraints) {
  Json root = Json::parse(k_minimal);
  root["constraints"] = Json::parse(constraints);
  return root.dump(2);
}

TEST(DefinitionPython, MinimalDefinitionPasses) {
  FIB_REQUIRE_PYTHON();
  const Checked c = check(k_minimal);
  EXPECT_TRUE(c.schema.items().empty()) << describe(c.schema);
  EXPECT_TRUE(c.python.items().empty()) << describe(c.python);
  EXPECT_EQ(c.definition.reference, "def run(A):\n    return A\n");
}

// The run signature the runtime reads off `reference`.
RunSignature signature_of(std::string_view reference) {
  auto analysis = testing::python().analyze_reference(reference);
  if (!analysis || !analysis->run) {
    ADD_FAILURE() << "no run signature for: " << reference;
    return {};
  }
  return *analysis->run;
}

TEST(DefinitionPython, Item08ArityMismatchPassesTheSchemaButNotFibsArityCheck) {
  FIB_REQUIRE_PYTHON();
  const std::string text = with_reference("def run(A, B):\n    B.copy_(A)\n");
  // The old tool's schema accepts it, and so does the arity-free Python check.
  const Checked old_tool = check(text, ArityCheck::no);
  EXPECT_FALSE(old_tool.schema.has_errors()) << describe(old_tool.schema);
  EXPECT_TRUE(old_tool.python.items().empty()) << describe(old_tool.python);
  EXPECT_EQ(old_tool.definition.const_axes(), (std::map<std::string, std::int64_t>{{"N", 16}}));
  EXPECT_EQ(old_tool.definition.var_axes(), std::vector<std::string>{"M"});
  // fib's own check: run needs two positional arguments, the definition has one input.
  const Checked fib_check = check(text, ArityCheck::yes);
  EXPECT_EQ(
      testing::code_pointers(fib_check.python),
      (std::vector<std::pair<std::string, std::string>>{{"definition.run.arity", "/reference"}}))
      << describe(fib_check.python);
  ASSERT_EQ(fib_check.python.items().size(), 1u);
  EXPECT_EQ(fib_check.python.items()[0].severity, Severity::error);
  EXPECT_NE(fib_check.python.items()[0].message.find("run(A, B)"), std::string::npos)
      << fib_check.python.items()[0].message;
}

TEST(DefinitionPython, ArityAcceptsDefaultsAndVarargs) {
  FIB_REQUIRE_PYTHON();
  for (const std::string_view reference :
       {"def run(A, B=None):\n    return A\n", "def run(*args):\n    return args[0]\n",
        "def run(A, *, scale=1.0):\n    return A\n", "def run(A, /):\n    return A\n"}) {
    const Checked c = check(with_reference(reference));
    EXPECT_TRUE(c.python.items().empty()) << reference << "\n" << describe(c.python);
    EXPECT_TRUE(signature_of(reference).accepts_positional(1)) << reference;
    EXPECT_FALSE(signature_of(reference).accepts_positional(0) &&
                 signature_of(reference).positional_required > 0)
        << reference;
  }
  EXPECT_EQ(signature_of("def run(A, B=None):\n    return A\n").positional_required, 1);
  EXPECT_TRUE(signature_of("def run(*args):\n    return args[0]\n").has_var_positional);
}

TEST(DefinitionPython, ArityRejectsTooFewParametersAndRequiredKeywordOnly) {
  FIB_REQUIRE_PYTHON();
  for (const std::string_view reference :
       {"def run():\n    return 0\n", "def run(A, *, scale):\n    return A\n"}) {
    const Checked c = check(with_reference(reference));
    EXPECT_TRUE(has(c.python, codes::k_run_arity, "/reference")) << reference << "\n"
                                                                 << describe(c.python);
  }
}

TEST(DefinitionPython, ArityUsesTheLastTopLevelRun) {
  FIB_REQUIRE_PYTHON();
  const Checked c =
      check(with_reference("def run(A, B):\n    pass\n\ndef run(A):\n    return A\n"));
  EXPECT_TRUE(c.python.items().empty()) << describe(c.python);
  const RunSignature run = signature_of("def run(A, B):\n    pass\n\ndef run(A):\n    return A\n");
  EXPECT_EQ(run.line, 4);
  EXPECT_EQ(run.positional_names, std::vector<std::string>{"A"});
}

TEST(DefinitionPython, Item10ReferenceWithoutRunIsRejected) {
  FIB_REQUIRE_PYTHON();
  const Checked c = check(with_reference("def not_run(A):\n    return A\n"));
  EXPECT_FALSE(c.schema.has_errors()) << describe(c.schema);
  EXPECT_EQ(testing::code_pointers(c.python), (std::vector<std::pair<std::string, std::string>>{
                                                  {"definition.reference.no-run", "/reference"}}))
      << describe(c.python);
  ASSERT_EQ(c.python.items().size(), 1u);
  EXPECT_EQ(c.python.items()[0].message, "Reference must define a top-level function named 'run'");
}

TEST(DefinitionPython, RunThatIsNotAPlainTopLevelDefDoesNotCount) {
  FIB_REQUIRE_PYTHON();
  for (const std::string_view reference : {
           "async def run(A):\n    return A\n",
           "if True:\n    def run(A):\n        return A\n",
           "try:\n    def run(A):\n        return A\nexcept Exception:\n    pass\n",
           "def outer():\n    def run(A):\n        return A\n    return run\n",
           "run = lambda A: A\n",
           "class run:\n    def __init__(self, A):\n        self.A = A\n",
           "def _rmsnorm_reference(A):\n    return A\n",
       }) {
    const Checked c = check(with_reference(reference));
    EXPECT_EQ(testing::code_pointers(c.python), (std::vector<std::pair<std::string, std::string>>{
                                                    {"definition.reference.no-run", "/reference"}}))
        << reference << "\n"
        << describe(c.python);
  }
}

TEST(DefinitionPython, DecoratedRunCounts) {
  FIB_REQUIRE_PYTHON();
  const Checked c = check(
      with_reference("import functools\n\n@functools.lru_cache\ndef run(A):\n    return A\n"));
  EXPECT_TRUE(c.python.items().empty()) << describe(c.python);
  EXPECT_EQ(signature_of("import functools\n\n@functools.lru_cache\ndef run(A):\n    return A\n")
                .positional_names,
            std::vector<std::string>{"A"});
}

TEST(DefinitionPython, Item11SyntaxErrorIsRejected) {
  FIB_REQUIRE_PYTHON();
  const Checked c = check(with_reference("def run(:"));
  EXPECT_FALSE(c.schema.has_errors()) << describe(c.schema);
  EXPECT_EQ(testing::code_pointers(c.python), (std::vector<std::pair<std::string, std::string>>{
                                                  {"definition.reference.syntax", "/reference"}}))
      << describe(c.python);
  ASSERT_EQ(c.python.items().size(), 1u);
  const Diagnostic& d = c.python.items()[0];
  EXPECT_EQ(d.message.rfind("Reference must be valid Python code: ", 0), 0u) << d.message;
  EXPECT_NE(d.message.find("line 1"), std::string::npos) << d.message;
}

TEST(DefinitionPython, SyntaxErrorHintHasLineAndColumn) {
  FIB_REQUIRE_PYTHON();
  const Checked c = check(with_reference("import torch\n\ndef run(A:\n    return A\n"));
  ASSERT_TRUE(has(c.python, codes::k_reference_syntax, "/reference")) << describe(c.python);
  const Diagnostic& d = c.python.items()[0];
  EXPECT_NE(d.hint.find("line 3"), std::string::npos) << d.hint;
  EXPECT_NE(d.hint.find("column 8"), std::string::npos) << d.hint;
  EXPECT_NE(d.hint.find("def run(A:"), std::string::npos) << d.hint;
}

TEST(DefinitionPython, SyntaxErrorReportsNoArityOrNoRun) {
  FIB_REQUIRE_PYTHON();
  const Checked c = check(with_reference("def run(A, B):\n  return (\n"));
  EXPECT_EQ(testing::code_pointers(c.python), (std::vector<std::pair<std::string, std::string>>{
                                                  {"definition.reference.syntax", "/reference"}}))
      << describe(c.python);
}

TEST(DefinitionPython, NullByteInReferenceIsASyntaxError) {
  FIB_REQUIRE_PYTHON();
  const Checked c = check(with_reference(std::string("def run(A):\n    return A\n\0", 26)));
  EXPECT_TRUE(has(c.python, codes::k_reference_syntax, "/reference")) << describe(c.python);
}

TEST(DefinitionPython, Item12ValidConstraintsPass) {
  FIB_REQUIRE_PYTHON();
  const Checked c = check(with_constraints(R"(["M > 0", "M <= 4096"])"));
  EXPECT_FALSE(c.schema.has_errors()) << describe(c.schema);
  EXPECT_TRUE(c.python.items().empty()) << describe(c.python);
  EXPECT_EQ(c.definition.constraints, (std::vector<std::string>{"M > 0", "M <= 4096"}));
}

TEST(DefinitionPython, Item15InvalidConstraintIsRejected) {
  FIB_REQUIRE_PYTHON();
  const Checked c = check(with_constraints(R"(["M >"])"));
  EXPECT_EQ(testing::code_pointers(c.python),
            (std::vector<std::pair<std::string, std::string>>{
                {"definition.constraint.syntax", "/constraints/0"}}))
      << describe(c.python);
  ASSERT_EQ(c.python.items().size(), 1u);
  EXPECT_EQ(c.python.items()[0].message.rfind("Constraints must be valid Python expressions: ", 0),
            0u)
      << c.python.items()[0].message;
}

TEST(DefinitionPython, EachBadConstraintIsReportedAtItsIndex) {
  FIB_REQUIRE_PYTHON();
  const Checked c = check(with_constraints(
      R"json(["M > 0", "x = 1", "foo(bar) > baz", "head_dim in (64, 128)",
          "kv_scale_groups * 16 == head_dim when kv_scale_factors is present", "M %% 2 == 0"])json"));
  EXPECT_EQ(testing::code_pointers(c.python),
            (std::vector<std::pair<std::string, std::string>>{
                {"definition.constraint.syntax", "/constraints/1"},
                {"definition.constraint.syntax", "/constraints/4"},
                {"definition.constraint.syntax", "/constraints/5"}}))
      << describe(c.python);
  for (const Diagnostic& d : c.python.items()) {
    EXPECT_NE(d.hint.find("line 1"), std::string::npos) << d.hint;
  }
}

TEST(DefinitionPython, EmptyConstraintIsLeftToTheSchema) {
  FIB_REQUIRE_PYTHON();
  const Checked c = check(with_constraints(R"([""])"));
  EXPECT_TRUE(has(c.schema, codes::k_schema_empty, "/constraints/0")) << describe(c.schema);
  EXPECT_TRUE(c.python.items().empty()) << describe(c.python);
}

TEST(DefinitionPython, RuntimeReportsRunSignature) {
  FIB_REQUIRE_PYTHON();
  auto analysis = testing::python().analyze_reference(
      "import math\n\ndef run(a, b, c=1, *rest, k=2):\n  pass\n");
  ASSERT_TRUE(analysis.has_value()) << analysis.error().message;
  ASSERT_FALSE(analysis->syntax_error.has_value());
  ASSERT_TRUE(analysis->run.has_value());
  const RunSignature& run = *analysis->run;
  EXPECT_EQ(run.positional_total, 3);
  EXPECT_EQ(run.positional_required, 2);
  EXPECT_TRUE(run.has_var_positional);
  EXPECT_EQ(run.keyword_only_required, 0);
  EXPECT_EQ(run.line, 3);
  EXPECT_EQ(run.positional_names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_FALSE(run.accepts_positional(1));
  EXPECT_TRUE(run.accepts_positional(2));
  EXPECT_TRUE(run.accepts_positional(7));
}

// When the helper itself raises, each entry point reports `python.exception` (not a syntax error,
// not a crash) and the runtime stays usable. fib's JSON reader only hands it valid UTF-8, so the
// failure is provoked here with bytes that are not (in the field: a broken module on PYTHONPATH
// shadowing one the helper imports).
TEST(DefinitionPython, RuntimeReportsAFailingHelperAsPythonException) {
  FIB_REQUIRE_PYTHON();
  const std::string not_utf8 = "def run(A):\n    return '\xff'\n";
  auto reference = testing::python().analyze_reference(not_utf8);
  ASSERT_FALSE(reference.has_value());
  EXPECT_EQ(reference.error().code, codes::k_python_exception);
  EXPECT_NE(reference.error().message.find("the embedded Python check failed"), std::string::npos)
      << reference.error().message;
  auto expression = testing::python().check_expression("'\xff'");
  ASSERT_FALSE(expression.has_value());
  EXPECT_EQ(expression.error().code, codes::k_python_exception);
  auto structure = testing::python().analyze_structure(not_utf8);
  ASSERT_FALSE(structure.has_value());
  EXPECT_EQ(structure.error().code, codes::k_python_exception);
  // Still usable afterwards.
  auto again = testing::python().analyze_reference("def run(A):\n    return A\n");
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_TRUE(again->run.has_value());
}

// The helper's code object compiled at build time is what the interpreter runs, and an
// optimising interpreter (PYTHONOPTIMIZE, for which that code was not compiled) compiles the
// source instead and answers the same. The second half runs in a child process of this test
// binary, started with PYTHONOPTIMIZE=1 (an interpreter's flags are set when it starts).
void expect_run_signature_of_a_and_b() {
  auto analysis = testing::python().analyze_reference("def run(a, b=1):\n  pass\n");
  ASSERT_TRUE(analysis.has_value()) << analysis.error().message;
  ASSERT_TRUE(analysis->run.has_value());
  EXPECT_EQ(analysis->run->positional_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(analysis->run->positional_required, 1);
}

TEST(DefinitionPython, TheHelperIsLoadedPrecompiledUnlessThePythonIsOptimising) {
  FIB_REQUIRE_PYTHON();
  const char* optimise = std::getenv("PYTHONOPTIMIZE");
  const bool in_child = optimise != nullptr && std::string_view(optimise) == "1";
  expect_run_signature_of_a_and_b();
  if (in_child) {
    EXPECT_EQ(testing::python().helper_load(), python::HelperLoad::from_source);
    return;
  }
  if (optimise != nullptr && *optimise != '\0') {
    GTEST_SKIP() << "PYTHONOPTIMIZE is set for the whole test run";
  }
  EXPECT_EQ(testing::python().helper_load(), python::HelperLoad::precompiled);
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command =
      "PYTHONOPTIMIZE=1 '" + self +
      "' --gtest_filter=DefinitionPython.TheHelperIsLoadedPrecompiledUnlessThePythonIsOptimising"
      " >/dev/null 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << "the child (an optimising Python) failed";
}

// --- validate_definition_document: schema + Python + lint in one pass ---

TEST(ValidateDefinitionDocument, CombinesSchemaPythonAndLint) {
  FIB_REQUIRE_PYTHON();
  Json root = Json::parse(k_minimal);
  root["reference"] = "def run(A, B):\n    return A\n";
  root["constraints"] = Json::parse(R"(["M >"])");
  root["tags"] = Json::parse(R"(["bogus tag"])");
  root["inputs"]["idx"] = Json::parse(R"({"shape": ["M"], "dtype": "unknown"})");
  const JsonDocument document = testing::parse_or_die(root.dump(2), "def.json");
  DiagnosticList sink;
  const auto failure = validate_definition_document(document, testing::python(), sink);
  ASSERT_FALSE(failure.has_value()) << failure->message;
  EXPECT_TRUE(has(sink, codes::k_dtype_invalid, "/inputs/idx/dtype")) << describe(sink);
  // Two inputs now (A, idx): run(A, B) binds, so no arity error.
  EXPECT_FALSE(sink.contains(codes::k_run_arity)) << describe(sink);
  EXPECT_TRUE(has(sink, codes::k_constraint_syntax, "/constraints/0")) << describe(sink);
  EXPECT_TRUE(has(sink, codes::k_tag_format, "/tags/0")) << describe(sink);
  EXPECT_TRUE(has(sink, codes::k_description_missing, "/description")) << describe(sink);
  EXPECT_EQ(testing::error_codes(sink),
            (std::vector<std::string>{"definition.dtype.invalid", "definition.constraint.syntax"}))
      << describe(sink);
}

TEST(ValidateDefinitionDocument, ReportsArityByDefault) {
  FIB_REQUIRE_PYTHON();
  const JsonDocument document =
      testing::parse_or_die(with_reference("def run(A, B):\n    return A\n"), "def.json");
  DiagnosticList sink;
  const auto failure = validate_definition_document(document, testing::python(), sink);
  ASSERT_FALSE(failure.has_value()) << failure->message;
  EXPECT_TRUE(has(sink, codes::k_run_arity, "/reference")) << describe(sink);
  EXPECT_EQ(testing::error_codes(sink), std::vector<std::string>{"definition.run.arity"})
      << describe(sink);
}

TEST(ValidateDefinitionDocument, WithoutPythonReturnsTheUnavailableDiagnostic) {
  const JsonDocument document =
      testing::parse_or_die(with_reference("def not_run(A):\n    return A\n"), "def.json");
  DiagnosticList sink;
  NoPython no_python;
  const auto failure = validate_definition_document(document, no_python, sink);
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->code, codes::k_python_unavailable);
  EXPECT_FALSE(sink.contains(codes::k_reference_no_run)) << describe(sink);
  // The non-Python checks still ran.
  EXPECT_TRUE(has(sink, codes::k_description_missing, "/description")) << describe(sink);
  EXPECT_FALSE(sink.has_errors()) << describe(sink);
}

TEST(ValidateDefinitionDocument, NonObjectDocumentStopsAfterTheSchema) {
  const JsonDocument document = testing::parse_or_die(R"("just a string")", "def.json");
  DiagnosticList sink;
  const auto failure = validate_definition_document(document, testing::python(), sink);
  EXPECT_FALSE(failure.has_value());
  EXPECT_EQ(testing::code_pointers(sink),
            (std::vector<std::pair<std::string, std::string>>{{"schema.type", ""}}))
      << describe(sink);
}

} // namespace
} // namespace fib
