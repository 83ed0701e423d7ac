// fib's judging of timed calls (src/exec/timed_calls.hpp): the commitment fib computes over a
// kept call's outputs, which a worker's "done" must match, and the latency fib records.

#include "test_support.hpp"

#include "exec/timed_calls.hpp"

#include <fib/io/safetensors.hpp>
#include <fib/util/sha256.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace fib {
namespace {

using testing::TempDir;

std::filesystem::path write_outputs(const std::filesystem::path& path,
                                    const std::vector<SafetensorsTensor>& tensors) {
  auto encoded = encode_safetensors(tensors, {});
  EXPECT_TRUE(encoded.has_value());
  std::ofstream(path, std::ios::binary) << *encoded;
  return path;
}

std::string le64(std::uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) {
    out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xffU);
  }
  return out;
}

const std::string k_key = "000102030405060708090a0b0c0d0e0f";

std::string raw(const Sha256Digest& digest) {
  return {reinterpret_cast<const char*>(digest.data()), digest.size()};
}

TEST(TimedCalls, TheCommitmentHashesEachPieceAfterTheFoldOfEveryByte) {
  TempDir dir;
  // Tensor 0: 12 bytes (one whole word and a padded one); tensor 1: 2 bytes.
  const std::string a("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c", 12);
  const std::string b("\x05\x06", 2);
  const auto file =
      write_outputs(dir.path() / "t.safetensors", {{"0", "F32", {3}, a}, {"1", "I16", {1}, b}});
  std::uint64_t bytes = 0;
  auto got = detail::commitment_of(file, {"0", "1"}, k_key, &bytes);
  ASSERT_TRUE(got.has_value()) << got.error().message;
  std::string key;
  for (int i = 0; i < 16; ++i) {
    key += static_cast<char>(i);
  }
  const std::uint64_t fold = 0x0807060504030201ULL + 0x0c0b0a09ULL + 0x0605ULL;
  const std::string head = key + le64(fold);
  EXPECT_EQ(*got, to_hex(sha256(head + le64(12) + raw(sha256(head + a)) + le64(2) +
                                raw(sha256(head + b)))));
  EXPECT_EQ(bytes, 14U);
  // The order of the tensors, the key and every byte change it.
  EXPECT_NE(*detail::commitment_of(file, {"1", "0"}, k_key), *got);
  EXPECT_NE(
      *detail::commitment_of(file, {"0", "1"}, std::string("f00102030405060708090a0b0c0d0e0f")),
      *got);
  std::string changed = a;
  changed[11] = '\x0d';
  const auto other = write_outputs(dir.path() / "u.safetensors",
                                   {{"0", "F32", {3}, changed}, {"1", "I16", {1}, b}});
  EXPECT_NE(*detail::commitment_of(other, {"0", "1"}, k_key), *got);
  // A key that is not 32 hexadecimal digits, or a tensor the file lacks, is an error.
  EXPECT_FALSE(detail::commitment_of(file, {"0"}, "xyz").has_value());
  EXPECT_FALSE(detail::commitment_of(file, {"0", "2"}, k_key).has_value());
}

TEST(TimedCalls, ALargeTensorIsCommittedPieceByPiece) {
  TempDir dir;
  std::string data(detail::k_commit_piece + 8, '\0');
  data[0] = '\x02';                      // word 0: 2
  data[detail::k_commit_piece] = '\x03'; // the second piece's only word: 3
  const auto file = write_outputs(dir.path() / "t.safetensors",
                                  {{"0", "U8", {static_cast<std::int64_t>(data.size())}, data}});
  std::string key;
  for (int i = 0; i < 16; ++i) {
    key += static_cast<char>(i);
  }
  const std::string head = key + le64(5);
  const std::string first = data.substr(0, detail::k_commit_piece);
  const std::string second = data.substr(detail::k_commit_piece);
  EXPECT_EQ(*detail::commitment_of(file, {"0"}, k_key),
            to_hex(sha256(head + le64(data.size()) + raw(sha256(head + first)) +
                          raw(sha256(head + second)))));
}

TEST(TimedCalls, ACallWhoseCommitmentDoesNotMatchItsKeptOutputsIsNamed) {
  TempDir dir;
  const auto file =
      write_outputs(dir.path() / "t.safetensors", {{"0", "F32", {1}, std::string(4, '\x07')}});
  detail::TimedCalls timing;
  timing.keys = {k_key, k_key};
  timing.commits = {*detail::commitment_of(file, {"0"}, k_key), std::string(64, '0')};
  std::uint64_t bytes = 0;
  EXPECT_EQ(detail::commitment_problem(timing, 0, file, {"0"}, bytes), std::nullopt);
  EXPECT_EQ(bytes, 4U);
  auto problem = detail::commitment_problem(timing, 1, file, {"0"}, bytes);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("timed call 1 said \"done\" with a commitment that does not match"),
            std::string::npos)
      << *problem;
  EXPECT_TRUE(detail::commitment_problem(timing, 2, file, {"0"}, bytes).has_value());
}

