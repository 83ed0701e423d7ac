// A chunk's result, as a worker process of dataset validation sends it, round-trips, and bytes
// that are not such a result (truncated, an unknown role or sign) never decode.

#include "validate/chunk_result.hpp"

#include <fib/base/codes.hpp>

#include <gtest/gtest.h>

namespace fib::dataset_checks {
namespace {

ChunkResult sample_chunk() {
  ChunkResult chunk;
  DefinitionReport report;
  CheckResult definition;
  definition.add(codes::k_reference_syntax, "Reference must be valid Python code");
  report[Category::definition] = definition;
  report.update_status();
  chunk.reports.emplace_back("gemm_n128", report);
  chunk.loaded = 1;
  Sha256Digest key{};
  key[0] = 7;
  chunk.cache_entries.emplace(key, "value");
  chunk.used_packs = {0, 3};
  chunk.signed_files.emplace_back("/d/definitions/gemm/gemm_n128.json",
                                  SignedFile{OldSchemaRole::definition, false});
  chunk.signed_files.emplace_back("/d/solutions/a/gemm/gemm_n128/s.json",
                                  SignedFile{OldSchemaRole::solution, true});
  return chunk;
}

TEST(ChunkResult, RoundTripsWithItsSignedFiles) {
  DiagnosticList environment;
  environment.report(make_diagnostic(codes::k_python_unavailable, "no interpreter"));
  const std::string bytes = encode_chunk(sample_chunk(), environment);
  std::vector<Diagnostic> decoded_environment;
  const auto decoded = decode_chunk(bytes, decoded_environment);
  ASSERT_TRUE(decoded.has_value());
  ASSERT_EQ(decoded_environment.size(), 1u);
  EXPECT_EQ(decoded_environment[0].code, codes::k_python_unavailable);
  const ChunkResult& result = decoded->result;
  EXPECT_EQ(result.loaded, 1u);
  ASSERT_EQ(result.reports.size(), 1u);
  EXPECT_EQ(result.reports[0].first, "gemm_n128");
  ASSERT_EQ(decoded->cache_entries.size(), 1u);
  EXPECT_EQ(decoded->cache_entries[0].first[0], 7);
  EXPECT_EQ(decoded->cache_entries[0].second, "value");
  EXPECT_EQ(result.used_packs, (std::vector<std::size_t>{0, 3}));
  ASSERT_EQ(result.signed_files.size(), 2u);
  EXPECT_EQ(result.signed_files[0].first, "/d/definitions/gemm/gemm_n128.json");
  EXPECT_EQ(result.signed_files[0].second.role, OldSchemaRole::definition);
  EXPECT_FALSE(result.signed_files[0].second.sign);
  EXPECT_EQ(result.signed_files[1].second.role, OldSchemaRole::solution);
  EXPECT_TRUE(result.signed_files[1].second.sign);
}

TEST(ChunkResult, BytesThatAreNoChunkNeverDecode) {
  const std::string bytes = encode_chunk(sample_chunk(), DiagnosticList{});
  std::vector<Diagnostic> environment;
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(decode_chunk(std::string_view(bytes).substr(0, cut), environment).has_value())
        << "cut at " << cut;
  }
  // The last signed file ends with its role and its sign, one byte each.
  std::string bad_sign = bytes;
  bad_sign[bad_sign.size() - 1] = 2;
  EXPECT_FALSE(decode_chunk(bad_sign, environment).has_value());
  std::string bad_role = bytes;
  bad_role[bad_role.size() - 2] = 5;
  EXPECT_FALSE(decode_chunk(bad_role, environment).has_value());
  EXPECT_FALSE(decode_chunk(bytes + "x", environment).has_value()) << "bytes left over";
}

} // namespace
} // namespace fib::dataset_checks
