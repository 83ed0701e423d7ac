// The workload category: the old tool's line checks (axes, inputs, blobs) with their codes, and
// fib's own (blob dtypes, blob paths, duplicate uuids, constraints).

#include "dataset_fixture.hpp"

namespace fib {
namespace {

using namespace dataset_testing;

// --- workload ------------------------------------------------------------------------------------

// No workload file: a warning.
TEST(DatasetValidate, WorkloadFileMissing) {
  Dataset ds;
  ds.definition(DefSpec{});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            Messages{W(codes::k_dataset_workload_no_file, "no workload file found")});
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::warning);
}

// One bad line fails the whole file; the line number counts blank lines.
TEST(DatasetValidate, WorkloadParseErrorFailsWholeFile) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.file("workloads/op/d1.jsonl",
          wl("w1") + "\n\n" + R"({"definition": "d1",)" + "\n" + wl("w2") + "\n");
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(starts_with(got[0], E(codes::k_json_parse, "parse error: "))) << got[0];
  EXPECT_TRUE(got[0].ends_with(" (line 3)")) << got[0];
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::error);
}

TEST(DatasetValidate, WorkloadSchemaErrorOnLine) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.workloads("d1", {wl("w1"), R"({"definition": "d1", "workload": {"axes": {"M": 2}}})"});
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(starts_with(
      got[0], E(codes::k_schema_required, "parse error: 2 validation errors for Trace")))
      << got[0];
  EXPECT_TRUE(got[0].ends_with(" (line 2)")) << got[0];
}

// A workload line with a solution or an evaluation.
TEST(DatasetValidate, WorkloadLineWithSolutionOrEvaluation) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.workloads("d1",
               {wl("w1", R"({"M": 2})", k_inputs, "d1",
                   fmt::format(R"(, "solution": "s1", "evaluation": {})", passed_evaluation())),
                wl("w2")});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "1/2 valid"),
                      E(codes::k_workload_not_workload_only,
                        "w1: workload entry should not have solution or evaluation")}));
}

// Missing, extra and non-positive axes.
TEST(DatasetValidate, WorkloadAxesChecks) {
  Dataset ds;
  DefSpec spec;
  spec.axes =
      R"({"M": {"type": "var", "description": "m"}, "K": {"type": "var", "description": "k"}, "N": {"type": "const", "value": 4, "description": "n"}})";
  spec.inputs =
      R"({"A": {"shape": ["M", "N"], "dtype": "float32", "description": "a"}, "s": {"shape": ["K"], "dtype": "float32", "description": "s"}})";
  ds.definition(spec);
  const std::string inputs = R"({"A": {"type": "random"}, "s": {"type": "random"}})";
  ds.workloads("d1", {
                         wl("missing", R"({"M": 2})", inputs),
                         wl("extra", R"({"M": 2, "K": 1, "N": 4, "Z": 1})", inputs),
                         wl("zero", R"({"M": 0, "K": 0})", inputs),
                         wl("ok", R"({"K": 3, "M": 2})", inputs),
                     });
  const DatasetReport report = ds.validate();
  EXPECT_EQ(
      messages(report, "d1", Category::workload),
      (Messages{I(codes::k_dataset_workload_valid_count, "1/4 valid"),
                E(codes::k_dataset_workload_missing_axes, "missing: missing axes ['K']"),
                E(codes::k_dataset_workload_extra_axes, "extra: extra axes ['N', 'Z']"),
                E(codes::k_dataset_workload_axis_value, "zero: axis M has non-positive value 0"),
                E(codes::k_dataset_workload_axis_value, "zero: axis K has non-positive value 0")}));
}

// Mismatched input names skip the line's type and blob checks.
TEST(DatasetValidate, WorkloadInputNameChecks) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.workloads(
      "d1",
      {wl("w1", R"({"M": 2})",
          R"({"A": {"type": "scalar", "value": 1}, "t": {"type": "random"}, "b": {"type": "random"}})")});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "0/1 valid"),
                      E(codes::k_dataset_workload_missing_inputs, "w1: missing inputs ['s']"),
                      E(codes::k_dataset_workload_extra_inputs, "w1: extra inputs ['b', 't']")}));
}

