#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/run/run_config.hpp>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

namespace fib {
namespace {

using testing::code_pointers;
using testing::describe;
using testing::has;
using testing::parse_or_die;
using testing::TempDir;

Definition definition_of(std::string_view op_type, std::string_view dtype,
                         std::string_view tags = "[]", std::string_view name = "d") {
  DiagnosticList sink;
  const std::string text = fmt::format(
      R"({{"name":"{}","op_type":"{}","tags":{},"axes":{{"n":{{"type":"const","value":4}}}},
          "inputs":{{"x":{{"shape":["n"],"dtype":"{}"}}}},
          "outputs":{{"y":{{"shape":["n"],"dtype":"float32"}}}},
          "reference":"def run(x):\n    return x.float()\n"}})",
      name, op_type, tags, dtype);
  Definition definition = parse_definition(parse_or_die(text), sink);
  EXPECT_FALSE(sink.has_errors()) << describe(sink);
  return definition;
}

TEST(EvaluatorChoice, QuantizedKernelsAreLowBitAndTheOthersStandard) {
  EXPECT_EQ(evaluator_for(definition_of("gemm", "float16")), Evaluator::standard);
  EXPECT_EQ(evaluator_for(definition_of("moe", "bfloat16")), Evaluator::low_bit);
  EXPECT_EQ(evaluator_for(definition_of("gemm", "float8_e4m3fn")), Evaluator::low_bit);
  EXPECT_EQ(evaluator_for(definition_of("gemm", "float16", R"(["quantization:fp8_block"])")),
            Evaluator::low_bit);
  EXPECT_EQ(evaluator_for(definition_of("gemm", "float16", R"(["quant:nvfp4"])")),
            Evaluator::low_bit);
  EXPECT_EQ(evaluator_for(definition_of("gemm", "float16", R"(["status:verified"])")),
            Evaluator::standard);
}

TEST(RunConfigFile, LayersResolveFileThenOpTypeThenDefinitionThenCommandLine) {
  TempDir dir;
  const auto file = dir.write("settings.toml", R"(
num_trials = 2
iterations = 20
warmup_runs = 4

[op_type_config.gemm]
iterations = 30
atol = 0.001
cold_cache = true

[definition_config.special]
iterations = 40
evaluator = "low-bit"
)");
  DiagnosticList sink;
  const auto config = load_run_config(file, sink);
  ASSERT_TRUE(config) << describe(sink);
  EXPECT_TRUE(sink.items().empty()) << describe(sink);
  const EvaluateOptions base;
  const EvaluationOverrides none;

  const EvaluateOptions plain =
      evaluation_for(base, *config, none, definition_of("rmsnorm", "float32"));
  EXPECT_EQ(plain.trials, 2);
  EXPECT_EQ(plain.iterations, 20);
  EXPECT_EQ(plain.warmup, 4);
  EXPECT_EQ(plain.atol, base.atol);
  EXPECT_EQ(plain.evaluator, Evaluator::standard);
  EXPECT_FALSE(plain.required_matched_ratio);

  const EvaluateOptions gemm =
      evaluation_for(base, *config, none, definition_of("gemm", "float32"));
  EXPECT_EQ(gemm.iterations, 30);
  EXPECT_EQ(gemm.atol, 0.001);
  EXPECT_EQ(gemm.cold_cache, ColdCache::yes);
  EXPECT_EQ(plain.cold_cache, ColdCache::no);

  const EvaluateOptions special =
      evaluation_for(base, *config, none, definition_of("gemm", "float32", "[]", "special"));
  EXPECT_EQ(special.iterations, 40);
  EXPECT_EQ(special.atol, 0.001);
  EXPECT_EQ(special.evaluator, Evaluator::low_bit);
  ASSERT_TRUE(special.required_matched_ratio);
  EXPECT_EQ(*special.required_matched_ratio, k_default_low_bit_matched_ratio);

  EvaluationOverrides flags;
  flags.iterations = 5;
  flags.required_matched_ratio = 0.8;
  const EvaluateOptions overridden =
      evaluation_for(base, *config, flags, definition_of("gemm", "float32", "[]", "special"));
  EXPECT_EQ(overridden.iterations, 5);
  EXPECT_EQ(*overridden.required_matched_ratio, 0.8);
  EXPECT_EQ(overridden.trials, 2);
}