TEST(TimedCalls, SecretsAreFreshAndCommitmentsHaveTheirShape) {
  std::set<std::string> keys;
  for (int i = 0; i < 64; ++i) {
    const std::string key = detail::secret_key_hex();
    EXPECT_EQ(key.size(), 32U);
    keys.insert(key);
    EXPECT_LT(detail::secret_seed(), std::uint64_t{1} << 32);
  }
  EXPECT_EQ(keys.size(), 64U);
  EXPECT_TRUE(detail::is_commitment(Json(std::string(64, 'a'))));
  EXPECT_FALSE(detail::is_commitment(Json(std::string(64, 'A'))));
  EXPECT_FALSE(detail::is_commitment(Json(std::string(63, 'a'))));
  EXPECT_FALSE(detail::is_commitment(Json(7)));
}

TEST(TimedCalls, TheLatencyLosesTheCommitmentsCostAndGainsExtraPreparation) {
  detail::TimedCalls timing;
  timing.fib_ms = {10.0, 10.0, 10.0};
  timing.reported_ms = {8.0, 9.9, 0.0};
  timing.prep_ms = {1.0, 1.0, 5.0};
  // 1 MB at 1 GB/s: 1 ms of commitment per call.
  const std::vector<std::uint64_t> bytes{1000000, 1000000, 1000000};
  const std::vector<double> reference_prep{1.0, 1.0, 1.0};
  const detail::CommitmentCost gigabyte{{1000000, 1e-3}, {2000000, 2e-3}};
  auto got = detail::call_latencies(timing, bytes, gigabyte, &reference_prep);
  ASSERT_EQ(got.ms.size(), 3U);
  EXPECT_DOUBLE_EQ(got.ms[0], 9.0); // the commitment's 1 ms off
  EXPECT_DOUBLE_EQ(got.ms[1], 9.9); // never more than fib saw beyond the reported call
  // The third prepared 5 ms where the reference took 1 (allowed 1.5 + 0.25): 3.25 ms added.
  EXPECT_DOUBLE_EQ(got.ms[2], 9.0 + 3.25);
  EXPECT_DOUBLE_EQ(got.prep_excess_ms, 3.25);
  EXPECT_EQ(got.charged_calls, 1U);
  // No cost in the greeting: nothing is subtracted; no reference: nothing added.
  auto plain = detail::call_latencies(timing, bytes, {}, nullptr);
  EXPECT_EQ(plain.ms, (std::vector<double>{10.0, 10.0, 10.0}));
  EXPECT_EQ(plain.charged_calls, 0U);
}

TEST(TimedCalls, TheCommitmentsCostIsReadOffTheGreetingsTableByLines) {
  const detail::CommitmentCost cost{{1, 10e-6}, {1U << 20, 0.5e-3}, {4U << 20, 2e-3}};
  EXPECT_DOUBLE_EQ(detail::commitment_seconds(cost, 0), 10e-6); // below: the first figure
  EXPECT_DOUBLE_EQ(detail::commitment_seconds(cost, 1U << 20), 0.5e-3);
  EXPECT_DOUBLE_EQ(detail::commitment_seconds(cost, (5U << 20) / 2), 1.25e-3); // between
  EXPECT_DOUBLE_EQ(detail::commitment_seconds(cost, 8U << 20), 4e-3); // beyond: the last line
  EXPECT_DOUBLE_EQ(detail::commitment_seconds({}, 8U << 20), 0.0);
  EXPECT_DOUBLE_EQ(detail::commitment_seconds({{64, 1e-6}}, 8U << 20), 1e-6);
}

TEST(TimedCalls, TheGreetingsTablesAreTakenOnlyWhenWellFormed) {
  const auto info = detail::worker_info_of(Json::parse(
      R"({"torch": "1.13.0", "commit_cost": [[1, 1e-5], [1048576, 5e-4]],
          "copy_bandwidth": [[65536, 2e10], [65536, 1e10]]})"));
  EXPECT_EQ(info.torch_version, "1.13.0");
  EXPECT_EQ(info.commit_cost, (detail::CommitmentCost{{1, 1e-5}, {1048576, 5e-4}}));
  EXPECT_TRUE(info.copy_bandwidth.empty()); // sizes that do not grow: the table is not believed
  for (const char* bad : {R"({"commit_cost": [[0, 1e-5]]})", R"({"commit_cost": [[1, -1]]})",
                          R"({"commit_cost": [[1]]})", R"({"commit_cost": 3})"}) {
    EXPECT_TRUE(detail::worker_info_of(Json::parse(bad)).commit_cost.empty()) << bad;
  }
}