// Input kinds against the definition's shapes.
TEST(DatasetValidate, WorkloadInputKindChecks) {
  Dataset ds;
  DefSpec spec;
  spec.inputs =
      R"({"A": {"shape": ["M", "N"], "dtype": "float32", "description": "a"}, "s": {"shape": null, "dtype": "float32", "description": "scale"}, "z": {"shape": [], "dtype": "float32", "description": "0-d"}})";
  spec.reference = R"(def run(A, s, z):\n    return A\n)";
  ds.definition(spec);
  ds.workloads(
      "d1",
      {
          wl("scalar_for_tensor", R"({"M": 2})",
             R"({"A": {"type": "scalar", "value": 1}, "s": {"type": "scalar", "value": 1}, "z": {"type": "random"}})"),
          wl("random_for_scalar", R"({"M": 2})",
             R"({"A": {"type": "random"}, "s": {"type": "random"}, "z": {"type": "random"}})"),
          wl("blob_for_scalar", R"({"M": 2})",
             R"({"A": {"type": "random"}, "s": {"type": "safetensors", "path": "blob/none.safetensors", "tensor_key": "s"}, "z": {"type": "random"}})"),
          wl("scalar_for_0d", R"({"M": 2})",
             R"({"A": {"type": "random"}, "s": {"type": "scalar", "value": 1}, "z": {"type": "scalar", "value": 2.0}})"),
          wl("ok", R"({"M": 2})",
             R"({"A": {"type": "random"}, "s": {"type": "scalar", "value": true}, "z": {"type": "random"}})"),
      });
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "1/5 valid"),
                      E(codes::k_dataset_workload_input_kind,
                        "scalar_for_tensor: A is scalar but definition expects tensor"),
                      E(codes::k_dataset_workload_input_kind,
                        "random_for_scalar: s is random but definition expects scalar"),
                      E(codes::k_dataset_workload_input_kind,
                        "blob_for_scalar: s is safetensors but definition expects scalar"),
                      E(codes::k_dataset_workload_input_kind,
                        "scalar_for_0d: z is scalar but definition expects tensor")}));
  // The scalar input's blob is still missing as far as layout is concerned.
  EXPECT_EQ(messages(report, "d1", Category::layout),
            Messages{E(codes::k_blob_not_found,
                       "workload blob_for_scalar: blob missing at blob/none.safetensors")});
}

// "N valid", "v/N valid", and "0 valid" for an empty file.
TEST(DatasetValidate, WorkloadValidCountForEmptyFile) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.file("workloads/op/d1.jsonl", "\n  \n");
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            Messages{I(codes::k_dataset_workload_valid_count, "0 valid")});
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::ok);
}

// A repeated workload uuid: no error in the old tool, a warning of fib's.
TEST(DatasetValidate, DuplicateWorkloadUuidIsFibWarning) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.workloads("d1", {wl("w1"), wl("w2"), wl("w1", R"({"M": 5})")});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "3 valid"),
                      W(codes::k_dataset_workload_duplicate_uuid,
                        "[fib] duplicate workload uuid w1 on lines 1 and 3")}));
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::warning);
}

// --- Blobs ---------------------------------------------------------------------------------------

class DatasetBlob : public ::testing::Test {
protected:
  void SetUp() override { m_ds.definition(DefSpec{}); }

  // One workload line w1 (M = 2) whose A comes from blob/w1.safetensors, key `key`.
  DatasetReport validate_with_blob(std::string_view key = "A") {
    m_ds.workloads(
        "d1",
        {wl("w1", R"({"M": 2})",
            fmt::format(
                R"({{"A": {{"type": "safetensors", "path": "blob/w1.safetensors", "tensor_key": "{}"}}, "s": {{"type": "scalar", "value": 1}}}})",
                key))});
    return m_ds.validate();
  }

  Dataset m_ds;
};

TEST_F(DatasetBlob, PresentBlobWithRightShapeAndDtypeIsValid) {
  m_ds.file("blob/w1.safetensors",
            safetensors_file({{"A", "F32", {2, 4}, f32_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}));
  const DatasetReport report = validate_with_blob();
  EXPECT_EQ(messages(report, "d1", Category::layout), Messages{});
  EXPECT_EQ(messages(report, "d1", Category::workload),
            Messages{I(codes::k_dataset_workload_valid_count, "1 valid")});
}

TEST_F(DatasetBlob, WrongShapeIsOldToolError) {
  m_ds.file("blob/w1.safetensors",
            safetensors_file({{"A", "F32", {4, 2}, f32_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}));
  const DatasetReport report = validate_with_blob();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "0/1 valid"),
                      E(codes::k_dataset_workload_blob_shape,
                        "w1: A shape mismatch: expected (2, 4), got (4, 2)")}));
}