TEST(RunConfigFile, SamplingSettingsUnderExtraAndTheSamplingEvaluatorForSamplers) {
  TempDir dir;
  const auto file = dir.write("settings.toml", R"(
[op_type_config.sampling.extra]
sampling_validation_trials = 7
sampling_tvd_threshold = 0.1

[definition_config.special.extra]
sampling_samples = 1234
)");
  DiagnosticList sink;
  const auto config = load_run_config(file, sink);
  ASSERT_TRUE(config) << describe(sink);
  EXPECT_TRUE(sink.items().empty()) << describe(sink);
  DiagnosticList parsed;
  const Definition sampler = parse_definition(
      parse_or_die(R"({"name":"special","op_type":"sampling","axes":{"b":{"type":"var"},
        "v":{"type":"const","value":8}},"inputs":{"probs":{"shape":["b","v"],"dtype":"float32"}},
        "outputs":{"samples":{"shape":["b"],"dtype":"int64"}},
        "reference":"def run(probs):\n    return probs.argmax(-1)\n"})"),
      parsed);
  ASSERT_FALSE(parsed.has_errors()) << describe(parsed);
  EXPECT_EQ(evaluator_for(sampler), Evaluator::sampling);
  const EvaluateOptions options = evaluation_for(EvaluateOptions{}, *config, {}, sampler);
  EXPECT_EQ(options.evaluator, Evaluator::sampling);
  EXPECT_EQ(options.sampling.validation_trials, 7);
  EXPECT_EQ(options.sampling.tvd_threshold, 0.1);
  EXPECT_EQ(options.sampling.samples_per_row, 1234);
  EXPECT_EQ(sampling_samples_on(options.sampling, SmokeDevice::cpu), 1234);
  EXPECT_EQ(sampling_samples_on(SamplingSettings{}, SmokeDevice::cpu), k_sampling_samples_cpu);
  EXPECT_EQ(sampling_samples_on(SamplingSettings{}, SmokeDevice::cuda), k_sampling_samples_cuda);
  EvaluationOverrides flags;
  flags.sampling_samples = 99;
  flags.evaluator = EvaluatorChoice::standard;
  const EvaluateOptions overridden = evaluation_for(EvaluateOptions{}, *config, flags, sampler);
  EXPECT_EQ(overridden.sampling.samples_per_row, 99);
  EXPECT_EQ(overridden.evaluator, Evaluator::standard);
  // A sampling op_type without samples (a renorm kernel) keeps the standard evaluator.
  EXPECT_EQ(evaluator_for(definition_of("sampling", "float32")), Evaluator::standard);
}

TEST(RunConfigFile, JsonHasTheSameLayoutAndAStandardEvaluatorCanBeForced) {
  TempDir dir;
  const auto file = dir.write(
      "settings.json",
      R"({"op_type_config": {"moe": {"evaluator": "standard", "tolerance": "per-dtype"}}})");
  DiagnosticList sink;
  const auto config = load_run_config(file, sink);
  ASSERT_TRUE(config) << describe(sink);
  const EvaluateOptions moe =
      evaluation_for(EvaluateOptions{}, *config, {}, definition_of("moe", "float32"));
  EXPECT_EQ(moe.evaluator, Evaluator::standard);
  EXPECT_FALSE(moe.required_matched_ratio);
  EXPECT_EQ(moe.tolerance_table, ToleranceTable::on);
}

