#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/safetensors.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace fib {
namespace {

using testing::corpus_dir;
using testing::TempDir;

void append_le(std::string& out, std::uint64_t value, int width) {
  for (int i = 0; i < width; ++i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
}

// A safetensors file: 8-byte little-endian length, the JSON header padded with `padding` spaces,
// then `data`.
std::string safetensors_bytes(std::string_view header, std::string_view data,
                              std::size_t padding = 0) {
  std::string out;
  append_le(out, header.size() + padding, 8);
  out += header;
  out.append(padding, ' ');
  out += data;
  return out;
}

std::string i32s(std::initializer_list<std::int32_t> values) {
  std::string out;
  for (const std::int32_t v : values) {
    append_le(out, static_cast<std::uint32_t>(v), 4);
  }
  return out;
}

std::string f32(float value) {
  std::string out;
  append_le(out, std::bit_cast<std::uint32_t>(value), 4);
  return out;
}

constexpr std::string_view k_two_tensors =
    R"({"idx":{"dtype":"I32","shape":[3],"data_offsets":[0,12]},)"
    R"("scale":{"dtype":"F32","shape":[],"data_offsets":[12,16]}})";

std::string two_tensor_data() {
  return i32s({-1, 7, 2147483647}) + f32(0.125f);
}

// The error of reading `content` as a safetensors file.
Diagnostic header_error(const TempDir& dir, std::string_view content) {
  const auto file = dir.write("blob.safetensors", content);
  auto header = read_safetensors_header(file);
  EXPECT_FALSE(header.has_value());
  if (header.has_value()) {
    return {};
  }
  EXPECT_EQ(header.error().file, file);
  return header.error();
}

TEST(Safetensors, ReadsI32VectorAndF32ScalarWithPadding) {
  TempDir dir;
  const std::size_t padding = 7;
  const auto file =
      dir.write("blob.safetensors", safetensors_bytes(k_two_tensors, two_tensor_data(), padding));
  auto header = read_safetensors_header(file);
  ASSERT_TRUE(header.has_value()) << header.error().message;
  EXPECT_EQ(header->data_start, 8 + k_two_tensors.size() + padding);
  ASSERT_EQ(header->tensors.size(), 2u);
  EXPECT_TRUE(header->metadata.empty());

  const SafetensorsEntry& idx = header->tensors.at("idx");
  EXPECT_EQ(idx.dtype, "I32");
  EXPECT_EQ(idx.shape, (std::vector<std::int64_t>{3}));
  EXPECT_EQ(idx.data_begin, 0u);
  EXPECT_EQ(idx.data_end, 12u);
  EXPECT_EQ(idx.element_count(), 3u);

  const SafetensorsEntry& scale = header->tensors.at("scale");
  EXPECT_EQ(scale.dtype, "F32");
  EXPECT_TRUE(scale.shape.empty());
  EXPECT_EQ(scale.element_count(), 1u); // a 0-D tensor has one element

  auto idx_values = read_tensor_values(file, *header, "idx", 100);
  ASSERT_TRUE(idx_values.has_value()) << idx_values.error().message;
  EXPECT_EQ(*idx_values, (std::vector<double>{-1, 7, 2147483647}));
  auto scale_values = read_tensor_values(file, *header, "scale", 1);
  ASSERT_TRUE(scale_values.has_value()) << scale_values.error().message;
  EXPECT_EQ(*scale_values, (std::vector<double>{0.125}));
}

TEST(Safetensors, ReadsMetadataAndAnEmptyFile) {
  TempDir dir;
  auto header = read_safetensors_header(
      dir.write("a.safetensors", safetensors_bytes(R"({"__metadata__":{"format":"pt"}})", "", 5)));
  ASSERT_TRUE(header.has_value()) << header.error().message;
  EXPECT_TRUE(header->tensors.empty());
  EXPECT_EQ(header->metadata.at("format"), "pt");

  auto empty = read_safetensors_header(dir.write("b.safetensors", safetensors_bytes("{}", "")));
  ASSERT_TRUE(empty.has_value()) << empty.error().message;
  EXPECT_TRUE(empty->tensors.empty());
}

TEST(Safetensors, DecodesEveryValueDtype) {
  TempDir dir;
  std::string data;
  append_le(data, static_cast<std::uint64_t>(-5), 8); // I64 -5
  append_le(data, 0xfffe, 2);                         // I16 -2
  append_le(data, 0x80, 1);                           // I8 -128
  append_le(data, 0xff, 1);                           // U8 255
  append_le(data, 0x00, 1);                           // BOOL false
  append_le(data, 0x01, 1);                           // BOOL true
  append_le(data, std::bit_cast<std::uint64_t>(-0.1), 8);
  append_le(data, 0x3c00, 2); // F16 1.0
  append_le(data, 0xc000, 2); // F16 -2.0
  append_le(data, 0x0001, 2); // F16 smallest subnormal
  append_le(data, 0x7c00, 2); // F16 +inf
  append_le(data, 0x3f80, 2); // BF16 1.0
  append_le(data, 0xc040, 2); // BF16 -3.0
  append_le(data, 0x38, 1);   // F8_E4M3 1.0
  append_le(data, 0x7e, 1);   // F8_E4M3 448 (largest)
  append_le(data, 0x3c, 1);   // F8_E5M2 1.0
  const std::string json = R"({"i64":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},)"
                           R"("i16":{"dtype":"I16","shape":[],"data_offsets":[8,10]},)"
                           R"("i8":{"dtype":"I8","shape":[1,1],"data_offsets":[10,11]},)"
                           R"("u8":{"dtype":"U8","shape":[1],"data_offsets":[11,12]},)"
                           R"("b":{"dtype":"BOOL","shape":[2],"data_offsets":[12,14]},)"
                           R"("f64":{"dtype":"F64","shape":[],"data_offsets":[14,22]},)"
                           R"("f16":{"dtype":"F16","shape":[2,2],"data_offsets":[22,30]},)"
                           R"("bf16":{"dtype":"BF16","shape":[2],"data_offsets":[30,34]},)"
                           R"("e4m3":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[34,36]},)"
                           R"("e5m2":{"dtype":"F8_E5M2","shape":[1],"data_offsets":[36,37]}})";
  const auto file = dir.write("d.safetensors", safetensors_bytes(json, data, 3));
  auto header = read_safetensors_header(file);
  ASSERT_TRUE(header.has_value()) << header.error().message;
  const auto values = [&](const std::string& key) {
    auto read = read_tensor_values(file, *header, key, 16);
    EXPECT_TRUE(read.has_value()) << key << ": " << read.error().message;
    return read.has_value() ? *read : std::vector<double>{};
  };
  EXPECT_EQ(values("i64"), (std::vector<double>{-5}));
  EXPECT_EQ(values("i16"), (std::vector<double>{-2}));
  EXPECT_EQ(values("i8"), (std::vector<double>{-128}));
  EXPECT_EQ(values("u8"), (std::vector<double>{255}));
  EXPECT_EQ(values("b"), (std::vector<double>{0, 1}));
  EXPECT_EQ(values("f64"), (std::vector<double>{-0.1}));
  EXPECT_EQ(values("f16"), (std::vector<double>{1.0, -2.0, std::ldexp(1.0, -24),
                                                std::numeric_limits<double>::infinity()}));
  EXPECT_EQ(values("bf16"), (std::vector<double>{1.0, -3.0}));
  EXPECT_EQ(values("e4m3"), (std::vector<double>{1.0, 448.0}));
  EXPECT_EQ(values("e5m2"), (std::vector<double>{1.0}));
}

TEST(Safetensors, ReadTensorValuesErrors) {
  TempDir dir;
  const auto file = dir.write("a.safetensors", safetensors_bytes(k_two_tensors, two_tensor_data()));
  auto header = read_safetensors_header(file);
  ASSERT_TRUE(header.has_value()) << header.error().message;

  auto missing = read_tensor_values(file, *header, "nope", 100);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, codes::k_blob_malformed);

  auto too_many = read_tensor_values(file, *header, "idx", 2);
  ASSERT_FALSE(too_many.has_value());
  EXPECT_EQ(too_many.error().code, codes::k_io_too_large);
  EXPECT_EQ(too_many.error().pointer, "/idx");

  // Unknown dtype names pass the header check (no size check) but have no values.
  const auto odd = dir.write("b.safetensors", safetensors_bytes(R"({"x":{"dtype":"Q7","shape":[5],)"
                                                                R"("data_offsets":[0,3]}})",
                                                                "abc"));
  auto odd_header = read_safetensors_header(odd);
  ASSERT_TRUE(odd_header.has_value()) << odd_header.error().message;
  auto odd_values = read_tensor_values(odd, *odd_header, "x", 100);
  ASSERT_FALSE(odd_values.has_value());
  EXPECT_EQ(odd_values.error().code, codes::k_blob_unreadable);
}

TEST(Safetensors, RecognisesGitLfsPointer) {
  TempDir dir;
  const Diagnostic d = header_error(
      dir, "version https://git-lfs.github.com/spec/v1\n"
           "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
           "size 237952\n");
  EXPECT_EQ(d.code, codes::k_blob_lfs_pointer);
  EXPECT_EQ(d.severity, Severity::error);
  EXPECT_NE(d.message.find("237952"), std::string::npos);
  EXPECT_NE(d.hint.find("git lfs pull"), std::string::npos);
  EXPECT_EQ(blob_problem(d.code), BlobProblem::lfs_pointer);
}

TEST(Safetensors, MissingFileAndDirectory) {
  TempDir dir;
  auto missing = read_safetensors_header(dir.path() / "nope.safetensors");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, codes::k_blob_not_found);
  EXPECT_EQ(blob_problem(missing.error().code), BlobProblem::not_found);

