// Rules R2, R3 and R1: a raw definition repaired from a Level-10 dump of the same pass
// (--evidence), only where every captured call of its API proves the repair.

#include "../collect/l10_fixtures.hpp"
#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/collect/level10.hpp>
#include <fib/normalize/normalize.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

using namespace l10;
using testing::parse_or_die;
using testing::python;
using testing::TempDir;

// What FlashInfer's dumper writes for a 24-q-head, 8-kv-head model when it reads the KV heads
// from the wrong dimension (16 is the head_dim), with the plan-time indptr's dtype unseen.
Json misread_decode() {
  Json d = decode_definition(24, 16);
  d["name"] = "gqa_paged_decode_h24_kv16_d16_ps1";
  d["tags"] = {"fi_api:flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper.run",
               "status:verified"};
  d["inputs"]["kv_indptr"]["dtype"] = "unknown";
  return d;
}

struct Normalized {
  Json document;
  std::vector<RuleFinding> findings;
};

Normalized normalize_with(const Json& definition, const Level10Dump* evidence) {
  NormalizeOptions options;
  options.evidence = evidence;
  auto result = normalize_definition(parse_or_die(definition.dump()), options, python());
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message);
  if (!result) {
    return {};
  }
  return {result->document, result->findings};
}

const RuleFinding* finding(const Normalized& n, std::string_view code) {
  for (const RuleFinding& f : n.findings) {
    if (f.diagnostic.code == code) {
      return &f;
    }
  }
  return nullptr;
}

Level10Dump read(const TempDir& dump) {
  auto read = read_level10_dump(dump.path());
  EXPECT_TRUE(read.has_value());
  return read ? std::move(*read) : Level10Dump{};
}

TEST(NormalizeEvidence, CapturedShapesRepairTheHeadCountsAndTheName) {
  TempDir dump;
  write_call(dump, decode_plan(4242, 24, 8));
  write_call(dump, decode_run(4242, 24, 8));
  const Level10Dump evidence = read(dump);
  const Normalized n = normalize_with(misread_decode(), &evidence);
  const RuleFinding* r2 = finding(n, codes::k_normalize_r2);
  ASSERT_NE(r2, nullptr);
  EXPECT_EQ(r2->diagnostic.pointer, "/axes/num_kv_heads");
  EXPECT_EQ(r2->diagnostic.code, codes::k_normalize_r2);
  EXPECT_EQ(n.document["axes"]["num_qo_heads"]["value"], 24);
  EXPECT_EQ(n.document["axes"]["num_kv_heads"]["value"], 8);
  EXPECT_EQ(n.document["name"], "gqa_paged_decode_h24_kv8_d16_ps1");
  EXPECT_NE(n.document["description"].get<std::string>().find(
                "renamed from gqa_paged_decode_h24_kv16_d16_ps1"),
            std::string::npos);
  EXPECT_EQ(n.document["tags"][1], "status:unverified");
  EXPECT_EQ(finding(n, codes::k_normalize_n15), nullptr) << "nothing left to ask";
  // R1 runs on the repaired axes: the plan's indptr was int32.
  const RuleFinding* r1 = finding(n, codes::k_normalize_r1);
  ASSERT_NE(r1, nullptr);
  EXPECT_EQ(r1->diagnostic.pointer, "/inputs/kv_indptr/dtype");
  EXPECT_EQ(r1->diagnostic.code, codes::k_normalize_r1);
  EXPECT_EQ(r1->kind, FindingKind::applied);
  EXPECT_EQ(n.document["inputs"]["kv_indptr"]["dtype"], "int32");
  EXPECT_EQ(finding(n, codes::k_normalize_a3b_2), nullptr) << "R1 settled it first";
}

TEST(NormalizeEvidence, WithoutProofNothingChanges) {
  const Normalized alone = normalize_with(misread_decode(), nullptr);
  EXPECT_EQ(finding(alone, codes::k_normalize_r2), nullptr);
  EXPECT_NE(finding(alone, codes::k_normalize_n15), nullptr) << "still a question for a human";
  EXPECT_EQ(alone.document["name"], "gqa_paged_decode_h24_kv16_d16_ps1");

  TempDir disagreeing; // two processes that show different KV heads
  write_call(disagreeing, decode_plan(4242, 24, 8));
  write_call(disagreeing, decode_run(4242, 24, 8));
  write_call(disagreeing, decode_plan(4243, 24, 4));
  write_call(disagreeing, decode_run(4243, 24, 4));
  const Level10Dump evidence = read(disagreeing);
  const Normalized n = normalize_with(misread_decode(), &evidence);
  const RuleFinding* r2 = finding(n, codes::k_normalize_r2);
  ASSERT_NE(r2, nullptr);
  EXPECT_EQ(r2->kind, FindingKind::advice);
  EXPECT_EQ(n.document["axes"]["num_kv_heads"]["value"], 16);
  EXPECT_EQ(n.document["name"], "gqa_paged_decode_h24_kv16_d16_ps1");

  TempDir other_head_dim; // a call of another head_dim is no evidence for this definition
  write_call(other_head_dim, decode_plan(4242, 24, 8));
  Call run = decode_run(4242, 24, 8);
  run.inputs[0] = bf16("arg_1", {2, 24, 32});
  write_call(other_head_dim, run);
  const Level10Dump unrelated = read(other_head_dim);
  const Normalized untouched = normalize_with(misread_decode(), &unrelated);
  EXPECT_EQ(finding(untouched, codes::k_normalize_r2), nullptr);
  EXPECT_EQ(untouched.document["axes"]["num_kv_heads"]["value"], 16);
}

