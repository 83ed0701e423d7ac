// Reference execution through the real fib-worker: the build check, smoke runs of good and broken
// references, and hostile ones (endless loop, huge allocation, crash, print) that must leave fib
// and the next job unharmed. Skipped when fib was built without torch.

#include "test_support.hpp"

#include <fib/base/build_features.hpp>
#include <fib/base/codes.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/model/definition.hpp>
#include <fib/normalize/normalize.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace fib {
namespace {

#ifdef FIB_WORKER_BINARY
constexpr const char* k_worker = FIB_WORKER_BINARY;
#else
constexpr const char* k_worker = "";
#endif

#define REQUIRE_WORKER()                                                                           \
  do {                                                                                             \
    if (std::string_view(k_worker).empty()) {                                                      \
      GTEST_SKIP() << "fib was built without torch (no fib-worker)";                               \
    }                                                                                              \
  } while (false)

ReferenceRunnerOptions options() {
  ReferenceRunnerOptions out;
  out.worker = k_worker;
  out.job_timeout = std::chrono::milliseconds(20'000);
  return out;
}

// A definition y = f(x, w) with x: [n, h] bfloat16, w: [h] bfloat16, y: [n, h] bfloat16.
Definition definition_with(const std::string& reference, const std::string& outputs = "") {
  Json d = Json::parse(R"({
    "name": "t", "op_type": "test",
    "axes": {"n": {"type": "var"}, "h": {"type": "const", "value": 8}},
    "inputs": {"x": {"shape": ["n", "h"], "dtype": "bfloat16"},
               "w": {"shape": ["h"], "dtype": "bfloat16"}},
    "outputs": {"y": {"shape": ["n", "h"], "dtype": "bfloat16"}}})");
  d["reference"] = reference;
  if (!outputs.empty()) {
    d["outputs"] = Json::parse(outputs);
  }
  DiagnosticList sink;
  Definition out = parse_definition(testing::parse_or_die(d.dump()), sink);
  EXPECT_FALSE(sink.has_errors()) << testing::describe(sink);
  return out;
}

constexpr const char* k_good = "import torch\n\ndef run(x, w):\n    return x * w\n";

bool has(const ReferenceOutcome& outcome, std::string_view code, std::string_view text = "") {
  return std::any_of(outcome.diagnostics.begin(), outcome.diagnostics.end(),
                     [&](const Diagnostic& d) {
                       return d.code == code && d.message.find(text) != std::string::npos;
                     });
}

std::string describe(const ReferenceOutcome& outcome) {
  std::string out;
  for (const auto& d : outcome.diagnostics) {
    out += d.code + " " + d.pointer + ": " + d.message + "\n";
  }
  return out;
}

TEST(ReferenceRunner, AGoodReferenceBuildsAndSmokeRuns) {
  REQUIRE_WORKER();
  ReferenceRunner runner(options());
  const auto definition = definition_with(k_good);
  const auto build = runner.check_build(definition);
  EXPECT_EQ(build.verdict, ReferenceVerdict::ok) << describe(build);
  EXPECT_TRUE(has(build, codes::k_reference_ok, "reference build: ok"));
  const auto smoke = runner.smoke_run(definition);
  EXPECT_EQ(smoke.verdict, ReferenceVerdict::ok) << describe(smoke);
  EXPECT_TRUE(has(smoke, codes::k_reference_ok,
                  "smoke run: ok (1 output as declared; synthesized inputs; h=8, n=4"));
  ASSERT_TRUE(runner.worker_info().has_value());
  EXPECT_FALSE(runner.worker_info()->torch_version.empty());
  EXPECT_EQ(runner.worker_starts(), 1u);
}

TEST(ReferenceRunner, BuildFailuresUseTheOldToolsMessages) {
  REQUIRE_WORKER();
  ReferenceRunner runner(options());
  const auto syntax = runner.check_build(definition_with("def run(x, w)\n    return x\n"));
  EXPECT_EQ(syntax.verdict, ReferenceVerdict::failed);
  EXPECT_TRUE(has(syntax, codes::k_reference_build_failed,
                  "reference build failed: Failed importing module 't__reference' from sources: "
                  "SyntaxError"))
      << describe(syntax);
  const auto no_run = runner.check_build(definition_with("def main(x, w):\n    return x\n"));
  EXPECT_TRUE(has(no_run, codes::k_reference_build_failed,
                  "Entry symbol 'run' not found in module 't__reference'"))
      << describe(no_run);
  const auto arity = runner.check_build(definition_with("def run(x):\n    return x\n"));
  EXPECT_TRUE(has(arity, codes::k_reference_build_failed,
                  "Value-returning style callable: expected 2 positional parameters, but "
                  "signature '(x)' is incompatible"))
      << describe(arity);
  const auto annotation = runner.check_build(
      definition_with("import torch\ndef run(x, w) -> tuple[torch.Tensor, torch.Tensor]:\n"
                      "    return x, w\n"));
  EXPECT_TRUE(has(annotation, codes::k_reference_build_failed, "2 elements for 1 outputs"))
      << describe(annotation);
  // Extra parameters with defaults bind fine.
  const auto defaults =
      runner.check_build(definition_with("def run(x, w, eps=1e-6):\n    return x\n"));
  EXPECT_EQ(defaults.verdict, ReferenceVerdict::ok) << describe(defaults);
}

TEST(ReferenceRunner, WrongDtypeShapeAndCountAreErrorsWithPointers) {
  REQUIRE_WORKER();
  ReferenceRunner runner(options());
  const auto dtype = runner.smoke_run(definition_with("def run(x, w):\n    return x.float()\n"));
  EXPECT_EQ(dtype.verdict, ReferenceVerdict::failed);
  ASSERT_TRUE(
      has(dtype, codes::k_smoke_output_dtype, "output 'y' has dtype float32, declared bfloat16"))
      << describe(dtype);
  ASSERT_EQ(dtype.diagnostics.size(), 2u) << describe(dtype);
  EXPECT_EQ(dtype.diagnostics[0].message, "reference build: ok");
  EXPECT_EQ(dtype.diagnostics[1].pointer, "/outputs/y/dtype");
  const auto shape = runner.smoke_run(definition_with("def run(x, w):\n    return x[:, :4]\n"));
  ASSERT_TRUE(
      has(shape, codes::k_smoke_output_shape, "output 'y' has shape [4, 4], declared [n=4, h=8]"))
      << describe(shape);
  EXPECT_EQ(shape.diagnostics.back().pointer, "/outputs/y/shape");
  const auto count = runner.smoke_run(definition_with("def run(x, w):\n    return x, w\n"));
  EXPECT_TRUE(has(count, codes::k_smoke_output_count, "returned 2 values for 1 declared output"))
      << describe(count);
}

TEST(ReferenceRunner, ExceptionsComeBackWithATracebackIntoTheReference) {
  REQUIRE_WORKER();
  ReferenceRunner runner(options());
  const auto raised = runner.smoke_run(
      definition_with("def helper(x):\n    raise ValueError('bad shape ' + str(tuple(x.shape)))\n\n"
                      "def run(x, w):\n    return helper(x)\n"));
  EXPECT_EQ(raised.verdict, ReferenceVerdict::failed);
  EXPECT_TRUE(has(raised, codes::k_smoke_exception, "raised ValueError: bad shape (4, 8)"))
      << describe(raised);
  EXPECT_TRUE(has(raised, codes::k_smoke_exception, "File \"<reference:t>\", line 2, in helper"))
      << describe(raised);
  const auto missing =
      runner.smoke_run(definition_with("def run(x, w):\n    return _rope_freqs(x) * w\n"));
  EXPECT_TRUE(has(missing, codes::k_smoke_missing_helper,
                  "the reference calls '_rope_freqs', which it never defines"))
      << describe(missing);
}

TEST(ReferenceRunner, ATypoInATorchNameIsAnErrorNotASkip) {
  REQUIRE_WORKER();
  ReferenceRunner runner(options());
  const auto typo = runner.smoke_run(
      definition_with("import torch\ndef run(x, w):\n    return torch.sofmax(x, -1)\n"));
  EXPECT_EQ(typo.verdict, ReferenceVerdict::failed) << describe(typo);
  EXPECT_TRUE(has(typo, codes::k_smoke_exception, "has no attribute 'sofmax'")) << describe(typo);
  const auto unbound = runner.smoke_run(
      definition_with("def run(x, w):\n    if False:\n        y = x\n    return y\n"));
  EXPECT_TRUE(has(unbound, codes::k_smoke_exception, "raised UnboundLocalError"))
      << describe(unbound);
}

TEST(ReferenceRunner, InputsComeFromTheInitWhenItRuns) {
  REQUIRE_WORKER();
  ReferenceRunner runner(options());
  // The init picks its own batch size (6) and names `x` by the API's name `input`.
  const std::string init =
      "import torch\n\ndef _t_init(*, n, h=8, device='cuda', seed=0):\n"
      "    torch.manual_seed(seed)\n"
      "    return {'input': torch.ones(n + 2, h, dtype=torch.bfloat16, device=device),\n"
      "            'w': torch.ones(h, dtype=torch.bfloat16, device=device)}\n";
  const auto from_init = runner.smoke_run(definition_with(k_good), init);
  EXPECT_EQ(from_init.verdict, ReferenceVerdict::ok) << describe(from_init);
  EXPECT_TRUE(has(from_init, codes::k_reference_ok, "inputs from the definition's init; h=8, n=6"))
      << describe(from_init);
  // An init that needs flashinfer falls back to synthesized inputs and says why.
  const auto fallback = runner.smoke_run(
      definition_with(k_good), "def _t_init(*, n, device='cuda'):\n    import flashinfer\n");
  EXPECT_EQ(fallback.verdict, ReferenceVerdict::ok) << describe(fallback);
  EXPECT_TRUE(has(fallback, codes::k_reference_ok,
                  "synthesized inputs; init not used: its init needs the flashinfer package"))
      << describe(fallback);
  // An init that cannot even be defined on this torch (the dumper's shared helpers use float8).
  const auto old_torch =
      runner.smoke_run(definition_with(k_good), "import torch\nFP8 = torch.float8_e4m3fn\ndef "
                                                "_t_init(*, n, device='cuda'):\n    return {}\n");
  if (!runner.worker_info()->float8) {
    EXPECT_TRUE(has(old_torch, codes::k_reference_ok, "init not used: its init does not run here"))
        << describe(old_torch);
  }
}

TEST(ReferenceRunner, AnEndlessLoopIsStoppedAndTheNextJobRuns) {
  REQUIRE_WORKER();
  auto opts = options();
  opts.job_timeout = std::chrono::milliseconds(1500);
  ReferenceRunner runner(opts);
  ASSERT_EQ(runner.check_build(definition_with(k_good)).verdict, ReferenceVerdict::ok);
  const auto looped =
      runner.smoke_run(definition_with("def run(x, w):\n    while True:\n        pass\n"));
  EXPECT_EQ(looped.verdict, ReferenceVerdict::failed);
  EXPECT_TRUE(has(looped, codes::k_smoke_timeout, "ran past the 1.5 s timeout"))
      << describe(looped);
  const auto next = runner.smoke_run(definition_with(k_good));
  EXPECT_EQ(next.verdict, ReferenceVerdict::ok) << describe(next);
  EXPECT_EQ(runner.worker_starts(), 2u);
}

TEST(ReferenceRunner, AHugeAllocationHitsTheMemoryLimitNotTheMachine) {
  REQUIRE_WORKER();
  if (k_built_with_address_sanitizer) {
    GTEST_SKIP() << "an AddressSanitizer build does not cap the worker's address space";
  }
  auto opts = options();
  opts.address_space = std::uintmax_t{6} << 30;
  ReferenceRunner runner(opts);
  const auto huge = runner.smoke_run(definition_with(
      "import torch\ndef run(x, w):\n    big = torch.empty(1 << 40, dtype=torch.uint8)\n"
      "    return x\n"));
  EXPECT_EQ(huge.verdict, ReferenceVerdict::failed);
  EXPECT_TRUE(has(huge, codes::k_smoke_exception, "RuntimeError")) << describe(huge);
  EXPECT_TRUE(has(huge, codes::k_smoke_exception, "allocate")) << describe(huge);
  EXPECT_EQ(runner.smoke_run(definition_with(k_good)).verdict, ReferenceVerdict::ok);
}

TEST(ReferenceRunner, AWorkerCrashIsADiagnosticAndTheWorkerRestarts) {
  REQUIRE_WORKER();
  ReferenceRunner runner(options());
  const auto crashed =
      runner.smoke_run(definition_with("import os\ndef run(x, w):\n    os.abort()\n"));
  EXPECT_EQ(crashed.verdict, ReferenceVerdict::failed);
  EXPECT_TRUE(has(crashed, codes::k_worker_crashed, "signal 6")) << describe(crashed);
  EXPECT_EQ(runner.smoke_run(definition_with(k_good)).verdict, ReferenceVerdict::ok);
  EXPECT_EQ(runner.worker_starts(), 2u);
}

TEST(ReferenceRunner, PrintAndGlobalsStayInsideTheirReference) {
  REQUIRE_WORKER();
  ReferenceRunner runner(options());
  const auto noisy = runner.smoke_run(definition_with(
      "import sys\nK = 3\ndef run(x, w):\n    print('{\"id\": 0}')\n    sys.stdout.flush()\n"
      "    return x * w\n"));
  EXPECT_EQ(noisy.verdict, ReferenceVerdict::ok) << describe(noisy);
  // A second reference does not see the first one's global K.
  const auto isolated = runner.smoke_run(definition_with("def run(x, w):\n    return x * K\n"));
  EXPECT_TRUE(has(isolated, codes::k_smoke_missing_helper, "'K'")) << describe(isolated);
}

TEST(ReferenceRunner, SkipsSayWhy) {
  REQUIRE_WORKER();
  auto opts = options();
  opts.max_bytes = 100;
  ReferenceRunner runner(opts);
  const auto big = runner.smoke_run(definition_with(k_good));
  EXPECT_EQ(big.verdict, ReferenceVerdict::skipped);
  EXPECT_TRUE(has(big, codes::k_smoke_skipped, "above --max-bytes 100 bytes")) << describe(big);
  // The skip is decided before any input is built, but the build check still runs.
  EXPECT_TRUE(has(big, codes::k_reference_ok, "reference build: ok")) << describe(big);

  ReferenceRunner fp8_runner(options());
  const auto fp8 = fp8_runner.smoke_run(
      definition_with(k_good, R"({"y": {"shape": ["n", "h"], "dtype": "bfloat16"}})"));
  ASSERT_EQ(fp8.verdict, ReferenceVerdict::ok);
  Definition with_fp8 = definition_with(k_good);
  with_fp8.inputs[1].second.dtype = DType::float8_e4m3fn;
  const auto skipped = fp8_runner.smoke_run(with_fp8);
  if (fp8_runner.worker_info()->float8) {
    EXPECT_NE(skipped.verdict, ReferenceVerdict::skipped) << describe(skipped);
  } else {
    EXPECT_EQ(skipped.verdict, ReferenceVerdict::skipped);
    EXPECT_TRUE(has(skipped, codes::k_smoke_skipped, "float8 needs torch 2.1 or later"))
        << describe(skipped);
  }
}

TEST(ReferenceRunner, AMissingWorkerIsUnavailableNotACrash) {
  auto opts = options();
  opts.worker = "/nonexistent/fib-worker";
  ReferenceRunner runner(opts);
  const auto outcome = runner.check_build(definition_with(k_good));
  EXPECT_EQ(outcome.verdict, ReferenceVerdict::unavailable);
  EXPECT_TRUE(has(outcome, codes::k_worker_unavailable, "/nonexistent/fib-worker"))
      << describe(outcome);
}

TEST(ReferenceRunner, CudaRunsWhereThereIsADevice) {
  REQUIRE_WORKER();
  auto opts = options();
  opts.device = SmokeDevice::cuda;
  ReferenceRunner runner(opts);
  const auto outcome = runner.smoke_run(definition_with(k_good));
  ASSERT_TRUE(runner.worker_info().has_value());
  if (!runner.worker_info()->cuda) {
    EXPECT_EQ(outcome.verdict, ReferenceVerdict::skipped);
    EXPECT_TRUE(has(outcome, codes::k_smoke_skipped, "no CUDA device")) << describe(outcome);
    GTEST_SKIP() << "no CUDA device or a CPU-only libtorch";
  }
  EXPECT_EQ(outcome.verdict, ReferenceVerdict::ok) << describe(outcome);
  EXPECT_TRUE(has(outcome, codes::k_reference_ok, "on cuda")) << describe(outcome);
}

} // namespace
} // namespace fib

