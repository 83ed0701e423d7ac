#include <fib/base/codes.hpp>
#include <fib/run/run.hpp>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <string>

namespace fib {
namespace {

TEST(RunShardText, ReadsKOfN) {
  const auto shard = parse_run_shard("3/8");
  ASSERT_TRUE(shard.has_value());
  EXPECT_EQ(shard->index, 3u);
  EXPECT_EQ(shard->count, 8u);
  ASSERT_TRUE(parse_run_shard("1/1").has_value());
  ASSERT_TRUE(parse_run_shard("10000/10000").has_value());
}

TEST(RunShardText, RefusesWhatIsNotKOfN) {
  const std::map<std::string, std::string> cases = {
      {"", "expected K/N"},
      {"3", "expected K/N"},
      {"0/4", "K must be between 1 and N (4)"},
      {"5/4", "K must be between 1 and N (4)"},
      {"1/0", "N must be between 1 and 10000"},
      {"1/10001", "N must be between 1 and 10000"},
      {"-1/4", "whole numbers"},
      {"1/4/2", "whole numbers"},
      {"1 /4", "whole numbers"},
      {"a/b", "whole numbers"},
      {"1/99999999999999999999", "whole numbers"},
  };
  for (const auto& [text, why] : cases) {
    const auto shard = parse_run_shard(text);
    ASSERT_FALSE(shard.has_value()) << text;
    EXPECT_EQ(shard.error().code, codes::k_usage) << text;
    EXPECT_NE(shard.error().message.find(why), std::string::npos)
        << text << ": " << shard.error().message;
    EXPECT_EQ(shard.error().message.rfind(fmt::format("--shard '{}': ", text), 0), 0u) << text;
  }
}

// Every pair falls in exactly one shard, the same one each time, and no shard is left empty on a
// few hundred pairs; the name is hashed as a whole (definition and solution cannot trade bytes).
TEST(RunShardOf, PartitionsThePairsStablyAndSpreadsThem) {
  for (const std::size_t count : {2u, 3u, 7u}) {
    std::map<std::size_t, std::size_t> sizes;
    for (int d = 0; d < 20; ++d) {
      for (int s = 0; s < 15; ++s) {
        const std::string definition = fmt::format("def_{}", d);
        const std::string solution = fmt::format("sol_{}", s);
        const std::size_t shard = shard_of(definition, solution, count);
        ASSERT_GE(shard, 1u);
        ASSERT_LE(shard, count);
        EXPECT_EQ(shard_of(definition, solution, count), shard);
        ++sizes[shard];
      }
    }
    ASSERT_EQ(sizes.size(), count);
    for (const auto& [shard, size] : sizes) {
      EXPECT_GT(size, 300u / count / 2) << "shard " << shard << " of " << count;
    }
  }
  EXPECT_EQ(shard_of("anything", "at all", 1), 1u);
  std::size_t differs = 0;
  for (int i = 0; i < 64; ++i) {
    differs +=
        shard_of(fmt::format("a{}", i), "bc", 1000) != shard_of(fmt::format("a{}b", i), "c", 1000)
            ? 1
            : 0;
  }
  EXPECT_GT(differs, 50u);
}

TEST(RunDevicesText, ReadsOneKindOfDevicesEachGpuOnce) {
  const auto gpus = parse_run_devices("cuda:0,cuda:3,cuda");
  ASSERT_FALSE(gpus.has_value()); // "cuda" is cuda:0, named twice
  const auto two = parse_run_devices("cuda:1,cuda:0");
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->device, SmokeDevice::cuda);
  EXPECT_EQ(two->gpus, (std::vector<std::optional<int>>{1, 0}));
  const auto cpus = parse_run_devices("cpu,cpu");
  ASSERT_TRUE(cpus.has_value());
  EXPECT_EQ(cpus->device, SmokeDevice::cpu);
  EXPECT_EQ(cpus->gpus, (std::vector<std::optional<int>>{std::nullopt, std::nullopt}));
  const std::map<std::string, std::string> refused = {
      {"", "is not a device"},
      {"gpu", "is not a device"},
      {"cuda:", "is not a device"},
      {"cuda:1x", "is not a device"},
      {"cuda:123456", "is not a device"},
      {"cpu,cuda:0", "of one kind"},
      {"cuda:2,cuda:2", "cuda:2 is named twice"},
      {"cpu,", "is not a device"},
  };
  for (const auto& [text, why] : refused) {
    const auto parsed = parse_run_devices(text);
    ASSERT_FALSE(parsed.has_value()) << text;
    EXPECT_EQ(parsed.error().code, codes::k_usage) << text;
    EXPECT_NE(parsed.error().message.find(why), std::string::npos) << parsed.error().message;
  }
  std::string many = "cpu";
  for (int i = 0; i < 64; ++i) {
    many += ",cpu";
  }
  ASSERT_FALSE(parse_run_devices(many).has_value());
}

TEST(RunSettingsRecord, NamesWhatChangesAResultAndNothingElse) {
  EvaluateOptions evaluate;
  evaluate.warmup = 0;
  evaluate.iterations = 7;
  evaluate.trials = 3;
  evaluate.cold_cache = ColdCache::yes;
  evaluate.atol = 0.5;
  evaluate.rtol = 0.25;
  evaluate.tolerance_table = ToleranceTable::on;
  evaluate.evaluator = Evaluator::low_bit;
  evaluate.required_matched_ratio = 0.9;
  EXPECT_EQ(
      run_settings(evaluate, SmokeDevice::cuda).dump(),
      R"({"device":"cuda","warmup":0,"iterations":7,"trials":3,"cold_cache":true,"atol":0.5,"rtol":0.25,"tolerance":"per-dtype","evaluator":"low-bit","required_matched_ratio":0.9,"perturbed_inputs":true})");
  evaluate.tolerance_table = ToleranceTable::off;
  evaluate.evaluator = Evaluator::standard;
  evaluate.required_matched_ratio.reset();
  evaluate.cold_cache = ColdCache::no;
  evaluate.build_timeout = std::chrono::milliseconds(1);
  evaluate.cache = "/elsewhere";
  const Json settings = run_settings(evaluate, SmokeDevice::cpu);
  EXPECT_EQ(settings["tolerance"], "fixed");
  EXPECT_EQ(settings["evaluator"], "standard");
  EXPECT_TRUE(settings["required_matched_ratio"].is_null());
  EXPECT_EQ(settings["cold_cache"], false);
  EXPECT_EQ(settings.size(), 11u);
}

} // namespace
} // namespace fib
