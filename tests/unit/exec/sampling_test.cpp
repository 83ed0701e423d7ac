// The sampling evaluator's judging (exec/sampling.hpp): layouts from definitions, the expected
// distribution and support of hand-computed rows, the checks of samples, the noise floor against
// a simulation, and the distances of sample counts written here by hand.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/exec/sampling.hpp>
#include <fib/io/safetensors.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace fib {
namespace {

using testing::describe;
using testing::parse_or_die;
using testing::TempDir;

Definition sampler(std::string_view inputs, std::string_view outputs = R"("samples":
    {"shape":["batch_size"],"dtype":"int64"})",
                   std::string_view op_type = "sampling", std::string_view batch = "var") {
  DiagnosticList sink;
  const std::string batch_axis =
      batch == "var" ? R"({"type":"var"})" : R"({"type":"const","value":2})";
  const std::string text = fmt::format(
      R"({{"name":"s","op_type":"{}","axes":{{"batch_size":{},
          "vocab_size":{{"type":"const","value":5}}}},"inputs":{{{}}},"outputs":{{{}}},
          "reference":"def run(*args):\n    return None\n"}})",
      op_type, batch_axis, inputs, outputs);
  Definition definition = parse_definition(parse_or_die(text), sink);
  EXPECT_FALSE(sink.has_errors()) << describe(sink);
  return definition;
}

constexpr std::string_view k_probs_top_k_top_p =
    R"("probs":{"shape":["batch_size","vocab_size"],"dtype":"float32"},
       "top_k":{"shape":["batch_size"],"dtype":"int32"},
       "top_p":{"shape":["batch_size"],"dtype":"float32"})";

template <class T> std::string bytes_of(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

SafetensorsTensor f32(std::string key, std::vector<std::int64_t> shape, std::vector<float> v) {
  return SafetensorsTensor{std::move(key), "F32", std::move(shape), bytes_of(v)};
}
SafetensorsTensor i64(std::string key, std::vector<std::int64_t> shape,
                      std::vector<std::int64_t> v) {
  return SafetensorsTensor{std::move(key), "I64", std::move(shape), bytes_of(v)};
}
SafetensorsTensor i32(std::string key, std::vector<std::int64_t> shape,
                      std::vector<std::int32_t> v) {
  return SafetensorsTensor{std::move(key), "I32", std::move(shape), bytes_of(v)};
}

std::filesystem::path file(const TempDir& dir, const std::string& name,
                           const std::vector<SafetensorsTensor>& tensors) {
  auto encoded = encode_safetensors(tensors);
  EXPECT_TRUE(encoded.has_value());
  return dir.write(name, encoded ? *encoded : std::string());
}

TEST(SamplingLayout, ATopKTopPSamplerIsPaddedAlongItsVarBatchAxis) {
  const auto layout = sampling_layout(sampler(k_probs_top_k_top_p));
  ASSERT_TRUE(layout.has_value()) << layout.error().message;
  EXPECT_EQ(layout->distribution, "probs");
  EXPECT_EQ(layout->source, SamplingSource::probabilities);
  EXPECT_EQ(layout->batch_axis, "batch_size");
  EXPECT_EQ(layout->padding, BatchPadding::repeat);
  EXPECT_EQ(layout->batched_inputs, (std::vector<std::string>{"probs", "top_k", "top_p"}));
  EXPECT_EQ(layout->top_k, "top_k");
  EXPECT_EQ(layout->top_p, "top_p");
  EXPECT_FALSE(layout->min_p.has_value());
  EXPECT_EQ(filter_name(*layout), "top_k_top_p");
  EXPECT_TRUE(is_sampler(sampler(k_probs_top_k_top_p)));
}

TEST(SamplingLayout, AConstBatchAxisIsNotPaddedAndLogitsAreASource) {
  const auto layout = sampling_layout(
      sampler(R"("logits":{"shape":["batch_size","vocab_size"],"dtype":"float32"},
                 "min_p":{"shape":null,"dtype":"float32"})",
              R"("samples":{"shape":["batch_size"],"dtype":"int32"})", "sampling", "const"));
  ASSERT_TRUE(layout.has_value()) << layout.error().message;
  EXPECT_EQ(layout->source, SamplingSource::logits);
  EXPECT_EQ(layout->padding, BatchPadding::none);
  EXPECT_EQ(layout->batched_inputs, (std::vector<std::string>{"logits"}));
  EXPECT_EQ(filter_name(*layout), "min_p");
}