TEST(TimedCalls, ThePlausibilityFloorUsesTheBandwidthOfTheSizeThatHoldsTheCall) {
  // 1 MiB copies at 100 GB/s (in cache), 64 MiB ones at 10 GB/s.
  const std::vector<std::pair<std::uint64_t, double>> bandwidth{{1U << 20, 100e9},
                                                                {64U << 20, 10e9}};
  // 1 MB moved fits a 1 MiB copy (which moves 2 MiB): 1e6 / 100e9 s, halved (the headroom).
  EXPECT_DOUBLE_EQ(detail::plausibility_floor_ms(1'000'000, bandwidth), 1e3 * 1e6 / 100e9 / 2);
  // 100 MB needs the 64 MiB figure; beyond the largest size its figure holds.
  EXPECT_DOUBLE_EQ(detail::plausibility_floor_ms(100'000'000, bandwidth), 1e3 * 1e8 / 10e9 / 2);
  EXPECT_DOUBLE_EQ(detail::plausibility_floor_ms(1'000'000'000, bandwidth), 1e3 * 1e9 / 10e9 / 2);
  // Nothing measured, or nothing moved: no floor.
  EXPECT_EQ(detail::plausibility_floor_ms(1'000'000, {}), 0.0);
  EXPECT_EQ(detail::plausibility_floor_ms(0, bandwidth), 0.0);
}

TEST(TimedCalls, QuartilesAreInterpolatedOverTheSortedCalls) {
  EXPECT_EQ(detail::quartiles({4.0, 1.0, 3.0, 2.0, 5.0}),
            (std::array<double, 5>{1.0, 2.0, 3.0, 4.0, 5.0}));
  EXPECT_EQ(detail::quartiles({2.0, 1.0}), (std::array<double, 5>{1.0, 1.25, 1.5, 1.75, 2.0}));
  EXPECT_EQ(detail::quartiles({7.0}), (std::array<double, 5>{7.0, 7.0, 7.0, 7.0, 7.0}));
}

TEST(TimedCalls, ThePerformanceExtraSaysTheSpreadAndAMedianUnderTheFloor) {
  const std::array<double, 5> spread{1.0, 2.0, 3.0, 4.0, 5.0};
  const Json plausible = detail::performance_extra(spread, 5, 2.5);
  EXPECT_EQ(plausible, (Json{{"timed_calls", 5},
                             {"latency_min_ms", 1.0},
                             {"latency_q1_ms", 2.0},
                             {"latency_q3_ms", 4.0},
                             {"latency_max_ms", 5.0},
                             {"plausibility_floor_ms", 2.5}}));
  EXPECT_EQ(detail::performance_extra(spread, 5, 3.5).value("implausible", false), true);
  EXPECT_FALSE(detail::performance_extra(spread, 5, 0.0).contains("plausibility_floor_ms"));
}

TEST(TimedCalls, TheAdaptiveStopWaitsForFiveCallsAndATightMedian) {
  // Quartiles 9.9 and 10.1 around 10 over 5 calls: 1.57 * 0.2 / sqrt(5) / 10, about 1.4%.
  const std::vector<double> tight{9.8, 9.9, 10.0, 10.1, 10.2};
  EXPECT_NEAR(detail::median_ci_relative(tight), 1.57 * 0.2 / std::sqrt(5.0) / 10.0, 1e-12);
  EXPECT_TRUE(detail::should_stop(tight, 0.02));
  EXPECT_FALSE(detail::should_stop(tight, 0.01));
  // Four calls never stop, however alike.
  EXPECT_FALSE(detail::should_stop({10.0, 10.0, 10.0, 10.0}, 0.5));
  // A wide spread does not.
  EXPECT_FALSE(detail::should_stop({1.0, 5.0, 10.0, 20.0, 40.0}, 0.2));
  EXPECT_FALSE(detail::should_stop({0.0, 0.0, 0.0, 0.0, 0.0}, 0.5)); // no median to share
}

TEST(TimedCalls, ASetupSplitsTheLatencyIntoSetupAndKernel) {
  Json extra = Json::object();
  detail::add_split_timing(extra, {10.0, 12.0, 11.0}, {9.0, 9.5, 10.5});
  EXPECT_DOUBLE_EQ(extra.at("kernel_latency_ms").get<double>(), 1.0); // of 1, 2.5 and 0.5
  EXPECT_DOUBLE_EQ(extra.at("setup_latency_ms").get<double>(), 9.5);
  Json none = Json::object();
  detail::add_split_timing(none, {10.0, 12.0}, {});
  detail::add_split_timing(none, {10.0, 12.0}, {1.0}); // not one per call: nothing
  EXPECT_TRUE(none.empty());
}

} // namespace
} // namespace fib