TEST(RunConfigFile, EveryProblemIsNamedWithItsPointer) {
  TempDir dir;
  const auto file = dir.write("settings.json", R"({
  "iterashuns": 3,
  "num_trials": 0,
  "cold_cache": "yes",
  "timeout_seconds": 10,
  "op_type_config": {"gemm": {"atol": "small", "required_matched_ratio": 1.5},
                     "moe": 3},
  "definition_config": {"d": {"evaluator": "fuzzy", "extra": {"sampling_tvd_threshold": 2,
                                                              "sampling_sample": 1}}}
})");
  DiagnosticList sink;
  EXPECT_FALSE(load_run_config(file, sink));
  for (const char* pointer :
       {"/iterashuns", "/num_trials", "/cold_cache", "/timeout_seconds",
        "/op_type_config/gemm/atol", "/op_type_config/gemm/required_matched_ratio",
        "/op_type_config/moe", "/definition_config/d/evaluator",
        "/definition_config/d/extra/sampling_tvd_threshold",
        "/definition_config/d/extra/sampling_sample"}) {
    EXPECT_TRUE(has(sink, codes::k_run_config_invalid, pointer)) << pointer << "\n"
                                                                 << describe(sink);
  }
  const std::string text = describe(sink);
  EXPECT_NE(text.find("did you mean 'extra.sampling_samples'"), std::string::npos) << text;
  EXPECT_NE(text.find("between 0 and 1, not 2"), std::string::npos) << text;
  EXPECT_NE(text.find("did you mean 'iterations'"), std::string::npos) << text;
  EXPECT_NE(text.find("(--timeout)"), std::string::npos) << text;
  EXPECT_NE(text.find("between 1 and 1000"), std::string::npos) << text;
  EXPECT_EQ(code_pointers(sink).size(), 10u) << text;
  for (const auto& d : sink.items()) {
    EXPECT_EQ(d.file, file);
    EXPECT_GT(d.line, 0) << d.pointer;
  }
}

TEST(RunConfigFile, ScratchLimitAtTheTopOnlyAndTheAdaptiveStopInAnyLayer) {
  TempDir dir;
  DiagnosticList sink;
  const auto good = dir.write("good.toml", "scratch_limit = 268435456\niterations = 5\n"
                                           "stop_at_ci = 0.02\n");
  const auto config = load_run_config(good, sink);
  ASSERT_TRUE(config) << describe(sink);
  EXPECT_EQ(config->scratch_limit, std::optional<std::uint64_t>(268435456));
  EXPECT_EQ(config->all.iterations, 5);
  EXPECT_EQ(config->all.stop_at_ci, 0.02);

  const auto bad = dir.write("bad.toml", R"(scratch_limit = 1000
[op_type_config.gemm]
scratch_limit = 268435456
stop_at_ci = 1.5
)");
  DiagnosticList problems;
  EXPECT_FALSE(load_run_config(bad, problems));
  EXPECT_TRUE(has(problems, codes::k_run_config_invalid, "/scratch_limit")) << describe(problems);
  EXPECT_TRUE(has(problems, codes::k_run_config_invalid, "/op_type_config/gemm/scratch_limit"))
      << describe(problems);
  const std::string text = describe(problems);
  EXPECT_NE(text.find("at least 1048576, not 1000"), std::string::npos) << text;
  EXPECT_NE(text.find("a setting of the whole run"), std::string::npos) << text;
  EXPECT_TRUE(has(problems, codes::k_run_config_invalid, "/op_type_config/gemm/stop_at_ci"));
  EXPECT_NE(text.find("above 0 and under 1, not 1.5"), std::string::npos) << text;
}

TEST(RunConfigFile, HostileOrBrokenFilesAreErrorsNotCrashes) {
  TempDir dir;
  std::string deep = "a";
  for (int i = 0; i < 50000; ++i) {
    deep += ".a";
  }
  const std::map<std::string, std::string> cases = {
      {"syntax.toml", "num_trials = \n"},
      {"syntax.json", "{\"num_trials\": }"},
      {"array.json", "[1, 2]"},
      {"deep.toml", deep + " = 1\n"},
      {"date.toml", "num_trials = 1979-05-27\n"},
      {"empty.json", ""},
      {"eval_config.yaml", "op_type_config:\n  moe:\n    required_matched_ratio: 0.95\n"},
  };
  for (const auto& [name, text] : cases) {
    const auto file = dir.write(name, text);
    DiagnosticList sink;
    EXPECT_FALSE(load_run_config(file, sink)) << name;
    ASSERT_FALSE(sink.items().empty()) << name;
    EXPECT_EQ(sink.items().front().code, codes::k_run_config_invalid) << name;
  }
  DiagnosticList sink;
  EXPECT_FALSE(load_run_config(dir.path() / "absent.toml", sink));
  ASSERT_EQ(sink.items().size(), 1u);
  EXPECT_NE(sink.items().front().message.find("cannot be read"), std::string::npos);
}

} // namespace
} // namespace fib