TEST(SamplingLayout, KernelsThatAreNoSamplersAreUnfit) {
  const struct {
    std::string inputs;
    std::string outputs;
    std::string why;
  } cases[] = {
      {R"("x":{"shape":["batch_size","vocab_size"],"dtype":"float32"})",
       R"("samples":{"shape":["batch_size"],"dtype":"int64"})", "no input named 'probs'"},
      {R"("probs":{"shape":["batch_size","vocab_size"],"dtype":"float32"})",
       R"("renormed":{"shape":["batch_size","vocab_size"],"dtype":"float32"})",
       "not a tensor of integer token ids"},
      {R"("probs":{"shape":["batch_size","vocab_size"],"dtype":"float32"},
          "indices":{"shape":["batch_size"],"dtype":"int32"})",
       R"("samples":{"shape":["batch_size"],"dtype":"int64"})", "'indices' input"},
      {R"("probs":{"shape":["batch_size","vocab_size"],"dtype":"float32"})",
       R"("samples":{"shape":["vocab_size"],"dtype":"int64"})", "batch axis 'batch_size' first"},
  };
  for (const auto& c : cases) {
    const Definition definition = sampler(c.inputs, c.outputs);
    const auto layout = sampling_layout(definition);
    ASSERT_FALSE(layout.has_value()) << c.inputs;
    EXPECT_EQ(layout.error().code, codes::k_run_evaluator_unfit);
    EXPECT_NE(layout.error().message.find(c.why), std::string::npos) << layout.error().message;
    EXPECT_FALSE(is_sampler(definition));
  }
  // A sampler's layout under another op_type is not chosen automatically.
  EXPECT_FALSE(is_sampler(sampler(k_probs_top_k_top_p, R"("samples":
      {"shape":["batch_size"],"dtype":"int64"})",
                                  "other")));
}

TEST(SamplingRows, TopKThenTopPOnTheRenormalizedRowsWithATolerantSupport) {
  TempDir dir;
  const auto layout = sampling_layout(sampler(k_probs_top_k_top_p));
  ASSERT_TRUE(layout.has_value());
  // Row 0: top-2 of [.1 .4 .2 .25 .05]. Row 1: top-p 0.47 of [.5 .3 .1 .06 .04]: the reference
  // keeps the most likely only (the mass before token 1 is .5 > .47), the tolerance (.52) also
  // accepts token 1. Row 2: top-2 (.5, .3, renormalized .625, .375), then top-p .6 keeps .625.
  const auto inputs =
      file(dir, "in.safetensors",
           {f32("probs", {3, 5},
                {.1f, .4f, .2f, .25f, .05f, .5f, .3f, .1f, .06f, .04f, .5f, .3f, .1f, .06f, .04f}),
            i32("top_k", {3}, {2, 0, 2}), f32("top_p", {3}, {1.0f, 0.47f, 0.6f})});
  const auto rows = sampling_rows(*layout, inputs, Json::object());
  ASSERT_TRUE(rows.has_value()) << rows.error().message;
  ASSERT_EQ(rows->rows, 3U);
  ASSERT_EQ(rows->vocab, 5U);
  const std::vector<double> expected = {0, .4 / .65, 0, .25 / .65, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(rows->expected[i], expected[i], 1e-6) << i;
  }
  EXPECT_EQ(rows->allowed,
            (std::vector<std::uint8_t>{0, 1, 0, 1, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0}));
}

TEST(SamplingRows, ScalarFiltersMinPAndLogits) {
  TempDir dir;
  const auto layout =
      sampling_layout(sampler(R"("logits":{"shape":["batch_size","vocab_size"],"dtype":"float32"},
                                 "min_p":{"shape":null,"dtype":"float32"})",
                              R"("samples":{"shape":["batch_size"],"dtype":"int32"})"));
  ASSERT_TRUE(layout.has_value());
  // softmax([0, ln 4, ln 2, ln 0.5, 0]) = [1, 4, 2, .5, 1] / 8.5; min_p 0.3 keeps >= 1.2 / 8.5
  // (tokens 1 and 2), the tolerance accepts >= 1.14 / 8.5 (no more).
  const auto inputs =
      file(dir, "in.safetensors",
           {f32("logits", {1, 5}, {0.f, std::log(4.f), std::log(2.f), std::log(.5f), 0.f})});
  const auto rows = sampling_rows(*layout, inputs, Json{{"min_p", 0.3}});
  ASSERT_TRUE(rows.has_value()) << rows.error().message;
  EXPECT_NEAR(rows->expected[1], 4.0 / 6.0, 1e-6);
  EXPECT_NEAR(rows->expected[2], 2.0 / 6.0, 1e-6);
  EXPECT_EQ(rows->allowed, (std::vector<std::uint8_t>{0, 1, 1, 0, 0}));
  // A filter with neither one value nor one per row is an error.
  const auto bad = file(dir, "bad.safetensors",
                        {f32("logits", {1, 5}, {0, 0, 0, 0, 0}), f32("min_p", {2}, {.1f, .2f})});
  const auto refused = sampling_rows(*layout, bad, Json::object());
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, codes::k_blob_malformed);
  EXPECT_NE(refused.error().message.find("'min_p' has 2 values for 1 rows"), std::string::npos);
}