namespace fib {
namespace {

Definition load_definition(const std::filesystem::path& file) {
  DiagnosticList sink;
  auto document = parse_json(testing::read_file(file), file, sink);
  EXPECT_TRUE(document.has_value()) << file;
  return document ? parse_definition(*document, sink) : Definition{};
}

// Done-means of issue 7: every definition of the shared dataset smoke-runs OK or is skipped with
// a specific reason; none fails.
TEST(ReferenceCorpus, EveryDatasetDefinitionRunsOrSaysWhyNot) {
  REQUIRE_WORKER();
  const auto root = testing::corpus_dir() / "dataset" / "definitions";
  if (!std::filesystem::is_directory(root)) {
    GTEST_SKIP() << "no shared corpus";
  }
  ReferenceRunner runner(options());
  std::size_t ok = 0;
  std::size_t skipped = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".json") {
      continue;
    }
    const Definition definition = load_definition(entry.path());
    const auto build = runner.check_build(definition);
    ASSERT_EQ(build.verdict, ReferenceVerdict::ok) << entry.path() << "\n" << describe(build);
    const auto smoke = runner.smoke_run(definition);
    ASSERT_NE(smoke.verdict, ReferenceVerdict::failed) << entry.path() << "\n" << describe(smoke);
    ASSERT_NE(smoke.verdict, ReferenceVerdict::unavailable) << describe(smoke);
    // The build's note, then the smoke run's.
    ASSERT_EQ(smoke.diagnostics.size(), 2u) << describe(smoke);
    EXPECT_EQ(smoke.diagnostics[0].message, "reference build: ok");
    if (smoke.verdict == ReferenceVerdict::ok) {
      ++ok;
    } else {
      ++skipped;
      // A specific reason, not a bare "skipped".
      EXPECT_EQ(smoke.diagnostics[1].code, codes::k_smoke_skipped);
      EXPECT_GT(smoke.diagnostics[1].message.size(), std::string("smoke run skipped: ").size() + 10)
          << describe(smoke);
    }
  }
  EXPECT_GE(ok, 10u);
  EXPECT_EQ(ok + skipped, 19u);
}

