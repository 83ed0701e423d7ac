// The rules table drives normalize_definition: every row has its apply (or names who applies it),
// findings come in table order, the docs table is current; and the decisions file's strict parser.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/normalize/normalize.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace fib {
namespace {

using testing::parse_or_die;
using testing::python;

std::ptrdiff_t index_of(const NormalizeRule* rule) {
  const auto rules = all_normalize_rules();
  return rule == nullptr ? -1 : rule - rules.data();
}

// A definition that triggers every rule the engine applies except N16 (it has a reference). Its
// inputs are ordered so that the one-pass rules interleave: `a` (N7) comes before `kv_indptr`
// (A3b-2), and `table` (an N11 question) before `packed` (N10).
Json kitchen_sink() {
  return Json::parse(R"({
    "name": "Kitchen_SINK_h64",
    "description": "many rules at once",
    "op_type": "misc",
    "tags": ["status:verified"],
    "axes": {"batch_size": {"type": "var"}, "hidden_size": {"type": "const", "value": 64},
             "page_size": {"type": "const"}, "num_qo_heads": {"type": "const", "value": 6},
             "num_kv_heads": {"type": "const", "value": 4}, "packed_k": {"type": "var"}},
    "constraints": ["packed_k == hidden_size // 2"],
    "inputs": {
      "a": {"shape": ["batch_size"], "dtype": "unknown"},
      "kv_indptr": {"shape": ["batch_size"], "dtype": "unknown"},
      "cache": {"shape": ["batch_size", "page_size"], "dtype": "unknown"},
      "positions": {"shape": ["batch_size"], "dtype": "unknown"},
      "bias": {"shape": ["hidden_size"], "dtype": "unknown", "optional": true},
      "layout": {"shape": null, "dtype": "string", "optional": true},
      "table": {"shape": ["batch_size"], "dtype": "uint32"},
      "packed": {"shape": ["batch_size", "hidden_size_div_2"], "dtype": "uint8",
                 "description": "fp4 e2m1 packed data"},
      "eps": {"shape": null, "dtype": "float64"},
      "flag": {"shape": null, "dtype": "int32", "description": "whether to do it"},
      "x": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"},
      "seq_lens": {"shape": ["batch_size"], "dtype": "uint32"}
    },
    "outputs": {
      "out": {"shape": ["batch_size", "packed_k"], "dtype": "bfloat16",
              "description": "fp8 quantized output"},
      "cache": {"shape": ["batch_size", "page_size"], "dtype": "bfloat16"},
      "s": {"shape": null, "dtype": "float32"}
    },
    "reference": "\"\"\"Kitchen sink.\"\"\"\n\ndef _ref(a, kv_indptr, cache, positions, bias, layout, table, packed, flag, x, seq_lens):\n    y = helper(x)\n    return torch.zeros(1), cache, math.sqrt(2.0)\n",
    "check": "import flashinfer\n"
  })");
}

std::vector<RuleFinding> findings_of(const Json& definition, const NormalizeOptions& options) {
  auto result = normalize_definition(parse_or_die(definition.dump()), options, python());
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message);
  return result ? result->findings : std::vector<RuleFinding>{};
}

std::string describe(const std::vector<RuleFinding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    out += f.diagnostic.code + " " + f.diagnostic.pointer + "\n";
  }
  return out;
}