  auto directory = read_safetensors_header(dir.path());
  ASSERT_FALSE(directory.has_value());
  EXPECT_EQ(directory.error().code, codes::k_blob_malformed);
}

TEST(Safetensors, RejectsTruncatedFileAndBadLengths) {
  TempDir dir;
  EXPECT_EQ(header_error(dir, "abc").code, codes::k_blob_malformed);

  // N larger than the file.
  std::string long_length;
  append_le(long_length, 4096, 8);
  long_length += R"({"a":1})";
  EXPECT_EQ(header_error(dir, long_length).code, codes::k_blob_malformed);

  // N above the library's limit.
  std::string huge;
  append_le(huge, std::uint64_t{1} << 40, 8);
  huge += "{}";
  const Diagnostic d = header_error(dir, huge);
  EXPECT_EQ(d.code, codes::k_blob_malformed);
  EXPECT_NE(d.message.find("limit"), std::string::npos);

  // Data shorter than the header says.
  const std::string valid = safetensors_bytes(k_two_tensors, two_tensor_data());
  EXPECT_EQ(header_error(dir, valid.substr(0, valid.size() - 1)).code, codes::k_blob_malformed);
  // Bytes left over after the last tensor.
  EXPECT_EQ(header_error(dir, valid + "x").code, codes::k_blob_malformed);
}