// An older dump's rmsnorm: eps declared as a 0-D tensor of unknown dtype.
Json rmsnorm_with_zero_dimensional_eps() {
  Json d = rmsnorm_definition();
  d["inputs"]["eps"] = Json{{"shape", Json::array()}, {"dtype", "unknown"}};
  return d;
}

TEST(NormalizeEvidence, ScalarsPassedAsNumbersLoseTheirZeroDimensionalShape) {
  TempDir dump;
  write_call(dump, rmsnorm_call(1, 4));
  write_call(dump, rmsnorm_call(2, 16, /*eps_by_keyword=*/true));
  const Level10Dump evidence = read(dump);
  const Normalized n = normalize_with(rmsnorm_with_zero_dimensional_eps(), &evidence);
  const RuleFinding* r3 = finding(n, codes::k_normalize_r3);
  ASSERT_NE(r3, nullptr);
  EXPECT_EQ(r3->diagnostic.code, codes::k_normalize_r3);
  EXPECT_EQ(r3->diagnostic.pointer, "/inputs/eps/shape");
  EXPECT_EQ(r3->kind, FindingKind::applied);
  EXPECT_NE(r3->diagnostic.message.find("passed 1e-06"), std::string::npos)
      << r3->diagnostic.message;
  EXPECT_TRUE(n.document["inputs"]["eps"]["shape"].is_null());
  EXPECT_EQ(n.document["inputs"]["eps"]["dtype"], "float32");
  EXPECT_EQ(finding(n, codes::k_normalize_n7), nullptr) << "no dtype question left";

  // Without evidence the shape stays, and the unknown dtype is a question for a human.
  const Normalized alone = normalize_with(rmsnorm_with_zero_dimensional_eps(), nullptr);
  EXPECT_EQ(finding(alone, codes::k_normalize_r3), nullptr);
  EXPECT_TRUE(alone.document["inputs"]["eps"]["shape"].is_array());
}

TEST(NormalizeEvidence, AScalarsDtypeFollowsTheValuesTheCallsPassed) {
  struct Case {
    std::vector<Json> values;
    const char* dtype;
  };
  const std::vector<Case> cases = {
      {{Json(3), Json(7)}, "int32"},
      {{Json(3), Json(std::int64_t{1} << 40)}, "int64"},
      {{Json(1), Json(0.5)}, "float32"},
      {{Json(true), Json(false)}, "bool"},
  };
  for (const Case& c : cases) {
    TempDir dump;
    for (std::size_t i = 0; i < c.values.size(); ++i) {
      Call call = rmsnorm_call(static_cast<int>(i) + 1, 4);
      call.input_metadata = Json{{"arg_2", c.values[i]}};
      write_call(dump, call);
    }
    const Level10Dump evidence = read(dump);
    const Normalized n = normalize_with(rmsnorm_with_zero_dimensional_eps(), &evidence);
    const RuleFinding* r3 = finding(n, codes::k_normalize_r3);
    ASSERT_NE(r3, nullptr) << c.dtype;
    EXPECT_EQ(r3->kind, FindingKind::applied);
    EXPECT_EQ(n.document["inputs"]["eps"]["dtype"], c.dtype);
    EXPECT_TRUE(n.document["inputs"]["eps"]["shape"].is_null());
  }
}

TEST(NormalizeEvidence, AZeroDimensionalTensorArgumentKeepsItsShape) {
  TempDir dump; // one call passed eps as a number, another as a 0-D tensor
  write_call(dump, rmsnorm_call(1, 4));
  Call tensor_eps = rmsnorm_call(2, 8);
  tensor_eps.input_metadata = Json::object();
  tensor_eps.inputs.push_back(bf16("arg_2", {}));
  write_call(dump, tensor_eps);
  const Level10Dump evidence = read(dump);
  const Normalized n = normalize_with(rmsnorm_with_zero_dimensional_eps(), &evidence);
  const RuleFinding* r3 = finding(n, codes::k_normalize_r3);
  ASSERT_NE(r3, nullptr);
  EXPECT_EQ(r3->kind, FindingKind::advice);
  EXPECT_EQ(r3->diagnostic.pointer, "/inputs/eps/shape");
  EXPECT_NE(r3->diagnostic.message.find("first 20260101_120000_002_pid4242_rmsnorm_call0002"),
            std::string::npos)
      << r3->diagnostic.message;
  EXPECT_TRUE(n.document["inputs"]["eps"]["shape"].is_array());

  // Every call passed a tensor: nothing to say.
  TempDir tensors;
  write_call(tensors, tensor_eps);
  const Level10Dump only_tensors = read(tensors);
  const Normalized kept = normalize_with(rmsnorm_with_zero_dimensional_eps(), &only_tensors);
  EXPECT_EQ(finding(kept, codes::k_normalize_r3), nullptr);
  EXPECT_TRUE(kept.document["inputs"]["eps"]["shape"].is_array());
}

} // namespace
} // namespace fib
