// The binary encoding of definition reports and diagnostics round-trips, and damaged bytes never
// decode into a report.

#include "util/byte_codec.hpp"
#include "validate/report_codec.hpp"

#include <fib/base/codes.hpp>

#include <gtest/gtest.h>

namespace fib::dataset_checks {
namespace {

DefinitionReport sample_report() {
  DefinitionReport report;
  CheckResult layout;
  CheckResult definition;
  definition.add(codes::k_reference_syntax, "Reference must be valid Python code: invalid syntax")
      .where = MessageLocation{"definitions/gemm/g.json", "/reference", 0};
  definition.add(CheckLevel::info, codes::k_dataset_workload_valid_count, "note \xc3\xa9 text");
  definition.add(CheckMessage{CheckLevel::warning, "a message without a code", "", {}});
  layout.add(codes::k_blob_not_found, "u: blob missing at b.safetensors").where =
      MessageLocation{"workloads/gemm/g.jsonl", "/workload/inputs/A/path", 7};
  layout.add(codes::k_blob_not_found, "v: blob missing at c.safetensors").where =
      MessageLocation{"workloads/gemm/g.jsonl", "", 9};
  report[Category::layout] = layout;
  report[Category::definition] = definition;
  report.update_status();
  return report;
}

TEST(ReportCodec, DefinitionReportRoundTrips) {
  const DefinitionReport original = sample_report();
  detail::ByteWriter out;
  encode_definition_report(original, out);
  detail::ByteReader in(out.bytes());
  const auto decoded = decode_definition_report(in);
  ASSERT_TRUE(decoded);
  EXPECT_TRUE(in.finished());
  DatasetReport a;
  a.definitions.emplace("d", original);
  DatasetReport b;
  b.definitions.emplace("d", *decoded);
  EXPECT_EQ(render_report_json(b), render_report_json(a));
  EXPECT_EQ((*decoded)[Category::definition]->messages[0].code.data(),
            table_code(codes::k_reference_syntax).data())
      << "codes read back as the table's own text";
  EXPECT_FALSE((*decoded)[Category::workload]) << "a category that did not run stays so";
  for (const Category category : {Category::layout, Category::definition}) {
    const auto& before = original[category]->messages;
    const auto& after = (*decoded)[category]->messages;
    ASSERT_EQ(after.size(), before.size());
    for (std::size_t i = 0; i < before.size(); ++i) {
      EXPECT_EQ(after[i].where, before[i].where) << to_string(category) << " message " << i;
    }
  }
  EXPECT_EQ((*decoded)[Category::layout]->messages[1].where.line, 9u);
}

TEST(ReportCodec, FileIndexOutOfRangeNeverDecodes) {
  DefinitionReport report;
  CheckResult layout;
  layout.add(codes::k_blob_not_found, "m").where = MessageLocation{"a.jsonl", "", 1};
  report[Category::layout] = layout;
  detail::ByteWriter out;
  encode_definition_report(report, out);
  std::string bytes = out.bytes();
  // Status (1 byte), then the file count: claim no files, so index 1 points past the table.
  const std::string no_files("\0\0\0\0", 4);
  const std::size_t table_end = 1 + 4 + 4 + std::string("a.jsonl").size();
  std::string damaged = bytes.substr(0, 1) + no_files + bytes.substr(table_end);
  detail::ByteReader in(damaged);
  EXPECT_FALSE(decode_definition_report(in));
}

TEST(ReportCodec, DamagedBytesNeverDecode) {
  detail::ByteWriter out;
  encode_definition_report(sample_report(), out);
  const std::string bytes = out.bytes();
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    detail::ByteReader in(std::string_view(bytes).substr(0, size));
    const auto decoded = decode_definition_report(in);
    EXPECT_FALSE(decoded && in.finished()) << "truncated to " << size << " bytes";
  }
  std::string bad_status = bytes;
  bad_status[0] = 9;
  detail::ByteReader in(bad_status);
  EXPECT_FALSE(decode_definition_report(in));
}

// A message count larger than the bytes left can hold is corrupt: it is refused before any
// memory is set aside for it (a count of four billion would otherwise ask for 512 GB).
TEST(ReportCodec, AMessageCountBeyondTheBytesNeverDecodes) {
  for (const std::uint32_t count : {std::uint32_t{0xffffffff}, std::uint32_t{2}}) {
    detail::ByteWriter out;
    out.u8(0);  // status ok
    out.u32(0); // no files
    out.u8(1);  // the first category ran
    out.u8(0);  // its status
    out.u32(count);
    // One whole message (level, code, text, file, line, pointer): room for one, not for two.
    out.u8(0);
    out.str("");
    out.str("m");
    out.u32(0);
    out.u32(0);
    out.str("");
    for (int category = 1; category < 7; ++category) {
      out.u8(0);
    }
    detail::ByteReader in(out.bytes());
    std::optional<DefinitionReport> decoded;
    EXPECT_NO_THROW(decoded = decode_definition_report(in)) << count;
    EXPECT_FALSE(decoded) << count;
    EXPECT_FALSE(in.ok()) << count;
  }
}

TEST(ReportCodec, DiagnosticRoundTrips) {
  Diagnostic d = make_diagnostic(codes::k_python_unavailable, "no Python");
  d.file = "/a/b.json";
  d.pointer = "/reference";
  d.line = 12;
  d.hint = "set FIB_PYTHON";
  detail::ByteWriter out;
  encode_diagnostic(d, out);
  detail::ByteReader in(out.bytes());
  const auto back = decode_diagnostic(in);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->severity, d.severity);
  EXPECT_EQ(back->code, d.code);
  EXPECT_EQ(back->message, d.message);
  EXPECT_EQ(back->file, d.file);
  EXPECT_EQ(back->pointer, d.pointer);
  EXPECT_EQ(back->line, 12);
  EXPECT_EQ(back->hint, d.hint);
  EXPECT_TRUE(in.finished());
}

} // namespace
} // namespace fib::dataset_checks