// The normalized dumps: the real reference bugs dumper.md §2/§4.3 reports, where this torch can
// run them.
TEST(ReferenceCorpus, NormalizedDumpsShowTheKnownReferenceBugs) {
  REQUIRE_WORKER();
  const auto dumps = testing::corpus_dir() / "dumps";
  if (!std::filesystem::is_directory(dumps)) {
    GTEST_SKIP() << "no shared corpus";
  }
  ReferenceRunner runner(options());
  const auto smoke_of = [&](const std::string& name) {
    DiagnosticList sink;
    const auto raw = testing::parse_or_die(testing::read_file(dumps / (name + ".json")));
    auto normalized = normalize_definition(raw, {}, testing::python());
    EXPECT_TRUE(normalized.has_value()) << name;
    const auto text = canonical_json_text(normalized->document);
    return runner.smoke_run(parse_definition(testing::parse_or_die(text), sink));
  };
  const auto merge = smoke_of("merge_state_h32_d128");
  EXPECT_EQ(merge.verdict, ReferenceVerdict::failed);
  EXPECT_TRUE(has(merge, codes::k_smoke_output_dtype,
                  "output 'v_merged' has dtype float32, declared bfloat16"))
      << describe(merge);
  const auto rope = smoke_of("rope_h32_kv8_d128");
  EXPECT_TRUE(has(rope, codes::k_smoke_missing_helper, "'_rope_freqs'")) << describe(rope);
  EXPECT_EQ(smoke_of("rmsnorm_h7168").verdict, ReferenceVerdict::ok);
  EXPECT_EQ(smoke_of("gqa_paged_decode_h32_kv8_d128_ps16").verdict, ReferenceVerdict::ok);
  const auto quant = smoke_of("rmsnorm_quant_h7168");
  if (!runner.worker_info()->float8) {
    EXPECT_TRUE(has(quant, codes::k_smoke_skipped, "torch.float8_e4m3fn")) << describe(quant);
  } else {
    // dumper.md §4.3: the reference returns FP8 where the dump declares bfloat16.
    EXPECT_TRUE(has(quant, codes::k_smoke_output_dtype)) << describe(quant);
  }
}

} // namespace
} // namespace fib