TEST(DatasetValidate, ShapeMismatchUsesPythonTupleRepr) {
  Dataset ds;
  DefSpec spec;
  spec.inputs =
      R"({"A": {"shape": ["M"], "dtype": "float32", "description": "a"}, "z": {"shape": [], "dtype": "float32", "description": "z"}})";
  spec.outputs = R"({"C": {"shape": ["M", "N"], "dtype": "float32", "description": "c"}})";
  spec.reference = R"(def run(A, z):\n    return A\n)";
  ds.definition(spec);
  ds.file("blob/w1.safetensors", safetensors_file({{"A", "F32", {3}, f32_bytes({1, 2, 3})},
                                                   {"z", "F32", {1}, f32_bytes({1})}}));
  ds.workloads(
      "d1",
      {wl("w1", R"({"M": 2})",
          R"({"A": {"type": "safetensors", "path": "blob/w1.safetensors", "tensor_key": "A"}, "z": {"type": "safetensors", "path": "blob/w1.safetensors", "tensor_key": "z"}})")});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(
      messages(report, "d1", Category::workload),
      (Messages{
          I(codes::k_dataset_workload_valid_count, "0/1 valid"),
          E(codes::k_dataset_workload_blob_shape, "w1: A shape mismatch: expected (2,), got (3,)"),
          E(codes::k_dataset_workload_blob_shape, "w1: z shape mismatch: expected (), got (1,)")}));
}

// The old tool does not check blob dtypes; fib does, as an error of its own. The old
// tool's "N valid" count is unchanged by it.
TEST_F(DatasetBlob, WrongDtypeIsFibError) {
  m_ds.file("blob/w1.safetensors",
            safetensors_file({{"A", "I32", {2, 4}, i32_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}));
  const DatasetReport report = validate_with_blob();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], I(codes::k_dataset_workload_valid_count, "1 valid"));
  EXPECT_TRUE(
      starts_with(got[1], E(codes::k_dataset_workload_blob_dtype, "[fib] w1: A dtype mismatch")))
      << got[1];
  EXPECT_TRUE(contains(got[1], "float32")) << got[1];
  EXPECT_TRUE(contains(got[1], "I32")) << got[1];
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::error);
}

TEST_F(DatasetBlob, MissingKey) {
  m_ds.file("blob/w1.safetensors",
            safetensors_file({{"A", "F32", {2, 4}, f32_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}));
  const DatasetReport report = validate_with_blob("nope");
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "0/1 valid"),
                      E(codes::k_dataset_workload_tensor_key,
                        "w1: tensor key 'nope' not found in blob/w1.safetensors")}));
}

TEST_F(DatasetBlob, GitLfsPointerIsBlobLoadFailure) {
  m_ds.file("blob/w1.safetensors", "version https://git-lfs.github.com/spec/v1\n"
                                   "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2"
                                   "ca24d17e2393\nsize 12345\n");
  const DatasetReport report = validate_with_blob();
  EXPECT_EQ(messages(report, "d1", Category::layout), Messages{}); // the file exists
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], I(codes::k_dataset_workload_valid_count, "0/1 valid"));
  EXPECT_TRUE(starts_with(got[1], E(codes::k_blob_lfs_pointer, "w1: blob load failed: ")))
      << got[1];
  EXPECT_TRUE(contains(got[1], "LFS")) << got[1];
}

TEST_F(DatasetBlob, TruncatedFileIsBlobLoadFailure) {
  m_ds.file("blob/w1.safetensors", "abc");
  const DatasetReport report = validate_with_blob();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(starts_with(got[1], E(codes::k_blob_malformed, "w1: blob load failed: "))) << got[1];
}

