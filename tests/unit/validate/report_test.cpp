// The dataset report: statuses, the old tool's text and JSON layouts (with fib's codes), reading
// reports with and without codes, merging, and counting findings.

#include "dataset_fixture.hpp"

namespace fib {
namespace {

using namespace dataset_testing;

// --- Report rendering ----------------------------------------------------------------------------

// A category result of (code, text) messages, each at the default level of its code.
CheckResult result(std::vector<std::pair<std::string_view, std::string>> items) {
  CheckResult r;
  for (auto& [code, text] : items) {
    r.add(code, std::move(text));
  }
  return r;
}

// The illustrative example of the old tool's text report.
DatasetReport example_report() {
  DatasetReport report;
  report.config.dataset = "/data/fit";
  report.config.checks = {"layout", "definition", "workload", "solution", "trace", "baseline"};
  report.config.disable_gpu = true;
  DefinitionReport gemm;
  gemm[Category::layout] = result({});
  gemm[Category::definition] =
      result({{codes::k_description_missing, "missing description: axes.M"}});
  gemm[Category::workload] =
      result({{codes::k_dataset_workload_valid_count, "2/3 valid"},
              {codes::k_dataset_workload_extra_axes, "w3: extra axes ['N']"}});
  gemm[Category::solution] = result({{codes::k_dataset_solution_none, "no solutions"}});
  gemm[Category::trace] = result({{codes::k_dataset_trace_none, "no trace files"}});
  gemm[Category::baseline] = result({{codes::k_dataset_baseline_none, "no baseline solution"}});
  gemm.update_status();
  DefinitionReport rms;
  rms[Category::layout] = result({});
  rms[Category::definition] = result({});
  rms[Category::workload] = result({{codes::k_dataset_workload_valid_count, "2 valid"}});
  rms[Category::solution] = result({{codes::k_dataset_solution_count, "1 solutions"}});
  rms[Category::trace] = result({});
  rms[Category::baseline] =
      result({{codes::k_dataset_baseline_solutions, "solution: fi_rmsnorm"},
              {codes::k_dataset_baseline_trace_passed, "trace: all passed"},
              {codes::k_dataset_baseline_trace_covered, "trace: 2/2 workloads"}});
  rms.update_status();
  report.definitions.emplace("rmsnorm_h128", std::move(rms));
  report.definitions.emplace("gemm_n64_k64", std::move(gemm));
  return report;
}

TEST(DatasetReportRender, StatusIsWorstCategory) {
  const DatasetReport report = example_report();
  EXPECT_EQ(report.definitions.at("gemm_n64_k64").status, CheckStatus::error);
  EXPECT_EQ(report.definitions.at("rmsnorm_h128").status, CheckStatus::ok);
  const StatusCounts counts = count_statuses(report);
  EXPECT_EQ(counts.ok, 1u);
  EXPECT_EQ(counts.warning, 0u);
  EXPECT_EQ(counts.error, 1u);
  // Info never affects a status.
  EXPECT_EQ(result({{codes::k_dataset_solution_none, "x"}}).status, CheckStatus::ok);
  CheckResult front = result({{codes::k_dataset_baseline_none, "w"}});
  front.add_front(codes::k_dataset_workload_valid_count, "first");
  EXPECT_EQ(messages_of(front), (Messages{I(codes::k_dataset_workload_valid_count, "first"),
                                          W(codes::k_dataset_baseline_none, "w")}));
  EXPECT_EQ(front.status, CheckStatus::warning);
  // An explicit level wins over the code's default (a diagnostic passed through).
  CheckResult explicit_level;
  explicit_level.add(CheckLevel::error, codes::k_axis_unused, "e");
  EXPECT_EQ(explicit_level.status, CheckStatus::error);
}

TEST(DatasetReportRender, TextMatchesContractExample) {
  const std::string expected = R"(=== Dataset Validation Report ===
dataset:       /data/fit
checks:        layout, definition, workload, solution, trace, baseline
disable_gpu:   True
op_types:      (all)
definitions:   (all)

2 definitions: 1 ok, 0 warning, 1 error

--- gemm_n64_k64 [ERROR] ---
  layout:      ok
  definition:  warning
    - missing description: axes.M
  workload:    error
    - 2/3 valid
    - w3: extra axes ['N']
  solution:    ok
    - no solutions
  trace:       ok
    - no trace files
  baseline:    warning
    - no baseline solution
  benchmark:   None (skipped)

--- rmsnorm_h128 [OK] ---
  layout:      ok
  definition:  ok
  workload:    ok
    - 2 valid
  solution:    ok
    - 1 solutions
  trace:       ok
  baseline:    ok
    - solution: fi_rmsnorm
    - trace: all passed
    - trace: 2/2 workloads
  benchmark:   None (skipped)
)";
  const std::string text = render_report_text(example_report());
  EXPECT_EQ(text, expected);
  // Lines joined with "\n", the last one empty: exactly one trailing newline.
  EXPECT_TRUE(text.ends_with("skipped)\n"));
  EXPECT_FALSE(text.ends_with("\n\n"));
}

TEST(DatasetReportRender, TextHeaderFiltersFalseGpuAndMultilineMessages) {
  DatasetReport report;
  report.config.dataset = "ds";
  report.config.checks = {"layout"};
  report.config.disable_gpu = false;
  report.config.op_types = {"gemm", "rmsnorm"};
  report.config.definitions = {"x"};
  DefinitionReport x;
  x[Category::layout] =
      result({{codes::k_json_parse, "parse error: 1 validation error\n  detail"}});
  x.update_status();
  report.definitions.emplace("x", std::move(x));
  const std::string expected = "=== Dataset Validation Report ===\n"
                               "dataset:       ds\n"
                               "checks:        layout\n"
                               "disable_gpu:   False\n"
                               "op_types:      gemm, rmsnorm\n"
                               "definitions:   x\n"
                               "\n"
                               "1 definitions: 0 ok, 0 warning, 1 error\n"
                               "\n"
                               "--- x [ERROR] ---\n"
                               "  layout:      error\n"
                               "    - parse error: 1 validation error\n  detail\n"
                               "  definition:  None (skipped)\n"
                               "  workload:    None (skipped)\n"
                               "  solution:    None (skipped)\n"
                               "  trace:       None (skipped)\n"
                               "  baseline:    None (skipped)\n"
                               "  benchmark:   None (skipped)\n";
  EXPECT_EQ(render_report_text(report), expected);
}

TEST(DatasetReportRender, TextPrintsFibDatasetSectionAfterDefinitions) {
  DatasetReport report;
  report.config.dataset = "ds";
  report.dataset = result({{codes::k_dataset_orphan, "a: orphan"}});
  const std::string text = render_report_text(report);
  EXPECT_TRUE(text.ends_with("    - a: orphan\n")) << text;
  EXPECT_FALSE(text.ends_with("\n\n")) << text;
  EXPECT_TRUE(contains(text, "0 definitions: 0 ok, 0 warning, 0 error\n\n--- dataset")) << text;
  // An empty section prints nothing.
  report.dataset = CheckResult{};
  EXPECT_FALSE(contains(render_report_text(report), "--- dataset"));
}

// Python's json.dumps(indent=2, ensure_ascii=False) of the report model, no trailing newline,
// with fib's "code" after each message.
TEST(DatasetReportRender, JsonFieldOrderNullsAndNoTrailingNewline) {
  DatasetReport report;
  report.config.dataset = "/data/fit";
  report.config.checks = {"layout", "workload"};
  report.config.disable_gpu = true;
  report.config.op_types = {"gemm"};
  DefinitionReport g;
  g[Category::layout] = result({});
  g[Category::workload] = result({{codes::k_dataset_workload_valid_count, "1/2 valid"}});
  // A message without a code (read from an old report) has no "code" key.
  g[Category::workload]->add(CheckLevel::error, "", "w2: café\nline \"2\"");
  g.update_status();
  report.definitions.emplace("g", std::move(g));
  const std::string expected = R"({
  "config": {
    "dataset": "/data/fit",
    "checks": [
      "layout",
      "workload"
    ],
    "disable_gpu": true,
    "op_types": [
      "gemm"
    ],
    "definitions": []
  },
  "definitions": {
    "g": {
      "status": "error",
      "layout": {
        "status": "ok",
        "messages": []
      },
      "definition": null,
      "workload": {
        "status": "error",
        "messages": [
          {
            "level": "info",
            "message": "1/2 valid",
            "code": "dataset.workload.valid-count"
          },
          {
            "level": "error",
            "message": "w2: café\nline \"2\""
          }
        ]
      },
      "solution": null,
      "trace": null,
      "baseline": null,
      "benchmark": null
    }
  }
})";
  EXPECT_EQ(render_report_json(report), expected);
}