TEST(Safetensors, RejectsHeadersThatAreNotJsonObjects) {
  TempDir dir;
  const Diagnostic not_json = header_error(dir, safetensors_bytes(R"({"a": )", ""));
  EXPECT_EQ(not_json.code, codes::k_blob_malformed);
  EXPECT_NE(not_json.message.find("not JSON"), std::string::npos);
  EXPECT_EQ(header_error(dir, safetensors_bytes("[1, 2]", "")).code, codes::k_blob_malformed);
  EXPECT_EQ(header_error(dir, safetensors_bytes(" {}", "")).code, codes::k_blob_malformed);
  EXPECT_EQ(header_error(dir, safetensors_bytes(R"({"__metadata__":{"a":1}})", "")).pointer,
            "/__metadata__");
}

TEST(Safetensors, RejectsEntriesOfTheWrongShape) {
  TempDir dir;
  const auto pointer_of = [&](std::string_view json, std::string_view data) {
    const Diagnostic d = header_error(dir, safetensors_bytes(json, data));
    EXPECT_EQ(d.code, codes::k_blob_malformed) << json;
    return d.pointer;
  };
  EXPECT_EQ(pointer_of(R"({"x":5})", ""), "/x");
  EXPECT_EQ(pointer_of(R"({"x":{"dtype":"U8","shape":[1]}})", "a"), "/x/data_offsets");
  EXPECT_EQ(pointer_of(R"({"x":{"dtype":8,"shape":[1],"data_offsets":[0,1]}})", "a"), "/x/dtype");
  EXPECT_EQ(pointer_of(R"({"x":{"dtype":"U8","shape":1,"data_offsets":[0,1]}})", "a"), "/x/shape");
  EXPECT_EQ(pointer_of(R"({"x":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", "a"),
            "/x/shape/0");
  EXPECT_EQ(pointer_of(R"({"x":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}})", "a"),
            "/x/shape/0");
  EXPECT_EQ(pointer_of(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0]}})", "a"),
            "/x/data_offsets");
}