// An absolute blob path is used as-is.
TEST(DatasetValidate, AbsoluteBlobPath) {
  Dataset ds;
  ds.definition(DefSpec{});
  TempDir elsewhere;
  const auto blob = elsewhere.write(
      "x.safetensors",
      safetensors_file({{"A", "F32", {2, 4}, f32_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}));
  ds.workloads(
      "d1",
      {wl("w1", R"({"M": 2})",
          fmt::format(
              R"({{"A": {{"type": "safetensors", "path": "{}", "tensor_key": "A"}}, "s": {{"type": "scalar", "value": 1}}}})",
              blob.string()))});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::layout), Messages{});
  // Read all the same, but fib warns: the blob is not part of the dataset.
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "1 valid"),
                      W(codes::k_dataset_workload_blob_outside,
                        fmt::format("[fib] w1: blob path '{}' points outside the dataset",
                                    blob.string()))}));
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::warning);
}

// A ".." component: joined with the root and read, as the old tool does, with fib's warning once
// per (uuid, path), also on lines whose other checks fail.
TEST(DatasetValidate, DotDotBlobPathWarnsOncePerUuidAndPath) {
  Dataset ds;
  DefSpec spec;
  spec.inputs =
      R"({"A": {"shape": ["M", "N"], "dtype": "float32", "description": "a"}, "B": {"shape": ["M", "N"], "dtype": "float32", "description": "b"}})";
  spec.reference = R"(def run(A, B):\n    return A\n)";
  ds.definition(spec);
  ds.file("blob/w.safetensors",
          safetensors_file({{"A", "F32", {2, 4}, f32_bytes({0, 1, 2, 3, 4, 5, 6, 7})},
                            {"B", "F32", {2, 4}, f32_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}));
  const std::string inputs =
      R"({"A": {"type": "safetensors", "path": "blob/../blob/w.safetensors", "tensor_key": "A"}, "B": {"type": "safetensors", "path": "blob/../blob/w.safetensors", "tensor_key": "B"}})";
  const std::string inside =
      R"({"A": {"type": "safetensors", "path": "blob/w.safetensors", "tensor_key": "A"}, "B": {"type": "safetensors", "path": "blob/..w.safetensors", "tensor_key": "B"}})";
  ds.workloads("d1", {wl("w1", R"({"M": 2})", inputs), wl("w2", R"({"M": 2, "K": 1})", inputs),
                      wl("w3", R"({"M": 2})", inside)});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "1/3 valid"),
                      W(codes::k_dataset_workload_blob_outside,
                        "[fib] w1: blob path 'blob/../blob/w.safetensors' points outside the "
                        "dataset"),
                      W(codes::k_dataset_workload_blob_outside,
                        "[fib] w2: blob path 'blob/../blob/w.safetensors' points outside the "
                        "dataset"),
                      E(codes::k_dataset_workload_extra_axes, "w2: extra axes ['K']"),
                      E(codes::k_blob_not_found, "w3: blob missing at blob/..w.safetensors")}));
}

// --- Constraints (fib) ---------------------------------------------------------------------------

TEST(DatasetValidate, ConstraintsHoldOrFail) {
  Dataset ds;
  DefSpec spec;
  spec.extra = R"(, "constraints": ["M <= 8"])";
  ds.definition(spec);
  ds.workloads("d1", {wl("w1"), wl("w2", R"({"M": 16})")});
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 2u) << fmt::format("{}", fmt::join(got, "\n"));
  // Constraints are fib's; the old tool's count is unchanged.
  EXPECT_EQ(got[0], I(codes::k_dataset_workload_valid_count, "2 valid"));
  EXPECT_TRUE(starts_with(got[1], E(codes::k_dataset_workload_constraint_violated,
                                    "[fib] w2: constraint 'M <= 8' does not hold: ")))
      << got[1];
  EXPECT_TRUE(contains(got[1], "M=16")) << got[1];
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::error);
}