TEST(NormalizeRules, EveryRowHasItsApplyOrNamesWhoAppliesIt) {
  const auto rules = all_normalize_rules();
  std::set<void (*)(NormalizeContext&)> applies;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const NormalizeRule& rule = rules[i];
    if (rule.apply != nullptr) {
      EXPECT_TRUE(rule.applied_by.empty()) << rule.id;
      EXPECT_TRUE(applies.insert(rule.apply).second) << rule.id << " shares another row's apply";
      EXPECT_EQ(applying_rule(rule), &rule);
      continue;
    }
    if (rule.applied_by == k_applied_when_written || rule.applied_by == k_applied_by_stage) {
      EXPECT_EQ(applying_rule(rule), nullptr) << rule.id;
      continue;
    }
    // Applied by an earlier row's pass: every row in between belongs to the same pass, so the
    // pass's findings still sit between the rows before and after it.
    const NormalizeRule* by = applying_rule(rule);
    ASSERT_NE(by, nullptr) << rule.id << " names '" << rule.applied_by << "'";
    EXPECT_EQ(by->id, rule.applied_by);
    ASSERT_LT(index_of(by), static_cast<std::ptrdiff_t>(i)) << rule.id;
    for (auto j = static_cast<std::size_t>(index_of(by)) + 1; j < i; ++j) {
      EXPECT_EQ(applying_rule(rules[j]), by) << rules[j].id << " splits the pass of " << by->id;
    }
  }
  EXPECT_EQ(find_normalize_rule("N0")->applied_by, k_applied_when_written);
  EXPECT_EQ(find_normalize_rule("N20")->applied_by, k_applied_by_stage);
  EXPECT_EQ(find_normalize_rule("N7")->applied_by, "A3b-2");
  EXPECT_EQ(find_normalize_rule("N11")->applied_by, "N10");
}

TEST(NormalizeRules, FindingsComeInTableOrder) {
  NormalizeDecisions decisions;
  decisions.definitions["Kitchen_SINK_h64"].axis_values["no_such_axis"] = 3;
  NormalizeOptions options;
  options.decisions = &decisions;
  // N22 inlines `_outer` from the fixture package; N3 still asks about `helper`.
  options.flashinfer_source =
      std::filesystem::path(FIB_SOURCE_DIR) / "tests" / "fakes" / "helper_source";
  Json sink = kitchen_sink();
  std::string reference = sink["reference"].get<std::string>();
  reference.replace(reference.find("y = helper(x)"), 13, "y = helper(x) + _outer(x)");
  sink["reference"] = reference;
  const auto findings = findings_of(sink, options);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().diagnostic.code, codes::k_normalize_decision)
      << "the decisions file's findings come first\n"
      << describe(findings);
  // The applying rule of each finding, in order: never going back in the table.
  std::vector<const NormalizeRule*> passes;
  std::set<std::string_view> fired;
  std::ptrdiff_t last = -1;
  for (const auto& finding : findings) {
    if (finding.diagnostic.code == codes::k_normalize_decision) {
      EXPECT_EQ(last, -1) << "a decision finding after a rule's\n" << describe(findings);
      continue;
    }
    const NormalizeRule* rule = rule_of_code(finding.diagnostic.code);
    ASSERT_NE(rule, nullptr) << finding.diagnostic.code;
    fired.insert(rule->id);
    const NormalizeRule* pass = applying_rule(*rule);
    ASSERT_NE(pass, nullptr) << rule->id;
    EXPECT_GE(index_of(pass), last) << rule->id << " after a later rule\n" << describe(findings);
    if (index_of(pass) != last) {
      passes.push_back(pass);
    }
    last = index_of(pass);
  }
  // Every row with an apply but N16 fired, in table order: the engine's apply list is the table.
  // R1, R2 and R3 need a Level-10 dump (--evidence): normalize_evidence_test.cpp checks them.
  std::vector<const NormalizeRule*> expected;
  for (const auto& rule : all_normalize_rules()) {
    if (rule.apply != nullptr && rule.id != "N16" && rule.id != "R1" && rule.id != "R2" &&
        rule.id != "R3") {
      expected.push_back(&rule);
    }
  }
  EXPECT_EQ(passes, expected) << describe(findings);
  for (const std::string_view id : {"A3b-2", "N4", "N5", "N6", "N7", "N10", "N11"}) {
    EXPECT_TRUE(fired.contains(id)) << id << " did not fire\n" << describe(findings);
  }
  // Inside a pass the findings follow the inputs: N7 (a) before A3b-2 (kv_indptr), N11 (table)
  // before N10 (packed).
  const auto position = [&](std::string_view code, std::string_view pointer) {
    return std::find_if(findings.begin(), findings.end(), [&](const auto& f) {
      return f.diagnostic.code == code && f.diagnostic.pointer == pointer;
    });
  };
  EXPECT_LT(position(codes::k_normalize_n7, "/inputs/a/dtype"),
            position(codes::k_normalize_a3b_2, "/inputs/kv_indptr/dtype"));
  EXPECT_LT(position(codes::k_normalize_n11, "/inputs/table/dtype"),
            position(codes::k_normalize_n10, "/inputs/packed/dtype"));
}