// The report JSON as a tree dumped by nlohmann (how fib wrote it before the direct writer).
Json tree_of(const CheckResult& result) {
  Json out = Json::object();
  out["status"] = std::string(to_string(result.status));
  Json messages = Json::array();
  for (const CheckMessage& m : result.messages) {
    Json item = Json::object();
    item["level"] = std::string(to_string(m.level));
    item["message"] = m.message;
    if (!m.code.empty()) {
      item["code"] = std::string(m.code);
    }
    messages.push_back(std::move(item));
  }
  out["messages"] = std::move(messages);
  return out;
}

std::string dumped_tree(const DatasetReport& report) {
  Json out = Json::object();
  out["config"] = Json{{"dataset", report.config.dataset},
                       {"checks", report.config.checks},
                       {"disable_gpu", report.config.disable_gpu},
                       {"op_types", report.config.op_types},
                       {"definitions", report.config.definitions}};
  Json definitions = Json::object();
  for (const auto& [name, definition] : report.definitions) {
    Json entry = Json::object();
    entry["status"] = std::string(to_string(definition.status));
    for (const Category category : k_category_order) {
      const auto& result = definition[category];
      entry[std::string(to_string(category))] = result ? tree_of(*result) : Json(nullptr);
    }
    definitions[name] = std::move(entry);
  }
  out["definitions"] = std::move(definitions);
  if (report.dataset && !report.dataset->messages.empty()) {
    out["fib_dataset"] = tree_of(*report.dataset);
  }
  return out.dump(2, ' ', false, Json::error_handler_t::replace);
}