TEST(SamplingRows, TiesAtTheTopKBoundaryAreAllAccepted) {
  TempDir dir;
  const auto layout = sampling_layout(sampler(R"("probs":{"shape":["batch_size","vocab_size"],
      "dtype":"float32"},"top_k":{"shape":null,"dtype":"int32"})"));
  ASSERT_TRUE(layout.has_value());
  const auto inputs =
      file(dir, "in.safetensors", {f32("probs", {1, 5}, {.3f, .2f, .2f, .2f, .1f})});
  const auto rows = sampling_rows(*layout, inputs, Json{{"top_k", 2}});
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(rows->allowed, (std::vector<std::uint8_t>{1, 1, 1, 1, 0}));
}

TEST(CheckSamples, EverySampleInsideItsRowsSupportElseTheOldToolsMessages) {
  TempDir dir;
  SamplingRows rows;
  rows.rows = 2;
  rows.vocab = 5;
  rows.expected.assign(10, 0.0);
  rows.allowed = {1, 1, 0, 0, 0, 0, 0, 0, 1, 1};
  const auto fine = file(dir, "a.safetensors", {i64("0", {2}, {1, 4})});
  EXPECT_TRUE(check_samples(rows, fine, "0", "top_k", SampleCalls::one).status.empty());
  const auto outside = file(dir, "b.safetensors", {i64("0", {2}, {1, 2})});
  const auto r = check_samples(rows, outside, "0", "top_k", SampleCalls::one);
  EXPECT_EQ(r.status, "INCORRECT_NUMERICAL");
  EXPECT_EQ(r.log, "Sample 2 is outside valid top_k mask for batch 1");
  const auto range = file(dir, "c.safetensors", {i64("0", {2}, {5, -1})});
  const auto o = check_samples(rows, range, "0", "top_k", SampleCalls::one);
  EXPECT_EQ(o.status, "INCORRECT_NUMERICAL");
  EXPECT_EQ(o.log, "Samples [5, -1] out of vocabulary range [0, 5)");
  // Three calls stacked, two samples per row each: [call][row][sample].
  const auto stacked =
      file(dir, "d.safetensors", {i64("s", {3, 2, 2}, {0, 1, 3, 4, 1, 1, 4, 4, 0, 0, 3, 0})});
  const auto s = check_samples(rows, stacked, "s", "top_k", SampleCalls::stacked);
  EXPECT_EQ(s.log, "Sample 0 is outside valid top_k mask for batch 1");
  const auto wrong_rows =
      file(dir, "e.safetensors", {i64("s", {3, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0})});
  EXPECT_TRUE(check_samples(rows, wrong_rows, "s", "top_k", SampleCalls::stacked).unreadable);
}

TEST(CheckRepeats, CallsThatAllReturnTheSameSamplesAreReuseUnlessTheRowsAreCertain) {
  TempDir dir;
  SamplingRows rows;
  rows.rows = 2;
  rows.vocab = 4;
  rows.expected = {0.25, 0.25, 0.25, 0.25, 0.5, 0.5, 0, 0};
  rows.allowed.assign(8, 1);
  // Two draws alike: per row Σ p² (1/4 and 1/2), for 3 samples per row.
  EXPECT_NEAR(log_chance_of_repeats(rows, 2, 3), 3 * (std::log(0.25) + std::log(0.5)), 1e-12);
  std::vector<std::int64_t> same;
  for (int call = 0; call < 20; ++call) {
    same.insert(same.end(), {1, 2});
  }
  const auto reused = file(dir, "r.safetensors", {i64("s", {20, 2}, same)});
  const auto r = check_repeats(rows, reused, "s");
  EXPECT_EQ(r.status, "INCORRECT_NUMERICAL");
  EXPECT_NE(r.log.find("the 20 calls on the same inputs returned the same samples every time"),
            std::string::npos)
      << r.log;
  // One call that differs, or rows whose outcome is certain, are no evidence of reuse.
  std::vector<std::int64_t> varied = same;
  varied[39] = 0;
  EXPECT_TRUE(check_repeats(rows, file(dir, "v.safetensors", {i64("s", {20, 2}, varied)}), "s")
                  .status.empty());
  SamplingRows certain = rows;
  certain.expected = {0, 1, 0, 0, 0, 0, 1, 0};
  EXPECT_TRUE(check_repeats(certain, reused, "s").status.empty());
}