TEST(NormalizeRules, WithoutAReferenceN16ComesFirst) {
  Json definition = kitchen_sink();
  definition.erase("reference");
  const auto findings = findings_of(definition, {});
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().diagnostic.code, codes::k_normalize_n16) << describe(findings);
  EXPECT_EQ(findings.front().diagnostic.pointer, "/reference");
}

TEST(NormalizeRules, IdsLookUpWithPrimesAndAnyCase) {
  ASSERT_NE(find_normalize_rule("A3b-1\u2032"), nullptr);
  EXPECT_EQ(find_normalize_rule("a3b-1'")->id, "A3b-1");
  EXPECT_EQ(find_normalize_rule("n5")->level, RuleLevel::heuristic);
  EXPECT_EQ(find_normalize_rule("N99"), nullptr);
  for (const auto& rule : all_normalize_rules()) {
    const CodeInfo* info = find_code(rule.code);
    ASSERT_NE(info, nullptr) << rule.code;
    EXPECT_EQ(rule_of_code(rule.code), &rule);
    EXPECT_EQ(info->severity,
              rule.level == RuleLevel::mechanical ? Severity::note : Severity::warning)
        << rule.id;
  }
}

TEST(NormalizeRules, DocsTableIsCurrent) {
  const std::filesystem::path doc = std::filesystem::path(FIB_SOURCE_DIR) / "docs" / "normalize.md";
  std::ifstream in(doc, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const std::string begin = "<!-- rules:begin -->\n";
  const std::string end = "<!-- rules:end -->";
  const std::size_t from = text.find(begin);
  const std::size_t to = text.find(end);
  ASSERT_NE(from, std::string::npos) << "docs/normalize.md lacks the rules:begin marker";
  ASSERT_NE(to, std::string::npos) << "docs/normalize.md lacks the rules:end marker";
  const std::string expected =
      text.substr(0, from + begin.size()) + render_normalize_rules_markdown() + text.substr(to);
  if (const char* update = std::getenv("FIB_UPDATE_DOCS"); update != nullptr && *update == '1') {
    std::ofstream(doc, std::ios::binary) << expected;
    return;
  }
  EXPECT_EQ(text, expected) << "the rules table in docs/normalize.md is stale: run "
                               "`FIB_UPDATE_DOCS=1 build/tests/fib_unit_tests "
                               "--gtest_filter=NormalizeRules.DocsTableIsCurrent`";
}

TEST(NormalizeRules, DecisionsFileIsParsedStrictly) {
  DiagnosticList sink;
  const auto good = parse_normalize_decisions(
      parse_or_die(R"({"definitions": {"x": {"input_dtypes": {"a": "int32"},
                        "drop_inputs": ["w"], "axis_values": {"p": 16}, "name": "y"}}})"),
      sink);
  ASSERT_TRUE(good.has_value()) << testing::describe(sink);
  EXPECT_EQ(good->definitions.at("x").input_dtypes.at("a"), "int32");
  EXPECT_EQ(good->definitions.at("x").axis_values.at("p"), 16);
  EXPECT_EQ(*good->definitions.at("x").name, "y");

  DiagnosticList bad_sink;
  const auto bad = parse_normalize_decisions(
      parse_or_die(R"({"definitions": {"x": {"input_dtype": {}, "output_dtypes": {"o": "uint8"},
                        "axis_values": {"p": -1}}}, "extra": 1})"),
      bad_sink);
  EXPECT_FALSE(bad.has_value());
  EXPECT_TRUE(
      testing::has(bad_sink, codes::k_normalize_decisions_invalid, "/definitions/x/input_dtype"));
  EXPECT_TRUE(testing::has(bad_sink, codes::k_normalize_decisions_invalid,
                           "/definitions/x/output_dtypes/o"));
  EXPECT_TRUE(
      testing::has(bad_sink, codes::k_normalize_decisions_invalid, "/definitions/x/axis_values/p"));
  EXPECT_TRUE(testing::has(bad_sink, codes::k_normalize_decisions_invalid, "/extra"));
}

} // namespace
} // namespace fib