// The direct writer gives nlohmann's bytes for text that needs escapes or is not UTF-8: quotes,
// backslashes, control bytes, DEL, non-ASCII, truncated and overlong sequences, surrogates.
// Bytes 0x01 to 0x1f, and DEL, between letters.
std::string every_control_character() {
  std::string text = "c";
  for (int c = 1; c < 0x20; ++c) {
    text += static_cast<char>(c);
    text += 'x';
  }
  return text + "\x7f!" + std::string("nul\0byte", 8);
}

TEST(DatasetReportRender, JsonWriterMatchesTheTreeDumpByteForByte) {
  const std::vector<std::string> texts = {"plain",
                                          "",
                                          "quote \" and \\ backslash",
                                          "tab\tnew\nline\rcr\x01\x1f\x7f",
                                          "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
                                          "bad \xc3",
                                          "bad \xff\xfe end",
                                          "overlong \xc0\xaf",
                                          "surrogate \xed\xa0\x80",
                                          "above \xf4\x90\x80\x80",
                                          "/abs/path/\xe9.json",
                                          every_control_character(),
                                          "long ascii run before a quote: 0123456789abcdef\"",
                                          "\xc3\xa9 then bad at the end of a word \xe2\x82"};
  DatasetReport report;
  report.config.dataset = texts[6];
  report.config.checks = {"layout", texts[3]};
  report.config.op_types = {texts[4]};
  for (std::size_t i = 0; i < texts.size(); ++i) {
    DefinitionReport definition;
    CheckResult result;
    result.add(CheckLevel::error, codes::k_reference_syntax, texts[i]);
    result.add(CheckMessage{CheckLevel::info, texts[(i + 1) % texts.size()], "", {}});
    definition[Category::layout] = CheckResult{};
    definition[Category::definition] = result;
    definition.update_status();
    report.definitions.emplace(texts[i] + std::to_string(i), definition);
  }
  EXPECT_EQ(render_report_json(report), dumped_tree(report));
  report.dataset = CheckResult{};
  report.dataset->add(codes::k_dataset_orphan, texts[5]);
  EXPECT_EQ(render_report_json(report), dumped_tree(report));
  EXPECT_EQ(render_report_json(DatasetReport{}), dumped_tree(DatasetReport{}));
}

