// fib's judging of timed calls (src/exec/timed_calls.hpp): the commitment fib computes over a
// kept call's outputs, which a worker's "done" must match, and the latency fib records.

#include "test_support.hpp"

#include "exec/timed_calls.hpp"

#include <fib/io/safetensors.hpp>
#include <fib/util/sha256.hpp>

#include <gtest/gtest.h>

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

TEST(TimedCalls, TheCommitmentIsSha256OfTheKeyThenEachTensorsLengthAndBytes) {
  TempDir dir;
  const std::string a("\x01\x02\x03\x04", 4);
  const std::string b("\x05\x06", 2);
  const auto file =
      write_outputs(dir.path() / "t.safetensors", {{"0", "F32", {1}, a}, {"1", "I16", {1}, b}});
  std::uint64_t bytes = 0;
  auto got = detail::commitment_of(file, {"0", "1"}, k_key, &bytes);
  ASSERT_TRUE(got.has_value()) << got.error().message;
  std::string key;
  for (int i = 0; i < 16; ++i) {
    key += static_cast<char>(i);
  }
  EXPECT_EQ(*got, to_hex(sha256(key + le64(4) + a + le64(2) + b)));
  EXPECT_EQ(bytes, 6U);
  // The order of the tensors, the key and every byte change it.
  EXPECT_NE(*detail::commitment_of(file, {"1", "0"}, k_key), *got);
  EXPECT_NE(
      *detail::commitment_of(file, {"0", "1"}, std::string("f00102030405060708090a0b0c0d0e0f")),
      *got);
  const auto other =
      write_outputs(dir.path() / "u.safetensors",
                    {{"0", "F32", {1}, std::string("\x01\x02\x03\x05", 4)}, {"1", "I16", {1}, b}});
  EXPECT_NE(*detail::commitment_of(other, {"0", "1"}, k_key), *got);
  // A key that is not 32 hexadecimal digits, or a tensor the file lacks, is an error.
  EXPECT_FALSE(detail::commitment_of(file, {"0"}, "xyz").has_value());
  EXPECT_FALSE(detail::commitment_of(file, {"0", "2"}, k_key).has_value());
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
  auto got = detail::call_latencies(timing, bytes, {0.0, 1e9}, &reference_prep);
  ASSERT_EQ(got.ms.size(), 3U);
  EXPECT_DOUBLE_EQ(got.ms[0], 9.0); // the commitment's 1 ms off
  EXPECT_DOUBLE_EQ(got.ms[1], 9.9); // never more than fib saw beyond the reported call
  // The third prepared 5 ms where the reference took 1 (allowed 1.5 + 0.25): 3.25 ms added.
  EXPECT_DOUBLE_EQ(got.ms[2], 9.0 + 3.25);
  EXPECT_DOUBLE_EQ(got.prep_excess_ms, 3.25);
  EXPECT_EQ(got.charged_calls, 1U);
  // No speed from the greeting: nothing is subtracted; no reference: nothing added.
  auto plain = detail::call_latencies(timing, bytes, {}, nullptr);
  // A part whatever the size: 0.5 ms more off the first call.
  EXPECT_DOUBLE_EQ(detail::call_latencies(timing, bytes, {0.5e-3, 1e9}, nullptr).ms[0], 8.5);
  EXPECT_EQ(plain.ms, (std::vector<double>{10.0, 10.0, 10.0}));
  EXPECT_EQ(plain.charged_calls, 0U);
}

} // namespace
} // namespace fib