TEST(Safetensors, RejectsBadOffsetsAndSizes) {
  TempDir dir;
  const auto error_of = [&](std::string_view json, std::string_view data) {
    return header_error(dir, safetensors_bytes(json, data));
  };
  // Past the end of the data section.
  Diagnostic d = error_of(R"({"x":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})", "abcd");
  EXPECT_EQ(d.code, codes::k_blob_malformed);
  EXPECT_EQ(d.pointer, "/x/data_offsets");
  EXPECT_NE(d.message.find("past the end"), std::string::npos);
  // End before begin.
  d = error_of(R"({"x":{"dtype":"U8","shape":[0],"data_offsets":[1,0]}})", "a");
  EXPECT_EQ(d.code, codes::k_blob_malformed);
  EXPECT_EQ(d.pointer, "/x/data_offsets");
  // Size != product(shape) * element size.
  d = error_of(R"({"x":{"dtype":"I32","shape":[2,2],"data_offsets":[0,8]}})", "abcdefgh");
  EXPECT_EQ(d.code, codes::k_blob_malformed);
  EXPECT_EQ(d.pointer, "/x/data_offsets");
  EXPECT_NE(d.message.find("expected 16 bytes"), std::string::npos);
  // A gap before the first tensor.
  d = error_of(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})", "ab");
  EXPECT_EQ(d.code, codes::k_blob_malformed);
  EXPECT_EQ(d.pointer, "/x/data_offsets");
  // Two tensors sharing bytes.
  d = error_of(R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
               R"("y":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})",
               "abc");
  EXPECT_EQ(d.code, codes::k_blob_malformed);
  EXPECT_EQ(d.pointer, "/y/data_offsets");
}

TEST(Safetensors, DtypeFromSafetensorsInvertsTheSpelling) {
  for (const DType dtype : k_all_dtypes) {
    const std::string_view name = safetensors_dtype_name(dtype);
    if (!name.empty()) {
      EXPECT_EQ(dtype_from_safetensors(name), dtype) << name;
    }
  }
  EXPECT_EQ(dtype_from_safetensors("BOOL"), DType::boolean);
  EXPECT_EQ(dtype_from_safetensors("F8_E4M3"), DType::float8_e4m3fn);
  EXPECT_EQ(dtype_from_safetensors("U8"), std::nullopt);
  EXPECT_EQ(dtype_from_safetensors("f32"), std::nullopt);
  EXPECT_EQ(dtype_from_safetensors(""), std::nullopt);
}