// A report large enough to be rendered in many pieces on several threads (128 definitions a piece)
// gives the same bytes as the tree dump, with and without the dataset section, at piece bounds
// and one past them.
TEST(DatasetReportRender, JsonOfManyDefinitionsRenderedInPiecesMatchesTheTreeDump) {
  for (const std::size_t count : {127U, 128U, 129U, 256U, 1000U}) {
    DatasetReport report;
    report.config.dataset = "/d";
    for (std::size_t i = 0; i < count; ++i) {
      DefinitionReport definition;
      CheckResult result;
      result.add(CheckLevel::warning, codes::k_reference_syntax,
                 fmt::format("message {} with \"quotes\" and caf\xc3\xa9", i));
      definition[Category::definition] = result;
      definition[Category::layout] = CheckResult{};
      definition.update_status();
      report.definitions.emplace(fmt::format("def_{:05}", i), definition);
    }
    const std::string rendered = render_report_json(report);
    EXPECT_EQ(rendered, dumped_tree(report)) << count << " definitions";
    EXPECT_NE(rendered.find(fmt::format("\"def_{:05}\"", count - 1)), std::string::npos);
    report.dataset = CheckResult{};
    report.dataset->add(codes::k_dataset_orphan, "orphan");
    EXPECT_EQ(render_report_json(report), dumped_tree(report)) << count << " definitions";
  }
}

// A report of `count` definitions whose one result is an ok layout.
DatasetReport report_of_ok_definitions(std::size_t count) {
  DatasetReport report;
  report.config.dataset = "/d";
  for (std::size_t i = 0; i < count; ++i) {
    DefinitionReport definition;
    definition[Category::layout] = CheckResult{};
    definition.update_status();
    report.definitions.emplace(fmt::format("definition_{}", i), definition);
  }
  return report;
}

// The report file is the rendered JSON, written piece by piece.
TEST(DatasetReportRender, TheJsonFileHoldsTheRenderedBytes) {
  const testing::TempDir dir;
  const DatasetReport report = report_of_ok_definitions(300);
  ReportTargets targets;
  targets.stdout_text = false;
  const auto files = write_report_files(report, dir.path(), "t", targets);
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(files->json, dir.path() / "report-t.json");
  EXPECT_EQ(testing::read_file(files->json), render_report_json(report));
  EXPECT_EQ(testing::read_file(files->text), render_report_text(report));
  EXPECT_TRUE(testing::temporaries_below(dir.path()).empty());
}

// A write that fails midway (here: past the file-size limit, while later pieces are still being
// rendered) is the error of write_report_files, and neither the file nor its temporary is left.
TEST(DatasetReportRender, AJsonFileThatCannotBeWrittenWholeIsNotWritten) {
  const testing::TempDir dir;
  const DatasetReport report = report_of_ok_definitions(2000);
  ReportTargets targets;
  targets.stdout_text = false;
  targets.text_file = false;
  const auto failed = [&] {
    const testing::FileSizeLimit limit(64 * 1024); // a few pieces of the ~500 kB report
    return write_report_files(report, dir.path(), "t", targets);
  }();
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, codes::k_io_write);
  EXPECT_TRUE(testing::tree(dir.path()).empty());
  EXPECT_TRUE(testing::temporaries_below(dir.path()).empty());
}

TEST(DatasetReportRender, JsonEmptyDefinitions) {
  DatasetReport report;
  report.config.dataset = "d";
  EXPECT_EQ(render_report_json(report), R"({
  "config": {
    "dataset": "d",
    "checks": [],
    "disable_gpu": false,
    "op_types": [],
    "definitions": []
  },
  "definitions": {}
})");
}

TEST(DatasetReportRender, JsonRoundTrip) {
  const DatasetReport example = example_report();
  const std::string json = render_report_json(example);
  const auto parsed = parse_report_json(json, "report.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(render_report_json(*parsed), json);
  EXPECT_EQ(render_report_text(*parsed), render_report_text(example));
  EXPECT_FALSE(parsed->dataset.has_value());

  // A real report, with fib's dataset section.
  Dataset ds;
  write_many(ds, 4);
  ds.solution("baseline", "def00", "b1", solution_json("b1", "def00", "baseline"));
  const DatasetReport real = ds.validate();
  ASSERT_TRUE(real.dataset.has_value());
  const std::string real_json = render_report_json(real);
  const auto real_parsed = parse_report_json(real_json, "report.json");
  ASSERT_TRUE(real_parsed) << real_parsed.error().message;
  EXPECT_EQ(render_report_json(*real_parsed), real_json);
  ASSERT_TRUE(real_parsed->dataset.has_value());
  EXPECT_EQ(messages_of(*real_parsed->dataset), messages_of(*real.dataset));
}

TEST(DatasetReportRender, ParseRejectsInvalidLevel) {
  const auto parsed = parse_report_json(
      R"({"config": {"dataset": "d", "checks": [], "disable_gpu": true, "op_types": [], "definitions": []},
          "definitions": {"x": {"status": "ok", "layout": {"status": "ok", "messages": [{"level": "fatal", "message": "m"}]}}}})",
      "r.json");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code, codes::k_report_invalid);
}