TEST(DatasetValidate, ConstraintOnBlobDataIsEvaluated) {
  Dataset ds;
  DefSpec spec;
  spec.inputs =
      R"({"A": {"shape": ["M", "N"], "dtype": "float32", "description": "a"}, "idx": {"shape": ["L"], "dtype": "int32", "description": "indptr"}})";
  spec.axes =
      R"({"M": {"type": "var", "description": "rows"}, "L": {"type": "var", "description": "len"}, "N": {"type": "const", "value": 4, "description": "cols"}})";
  spec.reference = R"(def run(A, idx):\n    return A\n)";
  spec.extra = R"(, "constraints": ["idx[-1].item() == M"])";
  ds.definition(spec);
  ds.file("blob/good.safetensors", safetensors_file({{"idx", "I32", {2}, i32_bytes({0, 2})}}));
  ds.file("blob/bad.safetensors", safetensors_file({{"idx", "I32", {2}, i32_bytes({0, 5})}}));
  const auto inputs = [](std::string_view blob) {
    return fmt::format(
        R"({{"A": {{"type": "random"}}, "idx": {{"type": "safetensors", "path": "blob/{}.safetensors", "tensor_key": "idx"}}}})",
        blob);
  };
  ds.workloads("d1", {wl("good", R"({"M": 2, "L": 2})", inputs("good")),
                      wl("bad", R"({"M": 2, "L": 2})", inputs("bad")),
                      wl("rand", R"({"M": 2, "L": 2})",
                         R"({"A": {"type": "random"}, "idx": {"type": "random"}})"),
                      wl("gone", R"({"M": 2, "L": 2})", inputs("gone"))});
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 4u) << fmt::format("{}", fmt::join(got, "\n"));
  EXPECT_EQ(got[0], I(codes::k_dataset_workload_valid_count, "3/4 valid"));
  EXPECT_TRUE(starts_with(got[1], E(codes::k_dataset_workload_constraint_violated,
                                    "[fib] bad: constraint 'idx[-1].item() == M' does not hold: ")))
      << got[1];
  // The missing blob makes its line invalid, but constraints still run on it: the one reading the
  // blob's data is "not evaluated" there, as on the line whose tensor is random.
  EXPECT_EQ(got[2], E(codes::k_blob_not_found, "gone: blob missing at blob/gone.safetensors"));
  EXPECT_TRUE(starts_with(got[3], I(codes::k_dataset_workload_constraint_not_evaluated,
                                    "[fib] constraint 'idx[-1].item() == M' not evaluated on 2 "
                                    "of 4 workloads: ")))
      << got[3];
  EXPECT_TRUE(contains(got[3], "idx")) << got[3];
}

// Echoed constraint text is cut to 80 characters (77 and "..."); short ones are kept whole.
TEST(DatasetValidate, LongConstraintTextIsCut) {
  Dataset ds;
  DefSpec spec;
  const std::string violated = "M <= 8 and " + std::string(90, ' ') + "M >= 1";
  const std::string unknown = "foo(M) > 0 and M " + std::string(100, ' ') + "> 0";
  spec.extra = fmt::format(R"(, "constraints": ["{}", "{}"])", violated, unknown);
  ds.definition(spec);
  ds.workloads("d1", {wl("w1", R"({"M": 16})")});
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 3u) << fmt::format("{}", fmt::join(got, "\n"));
  const std::string cut_violated = violated.substr(0, 77) + "...";
  const std::string cut_unknown = unknown.substr(0, 77) + "...";
  EXPECT_TRUE(starts_with(
      got[1], E(codes::k_dataset_workload_constraint_violated,
                fmt::format("[fib] w1: constraint '{}' does not hold: ", cut_violated))))
      << got[1];
  EXPECT_TRUE(starts_with(
      got[2],
      I(codes::k_dataset_workload_constraint_not_evaluated,
        fmt::format("[fib] constraint '{}' not evaluated on 1 of 1 workloads: ", cut_unknown))))
      << got[2];
}

TEST(DatasetValidate, ConstraintNotEvaluableIsInfo) {
  Dataset ds;
  DefSpec spec;
  spec.extra = R"(, "constraints": ["M <= 8", "foo(M) > 0"])";
  ds.definition(spec);
  ds.workloads("d1", {wl("w1"), wl("w2", R"({"M": 3})")});
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 2u) << fmt::format("{}", fmt::join(got, "\n"));
  EXPECT_EQ(got[0], I(codes::k_dataset_workload_valid_count, "2 valid"));
  EXPECT_TRUE(starts_with(got[1], I(codes::k_dataset_workload_constraint_not_evaluated,
                                    "[fib] constraint 'foo(M) > 0' not evaluated on 2 of 2 "
                                    "workloads: ")))
      << got[1];
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::ok);
}

} // namespace
} // namespace fib