TEST(Safetensors, BlobProblemOfCodes) {
  EXPECT_EQ(blob_problem(codes::k_blob_malformed), BlobProblem::malformed);
  EXPECT_EQ(blob_problem(codes::k_blob_unreadable), BlobProblem::unreadable);
  EXPECT_EQ(blob_problem(codes::k_io_read), std::nullopt);
}

// The four real blobs of the 2025-08 dataset, read in place.
TEST(Safetensors, ReadsTheCorpusBlobs) {
  if (corpus_dir().empty()) {
    GTEST_SKIP() << "../shared/corpus is absent";
  }
  const auto blobs = corpus_dir() / "legacy-2025-08" / "blob" / "workloads";
  const auto decode = blobs / "batch_gqa_paged_decode_h32_kv8_d128_ps1";
  const auto prefill = blobs / "batch_gqa_ragged_prefill_h32_kv8_d128";
  using Shape = std::vector<std::int64_t>;

  {
    const auto file = decode / "decode_paged_9d7b5abcd1514c4881502255c973a73b.safetensors";
    auto header = read_safetensors_header(file);
    ASSERT_TRUE(header.has_value()) << header.error().message;
    ASSERT_EQ(header->tensors.size(), 4u);
    EXPECT_EQ(header->tensors.at("sm_scale").dtype, "F32");
    EXPECT_EQ(header->tensors.at("sm_scale").shape, Shape{});
    EXPECT_EQ(header->tensors.at("kv_indices").dtype, "I32");
    EXPECT_EQ(header->tensors.at("kv_indices").shape, Shape{8});
    EXPECT_EQ(header->tensors.at("kv_indptr").shape, Shape{2});
    EXPECT_EQ(header->tensors.at("last_page_len").shape, Shape{1});
    EXPECT_EQ(header->data_start, 8u + 256u);
    auto scale = read_tensor_values(file, *header, "sm_scale", 1);
    ASSERT_TRUE(scale.has_value()) << scale.error().message;
    EXPECT_EQ(*scale,
              std::vector<double>{static_cast<double>(static_cast<float>(1 / std::sqrt(128.0)))});
    auto indices = read_tensor_values(file, *header, "kv_indices", 8);
    ASSERT_TRUE(indices.has_value()) << indices.error().message;
    EXPECT_EQ(*indices, (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
  }
  {
    const auto file = decode / "decode_paged_a2b071e79065413f963dcb87341b6d64.safetensors";
    auto header = read_safetensors_header(file);
    ASSERT_TRUE(header.has_value()) << header.error().message;
    EXPECT_EQ(header->tensors.at("kv_indices").shape, Shape{59286});
    EXPECT_EQ(header->tensors.at("kv_indptr").shape, Shape{65});
    EXPECT_EQ(header->tensors.at("last_page_len").shape, Shape{64});
    auto indptr = read_tensor_values(file, *header, "kv_indptr", 65);
    ASSERT_TRUE(indptr.has_value()) << indptr.error().message;
    ASSERT_EQ(indptr->size(), 65u);
    EXPECT_EQ(indptr->front(), 0);
    EXPECT_EQ(indptr->back(), 59286); // the last indptr is the number of kv indices
    EXPECT_FALSE(read_tensor_values(file, *header, "kv_indices", 1000).has_value());
  }
  for (const char* name : {"prefill_ragged_6b403e0a6e5d4195b2283927908f33bb.safetensors",
                           "prefill_ragged_73c1076fd7094a2382db956fd63c5099.safetensors"}) {
    SCOPED_TRACE(name);
    const auto file = prefill / name;
    auto header = read_safetensors_header(file);
    ASSERT_TRUE(header.has_value()) << header.error().message;
    ASSERT_EQ(header->tensors.size(), 2u);
    EXPECT_EQ(header->tensors.at("qo_indptr").dtype, "I32");
    EXPECT_EQ(header->tensors.at("kv_indptr").dtype, "I32");
    EXPECT_EQ(header->tensors.at("qo_indptr").shape, header->tensors.at("kv_indptr").shape);
    auto qo = read_tensor_values(file, *header, "qo_indptr", 100);
    auto kv = read_tensor_values(file, *header, "kv_indptr", 100);
    ASSERT_TRUE(qo.has_value() && kv.has_value());
    EXPECT_EQ(*qo, *kv);
    EXPECT_EQ(qo->front(), 0);
  }
  auto small = read_safetensors_header(
      prefill / "prefill_ragged_73c1076fd7094a2382db956fd63c5099.safetensors");
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small->tensors.at("qo_indptr").shape, Shape{2});
}

} // namespace
} // namespace fib