// The old tool's report (no "code" keys) and fib's (with them) both read, and each renders back
// to itself; a code that is not a string is invalid.
TEST(DatasetReportRender, ReadsReportsWithAndWithoutCodes) {
  const auto report_with = [](std::string_view code_key) {
    return fmt::format(R"({{
  "config": {{
    "dataset": "d",
    "checks": [
      "workload"
    ],
    "disable_gpu": true,
    "op_types": [],
    "definitions": []
  }},
  "definitions": {{
    "x": {{
      "status": "error",
      "layout": null,
      "definition": null,
      "workload": {{
        "status": "error",
        "messages": [
          {{
            "level": "error",
            "message": "w1: extra axes ['K']"{}
          }}
        ]
      }},
      "solution": null,
      "trace": null,
      "baseline": null,
      "benchmark": null
    }}
  }}
}})",
                       code_key);
  };
  const std::string old_json = report_with("");
  const auto old_report = parse_report_json(old_json, "old.json");
  ASSERT_TRUE(old_report) << old_report.error().message;
  EXPECT_EQ(messages(*old_report, "x", Category::workload),
            Messages{E("", "w1: extra axes ['K']")});
  EXPECT_EQ(render_report_json(*old_report), old_json);

  const std::string new_json =
      report_with(",\n            \"code\": \"dataset.workload.extra-axes\"");
  const auto new_report = parse_report_json(new_json, "new.json");
  ASSERT_TRUE(new_report) << new_report.error().message;
  EXPECT_EQ(messages(*new_report, "x", Category::workload),
            Messages{E(codes::k_dataset_workload_extra_axes, "w1: extra axes ['K']")});
  EXPECT_EQ(render_report_json(*new_report), new_json);
  EXPECT_EQ(render_report_text(*new_report), render_report_text(*old_report));

  const auto bad = parse_report_json(report_with(",\n\"code\": 5"), "bad.json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, codes::k_report_invalid);
  EXPECT_EQ(bad.error().pointer, "/definitions/x/workload/messages/0/code");
}

// Shards written with and without codes merge; dataset-level messages keep their codes and are
// de-duplicated by level and text.
TEST(DatasetReportRender, MergeKeepsCodes) {
  DatasetReport with_codes;
  with_codes.definitions["a"][Category::layout] =
      result({{codes::k_dataset_trace_op_type_mismatch, "m"}});
  with_codes.dataset = result({{codes::k_dataset_orphan, "o"}});
  DatasetReport without_codes;
  without_codes.definitions["b"][Category::layout].emplace().add(CheckLevel::error, "", "m");
  without_codes.dataset.emplace().add(CheckLevel::warning, "", "o");
  const DatasetReport merged = merge_reports({with_codes, without_codes});
  EXPECT_EQ(messages(merged, "a", Category::layout),
            Messages{E(codes::k_dataset_trace_op_type_mismatch, "m")});
  EXPECT_EQ(messages(merged, "b", Category::layout), Messages{E("", "m")});
  EXPECT_EQ(dataset_messages(merged), Messages{W(codes::k_dataset_orphan, "o")});
}

// The report's messages counted as findings for the exit status: never environment or usage
// errors, whatever their code (an unreadable file is a finding about the dataset here).
TEST(DatasetReportRender, CountFindingsCountsEveryMessage) {
  DatasetReport report = example_report();
  report.definitions["z"][Category::definition] =
      result({{codes::k_io_read, "parse error: cannot read"}});
  report.dataset = result({{codes::k_dataset_unread_file, "f: not a .json file"},
                           {codes::k_dataset_misplaced, "g.json: at the wrong depth"}});
  const DiagnosticCounts counts = count_findings(report);
  EXPECT_EQ(counts.errors, 2u);   // w3's extra axes, z's unreadable file
  EXPECT_EQ(counts.warnings, 3u); // a description, gemm's baseline, the misplaced file
  EXPECT_EQ(counts.notes, 9u);    // 3 of gemm, 5 of rmsnorm, the unread file
  EXPECT_EQ(counts.environment_errors, 0u);
  EXPECT_EQ(counts.usage_errors, 0u);
}

} // namespace
} // namespace fib