TEST(NoiseFloor, MatchesTheExactSmallCaseAndASimulation) {
  const std::vector<double> fair = {0.5, 0.5};
  EXPECT_NEAR(expected_noise_distance(fair.data(), 2, 1), 0.5, 1e-12);
  EXPECT_EQ(expected_noise_distance(fair.data(), 2, 0), 0.0);
  const std::vector<double> sure = {1.0, 0.0};
  EXPECT_EQ(expected_noise_distance(sure.data(), 2, 1000), 0.0);
  // A skewed distribution over 20 tokens, 2,000 samples: the formula against 400 simulated runs.
  std::vector<double> p(20);
  double total = 0;
  for (std::size_t j = 0; j < p.size(); ++j) {
    p[j] = 1.0 / static_cast<double>(j + 1);
    total += p[j];
  }
  for (double& v : p) {
    v /= total;
  }
  const std::uint64_t n = 2000;
  std::mt19937_64 generator(7);
  std::discrete_distribution<std::size_t> draw(p.begin(), p.end());
  double mean = 0;
  const int runs = 400;
  for (int run = 0; run < runs; ++run) {
    std::vector<double> counts(p.size(), 0.0);
    for (std::uint64_t i = 0; i < n; ++i) {
      counts[draw(generator)] += 1;
    }
    double distance = 0;
    for (std::size_t j = 0; j < p.size(); ++j) {
      distance += std::fabs(counts[j] / static_cast<double>(n) - p[j]);
    }
    mean += 0.5 * distance / runs;
  }
  EXPECT_NEAR(expected_noise_distance(p.data(), p.size(), n), mean, 0.03 * mean);
}

TEST(SamplingDistance, FrequenciesAgainstTheExpectedRowsBeyondTheNoise) {
  TempDir dir;
  SamplingRows rows;
  rows.rows = 2;
  rows.vocab = 4;
  rows.expected = {0.5, 0.5, 0, 0, 0.25, 0.25, 0.25, 0.25};
  rows.allowed = {1, 1, 0, 0, 1, 1, 1, 1};
  // Row 0 exact; row 1 all on token 0: distance 0.75.
  const auto counts = file(dir, "c.safetensors",
                           {i64("counts", {2, 4}, {500, 500, 0, 0, 1000, 0, 0, 0}),
                            i64("out_of_range", {2}, {0, 0}), i64("drawn", {1}, {1000}),
                            i64("repeated_calls", {1}, {0})});
  const auto d = sampling_distance(rows, counts);
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_EQ(d->samples_per_row, 1000U);
  EXPECT_NEAR(d->distance[0], 0.0, 1e-12);
  EXPECT_NEAR(d->distance[1], 0.75, 1e-12);
  EXPECT_GT(d->noise_floor[1], 0.0);
  EXPECT_LT(d->noise_floor[1], 0.05);
  EXPECT_EQ(d->outside, 0U);
  EXPECT_EQ(d->repeated_calls, 0U);
  EXPECT_NEAR(d->max_absolute_error, 0.75, 1e-12);
  const DistanceExcess worst = worst_excess(*d);
  EXPECT_EQ(worst.row, 1U);
  EXPECT_NEAR(worst.excess, 0.75 - d->noise_floor[1], 1e-12);

  // Samples outside the support and out of the vocabulary are counted, with the first named.
  const auto outside = file(dir, "o.safetensors",
                            {i64("counts", {2, 4}, {500, 490, 10, 0, 250, 250, 250, 248}),
                             i64("out_of_range", {2}, {0, 2}), i64("drawn", {1}, {1000}),
                             i64("repeated_calls", {1}, {0})});
  const auto o = sampling_distance(rows, outside);
  ASSERT_TRUE(o.has_value()) << o.error().message;
  EXPECT_EQ(o->outside, 12U);
  EXPECT_EQ(o->first_outside, "token 2 of row 0");

  // Counts that do not add up, negative counts and missing tensors are refused.
  for (const auto& tensors :
       {std::vector<SafetensorsTensor>{i64("counts", {2, 4}, {1, 0, 0, 0, 1, 0, 0, 0}),
                                       i64("out_of_range", {2}, {0, 0}), i64("drawn", {1}, {2}),
                                       i64("repeated_calls", {1}, {0})},
        std::vector<SafetensorsTensor>{i64("counts", {2, 4}, {3, -1, 0, 0, 2, 0, 0, 0}),
                                       i64("out_of_range", {2}, {0, 0}), i64("drawn", {1}, {2}),
                                       i64("repeated_calls", {1}, {0})},
        std::vector<SafetensorsTensor>{i64("counts", {2, 4}, {2, 0, 0, 0, 2, 0, 0, 0}),
                                       i64("drawn", {1}, {2}), i64("repeated_calls", {1}, {0})}}) {
    const auto refused = sampling_distance(rows, file(dir, "bad.safetensors", tensors));
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code, codes::k_blob_malformed);
  }
}

} // namespace
} // namespace fib
