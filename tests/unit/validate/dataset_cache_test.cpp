// The result cache never changes a report: cold, warm, after a change of a file or a blob, with a
// damaged cache, in one process or several. And a warm run asks Python nothing.

#include "dataset_fixture.hpp"

#include <fib/model/cached_python_frontend.hpp>
#include <fib/util/result_cache.hpp>

#include "validate/dataset_cache.hpp"

#include <chrono>
#include <fstream>
#include <thread>

namespace fib {
namespace {

using namespace dataset_testing;

// Counts the questions that reach the real interpreter.
class CountingPython final : public PythonFrontend {
public:
  Expected<ReferenceAnalysis> analyze_reference(std::string_view source) override {
    ++references;
    return testing::python().analyze_reference(source);
  }
  Expected<std::optional<PythonSyntaxError>> check_expression(std::string_view source) override {
    ++expressions;
    return testing::python().check_expression(source);
  }
  Expected<SourceStructure> analyze_structure(std::string_view source) override {
    return testing::python().analyze_structure(source);
  }
  Expected<HelperResolution> resolve_helpers(const HelperQuery& query) override {
    return testing::python().resolve_helpers(query);
  }
  std::string identity() const override { return testing::python().identity(); }
  int references = 0;
  int expressions = 0;
};

struct CachedRun {
  DatasetReport report;
  int references = 0;
  int expressions = 0;
};

// One validation with the cache at `directory`, committed as fib does.
CachedRun run_with_cache(const Dataset& ds, const std::filesystem::path& directory,
                         std::size_t processes) {
  DiagnosticList notes;
  ResultCache cache = ResultCache::open(ResultCacheOptions{directory}, notes);
  EXPECT_TRUE(cache.enabled());
  CountingPython counting;
  CachedPythonFrontend python(counting, cache);
  ValidateDatasetOptions options = ds.options();
  options.cache = &cache;
  options.processes = processes;
  DiagnosticList environment;
  CachedRun run;
  run.report = validate_dataset(options, python, environment);
  cache.commit(notes);
  EXPECT_FALSE(environment.has_errors());
  EXPECT_TRUE(notes.items().empty()) << notes.items().front().message;
  run.references = counting.references;
  run.expressions = counting.expressions;
  return run;
}

std::string uncached_json(const Dataset& ds) {
  ValidateDatasetOptions options = ds.options();
  options.processes = 1;
  return render_report_json(ds.validate(options));
}

TEST(DatasetCache, ColdAndWarmReportsAreTheUncachedOnesAndWarmAsksPythonNothing) {
  for (const std::size_t processes : {1u, 3u}) {
    SCOPED_TRACE(fmt::format("{} processes", processes));
    Dataset ds;
    write_varied(ds, 80);
    const std::string expected = uncached_json(ds);
    TempDir cache;
    const auto packs = [&] {
      return std::distance(std::filesystem::directory_iterator(cache.path() / "v1"),
                           std::filesystem::directory_iterator());
    };
    const CachedRun cold = run_with_cache(ds, cache.path(), processes);
    EXPECT_EQ(render_report_json(cold.report), expected);
    EXPECT_EQ(packs(), 1) << "the cold run's entries (from every process) in one pack";
    const CachedRun warm = run_with_cache(ds, cache.path(), processes);
    EXPECT_EQ(render_report_json(warm.report), expected);
    EXPECT_EQ(render_report_text(warm.report), render_report_text(cold.report));
    EXPECT_EQ(packs(), 1) << "a warm run misses nothing, so it writes no pack";
    if (processes == 1) { // the questions of worker processes are not counted here
      EXPECT_GT(cold.references, 60);
      EXPECT_EQ(warm.references, 0);
      EXPECT_EQ(warm.expressions, 0);
    }
  }
}

// A file changed just before a run is read and hashed, but its digest is not remembered (its
// stat fingerprint could still change unseen). A later warm run, when the file has been quiet for
// long enough, remembers it, so that the run after it reads nothing.
TEST(DatasetCache, AWarmRunRemembersTheDigestsOfTheFilesItHadToRead) {
  Dataset ds;
  write_varied(ds, 6);
  TempDir cache;
  const auto workload = ds.root() / "workloads" / "op" / "def001.jsonl";
  ASSERT_TRUE(std::filesystem::exists(workload));
  const auto remembered = [&] {
    DiagnosticList notes;
    const ResultCache store = ResultCache::open(ResultCacheOptions{cache.path()}, notes);
    return dataset_checks::remembered_digest(store, workload).has_value();
  };
  const CachedRun cold = run_with_cache(ds, cache.path(), 1);
  EXPECT_FALSE(remembered()) << "written just before the cold run";
  std::this_thread::sleep_for(std::chrono::milliseconds(2100)); // past the racy window
  const CachedRun warm = run_with_cache(ds, cache.path(), 1);
  EXPECT_EQ(warm.references, 0);
  EXPECT_EQ(render_report_json(warm.report), render_report_json(cold.report));
  EXPECT_TRUE(remembered()) << "remembered by the warm run that read it";
}

// The digest memo keeps a digest under the status the read took of the opened file (no second
// stat()); a later run finds it through a stat() of the path. Both must give one key.
TEST(DatasetCache, ADigestRememberedUnderTheReadsStatusIsFoundByTheNextRunsStat) {
  TempDir dir;
  TempDir cache;
  const auto file = dir.path() / "definition.json";
  {
    std::ofstream out(file);
    out << R"({"name": "x"})";
  }
  const TextFile read = read_text_file_with_status(file);
  ASSERT_TRUE(read.text.has_value());
  ASSERT_TRUE(read.status.has_value());
  const Sha256Digest digest = sha256(*read.text);
  // A run that started well after the file was written: the file is quiet, so it is remembered.
  const std::int64_t later_run = dataset_checks::wall_clock_ns() + 10'000'000'000;
  DiagnosticList notes;
  {
    ResultCache store = ResultCache::open(ResultCacheOptions{cache.path()}, notes);
    EXPECT_FALSE(dataset_checks::remembered_digest(store, file)) << "an empty store finds nothing";
    EXPECT_TRUE(dataset_checks::remember_digest(store, later_run, file, digest, read.status));
    // A file changed within two seconds of the run's start is not remembered.
    EXPECT_FALSE(dataset_checks::remember_digest(store, dataset_checks::wall_clock_ns(), file,
                                                 digest, read.status));
    store.commit(notes);
  }
  const ResultCache store = ResultCache::open(ResultCacheOptions{cache.path()}, notes);
  const auto found = dataset_checks::remembered_digest(store, file);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, digest);
  {
    std::ofstream out(file, std::ios::app);
    out << " ";
  }
  EXPECT_FALSE(dataset_checks::remembered_digest(store, file)) << "a changed file misses";
  EXPECT_TRUE(notes.items().empty());
}

// Within a run a blob keeps its first fingerprint: every report of the run is kept with the blob
// as it was before any check looked at it, so a blob that changes meanwhile misses next time.
TEST(DatasetCache, ABlobKeepsItsFirstFingerprintWithinARun) {
  TempDir dir;
  const std::string blob = (dir.path() / "w.safetensors").native();
  dataset_checks::BlobFingerprints fingerprints;
  const std::string absent = fingerprints.of(blob);
  EXPECT_TRUE(absent.starts_with("error ")) << absent;
  {
    std::ofstream out(blob);
    out << "bytes";
  }
  EXPECT_EQ(fingerprints.of(blob), absent) << "the run judges the blob as first looked at";
  dataset_checks::BlobFingerprints next_run;
  EXPECT_NE(next_run.of(blob), absent) << "the next run sees the blob that appeared";
}

TEST(DatasetCache, AChangedFileIsCheckedAgain) {
  Dataset ds;
  write_varied(ds, 20);
  TempDir cache;
  run_with_cache(ds, cache.path(), 1);
  // A new trace line for def003 naming an unknown workload, and def004's reference broken.
  ds.traces("alice", "def003",
            {tr("w1", R"("s1")", passed_evaluation(), "def003"),
             tr("nope", R"("s1")", passed_evaluation(), "def003")});
  DefSpec spec;
  spec.name = "def004";
  spec.reference = R"(def run(A, s)\n    return A\n)";
  ds.definition("def004", definition_json(spec));
  const CachedRun warm = run_with_cache(ds, cache.path(), 1);
  EXPECT_EQ(render_report_json(warm.report), uncached_json(ds));
  EXPECT_EQ(warm.references, 1) << "only def004's new reference reaches Python";
  EXPECT_EQ(warm.report.definitions.at("def004").status, CheckStatus::error);
}

// Most reports come from the cache before any chunk is planned (their files' digests are
// remembered); the changed definitions are validated in chunks, here by worker processes.
TEST(DatasetCache, RememberedReportsAndChangedOnesTogetherMatchTheUncachedReport) {
  Dataset ds;
  write_varied(ds, 150);
  TempDir cache;
  run_with_cache(ds, cache.path(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(2100)); // past the racy window
  const CachedRun warm = run_with_cache(ds, cache.path(), 1);   // remembers the digests
  EXPECT_EQ(warm.references, 0);
  for (int i = 0; i < 150; i += 2) { // 75 changed references, spread over the chunks
    DefSpec spec;
    spec.name = fmt::format("def{:03}", i);
    spec.reference = fmt::format(R"(def run(A, s):\n    return A  # changed {}\n)", i);
    ds.definition(spec.name, definition_json(spec));
  }
  const std::string expected = uncached_json(ds);
  const CachedRun mixed = run_with_cache(ds, cache.path(), 3);
  EXPECT_EQ(render_report_json(mixed.report), expected);
  EXPECT_EQ(mixed.report.definitions.size(), 150u);
  const CachedRun again = run_with_cache(ds, cache.path(), 1);
  EXPECT_EQ(render_report_json(again.report), expected);
  EXPECT_EQ(again.references, 0) << "the changed ones were kept by the mixed run";
}

TEST(DatasetCache, ABlobThatAppearsOrChangesIsCheckedAgain) {
  Dataset ds;
  write_varied(ds, 5);
  TempDir cache;
  const CachedRun missing = run_with_cache(ds, cache.path(), 1);
  const std::string blob_missing = "w2: blob missing at blob/w.safetensors";
  const auto has = [](const DatasetReport& report, const std::string& text) {
    for (const auto& m : messages(report, "def001", Category::workload)) {
      if (m.find(text) != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(has(missing.report, blob_missing));
  ds.file("blob/w.safetensors",
          safetensors_file({{"A", "F32", {2, 4}, f32_bytes({1, 2, 3, 4, 5, 6, 7, 8})}}));
  const CachedRun present = run_with_cache(ds, cache.path(), 1);
  EXPECT_FALSE(has(present.report, blob_missing));
  EXPECT_EQ(render_report_json(present.report), uncached_json(ds));
  ds.file("blob/w.safetensors",
          safetensors_file({{"A", "F32", {3, 4}, f32_bytes(std::vector<float>(12, 1.0f))}}));
  const CachedRun changed = run_with_cache(ds, cache.path(), 1);
  EXPECT_EQ(render_report_json(changed.report), uncached_json(ds));
  EXPECT_NE(render_report_json(changed.report), render_report_json(present.report))
      << "the blob's new shape changes the report";
}

TEST(DatasetCache, DamagedPacksAreNeverTrusted) {
  Dataset ds;
  write_varied(ds, 20);
  const std::string expected = uncached_json(ds);
  TempDir cache;
  run_with_cache(ds, cache.path(), 1);
  std::vector<std::filesystem::path> packs;
  for (const auto& entry : std::filesystem::directory_iterator(cache.path() / "v1")) {
    packs.push_back(entry.path());
  }
  ASSERT_EQ(packs.size(), 1u);
  {
    std::fstream pack(packs[0], std::ios::in | std::ios::out | std::ios::binary);
    pack.seekp(static_cast<std::streamoff>(std::filesystem::file_size(packs[0]) / 2));
    pack.put('\x5a');
  }
  const CachedRun damaged_value = run_with_cache(ds, cache.path(), 1);
  EXPECT_EQ(render_report_json(damaged_value.report), expected);
  std::filesystem::resize_file(packs[0], 100);
  const CachedRun truncated = run_with_cache(ds, cache.path(), 2);
  EXPECT_EQ(render_report_json(truncated.report), expected);
  const CachedRun rewritten = run_with_cache(ds, cache.path(), 1);
  EXPECT_EQ(render_report_json(rewritten.report), expected);
  EXPECT_EQ(rewritten.references, 0) << "the entries were written again";
}

TEST(CachedPythonFrontend, AnswersComeBackFromTheCacheAndFailuresAreNotKept) {
  TempDir directory;
  DiagnosticList notes;
  {
    ResultCache cache = ResultCache::open(ResultCacheOptions{directory.path()}, notes);
    CountingPython counting;
    CachedPythonFrontend python(counting, cache);
    ASSERT_TRUE(python.analyze_reference("def run(a, b=1):\n    pass\n"));
    ASSERT_TRUE(python.check_expression("M >"));
    cache.commit(notes);
    EXPECT_EQ(counting.references, 1);
    EXPECT_EQ(counting.expressions, 1);
  }
  ResultCache cache = ResultCache::open(ResultCacheOptions{directory.path()}, notes);
  CountingPython counting;
  CachedPythonFrontend python(counting, cache);
  const auto analysis = python.analyze_reference("def run(a, b=1):\n    pass\n");
  ASSERT_TRUE(analysis && analysis->run);
  EXPECT_EQ(analysis->run->positional_total, 2);
  EXPECT_EQ(analysis->run->positional_required, 1);
  EXPECT_EQ(analysis->run->positional_names, (std::vector<std::string>{"a", "b"}));
  const auto error = python.check_expression("M >");
  ASSERT_TRUE(error && *error);
  EXPECT_EQ((*error)->text, testing::python().check_expression("M >").value()->text);
  EXPECT_EQ(counting.references + counting.expressions, 0);
  // A front-end without an identity is never cached; nor is a failure.
  NoPython none;
  CachedPythonFrontend uncached(none, cache);
  EXPECT_FALSE(uncached.check_expression("1"));
  EXPECT_TRUE(notes.items().empty());
}

} // namespace
} // namespace fib