namespace fib {
namespace {

TEST(EncodeSafetensors, WhatItWritesReadsBackWithAlignedDataAndTheValues) {
  TempDir dir;
  auto bytes = encode_safetensors(
      {{"scale", "F32", {}, f32(0.125f)}, {"idx", "I32", {3}, i32s({-1, 7, 2147483647})}},
      {{"format", "pt"}});
  ASSERT_TRUE(bytes.has_value()) << bytes.error().message;
  auto header = read_safetensors_header(dir.write("b.safetensors", *bytes));
  ASSERT_TRUE(header.has_value()) << header.error().message;
  EXPECT_EQ(header->data_start % 8, 0u);
  EXPECT_EQ(header->metadata.at("format"), "pt");
  ASSERT_EQ(header->tensors.size(), 2u);
  EXPECT_EQ(header->tensors.at("idx").data_begin, 0u); // laid out by key
  EXPECT_EQ(header->tensors.at("scale").shape, std::vector<std::int64_t>{});
  auto idx = read_tensor_values(dir.path() / "b.safetensors", *header, "idx", 10);
  ASSERT_TRUE(idx.has_value());
  EXPECT_EQ(*idx, (std::vector<double>{-1, 7, 2147483647}));
  auto scale = read_tensor_values(dir.path() / "b.safetensors", *header, "scale", 10);
  ASSERT_TRUE(scale.has_value());
  EXPECT_EQ(*scale, std::vector<double>{0.125});
}

TEST(EncodeSafetensors, TensorsItCannotWriteTruthfullyAreRefusedWithTheirKey) {
  struct Case {
    std::vector<SafetensorsTensor> tensors;
    std::string pointer;
  };
  const std::vector<Case> cases = {
      {{{"a", "I32", {2}, i32s({1})}}, "/a"}, // 4 bytes for 2 elements
      {{{"a", "I32", {1}, i32s({1})}, {"a", "I32", {1}, i32s({2})}}, "/a"}, // repeated key
      {{{"__metadata__", "I32", {1}, i32s({1})}}, "/__metadata__"},
      {{{"", "I32", {1}, i32s({1})}}, ""},
      {{{"f4", "F4", {2}, "\x12"}}, "/f4"},               // sub-byte dtype
      {{{"q", "Q8", {1}, "\x01"}}, "/q"},                 // unknown dtype
      {{{"n", "I32", {-1}, ""}}, "/n"},                   // negative dimension
      {{{"h", "I64", {1LL << 40, 1LL << 40}, ""}}, "/h"}, // overflowing element count
  };
  for (const Case& c : cases) {
    auto bytes = encode_safetensors(c.tensors);
    ASSERT_FALSE(bytes.has_value()) << c.pointer;
    EXPECT_EQ(bytes.error().code, codes::k_blob_malformed);
    EXPECT_EQ(bytes.error().pointer, c.pointer);
  }
}

} // namespace
} // namespace fib
