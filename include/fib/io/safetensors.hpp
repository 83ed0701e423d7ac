#pragma once
// Reading safetensors blobs (the tensors a workload names with `"type": "safetensors"`) without
// torch or Python, for the blob checks of `fib validate --dataset` (a workload's safetensors inputs
// must exist and hold the tensor they name).
//
// File format: an 8-byte little-endian unsigned header length N, then N bytes of UTF-8 JSON (an
// object mapping each tensor key to {"dtype", "shape", "data_offsets"}, plus an optional
// "__metadata__" object of strings; writers pad it with trailing spaces), then the data section.
// `data_offsets` are [begin, end) byte offsets into the data section.
//
// The header is checked the way the safetensors library checks it before loading anything, so a
// file accepted here is one the old tool's `safe_open` accepts too (for the dtypes fib knows).
// Errors are Diagnostics whose `file` is the blob and whose `pointer` points into the JSON header
// ("" for the file as a whole, "/<key>/data_offsets" for one entry).

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>
#include <fib/io/dtype.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// Largest header accepted: the safetensors library's MAX_HEADER_SIZE (100,000,000 bytes).
inline constexpr std::uint64_t k_max_safetensors_header_bytes = 100'000'000;

// One tensor of a safetensors header.
struct SafetensorsEntry {
  std::string dtype;               // as spelled in the file: "F32", "I32", "BF16", "F8_E4M3", …
  std::vector<std::int64_t> shape; // [] for a 0-D tensor (one element)
  std::uint64_t data_begin = 0;    // [data_begin, data_end): bytes of the data section
  std::uint64_t data_end = 0;

  // Product of `shape` (1 for a 0-D tensor). Does not overflow for a header that
  // read_safetensors_header accepted.
  std::uint64_t element_count() const;
};

// The parsed, checked header of a safetensors file.
struct SafetensorsHeader {
  std::map<std::string, SafetensorsEntry> tensors; // by key
  std::map<std::string, std::string> metadata;     // "__metadata__", empty when absent
  std::uint64_t data_start = 0; // byte offset of the data section in the file (8 + N)
};

// What went wrong with a blob, for callers that word their own messages (the old tool says
// "blob missing at …" for one and "blob load failed: …" for the rest).
enum class BlobProblem {
  not_found,   // blob.not-found: the file does not exist
  lfs_pointer, // blob.lfs-pointer: a Git LFS pointer file sits where the data should be
  unreadable,  // blob.unreadable: fib could not read it (permissions, I/O error, unsupported dtype)
  malformed,   // blob.malformed: not a valid safetensors file (or no such tensor in it)
};

// The problem a diagnostic code of this module stands for; nullopt for other codes.
std::optional<BlobProblem> blob_problem(std::string_view code);

// Reads and checks the header of the safetensors file `file`, never the data section.
// Errors:
// - `blob.not-found` when the file does not exist;
// - `blob.lfs-pointer` for a Git LFS pointer file (text starting "version
//   https://git-lfs.github.com/spec/v1"), with a hint to run `git lfs pull`;
// - `blob.unreadable` when it cannot be opened or read;
// - `blob.malformed` for anything else that the safetensors library rejects: a directory, a file
//   shorter than 8 bytes, N above k_max_safetensors_header_bytes or past the end of the file, a
//   header that is not a JSON object (it must start with '{'), "__metadata__" not an object of
//   strings, an entry that is not {"dtype": string, "shape": [non-negative ints],
//   "data_offsets": [begin, end]}, offsets with end < begin or past the data section, tensors that
//   do not tile the data section exactly (gaps, overlaps, bytes left over), and, for dtypes of
//   known width, end - begin != element_count() * element size. Unknown dtype names are kept
//   without a size check.
Expected<SafetensorsHeader> read_safetensors_header(const std::filesystem::path& file);

// Reads the tensor `key` of `file` (whose header is `header`, from read_safetensors_header) and
// returns its elements as doubles, in row-major order. Reads only that tensor's bytes.
// Supported dtypes: BOOL (0/1), U8, I8, I16, U16, I32, U32, I64, U64 (exact up to 2^53), F16, BF16,
// F32, F64, F8_E4M3, F8_E5M2. Errors: `blob.malformed` when `key` is not in `header`;
// `blob.unreadable` for another dtype, or when the file cannot be read (or has shrunk);
// `io.too-large` when the tensor has more than `max_elements` elements (check element_count()
// first to skip such tensors quietly).
Expected<std::vector<double>> read_tensor_values(const std::filesystem::path& file,
                                                 const SafetensorsHeader& header,
                                                 const std::string& key, std::size_t max_elements);

// The raw little-endian bytes of the first `bytes` bytes of tensor `key` of `file` (whose header is
// `header`); all of them when `bytes` is nullopt. Reads only those bytes. Errors: `blob.malformed`
// when `key` is not in `header` or `bytes` is past its end; `blob.unreadable` when the file cannot
// be read (or has shrunk); `io.too-large` when more than `max_bytes` would be read.
Expected<std::string> read_tensor_bytes(const std::filesystem::path& file,
                                        const SafetensorsHeader& header, const std::string& key,
                                        std::optional<std::uint64_t> bytes,
                                        std::uint64_t max_bytes);

// One tensor to write: its key, its dtype as safetensors spells it ("I32", "BF16", …), its shape
// ([] for a 0-D tensor) and its elements as raw little-endian bytes in row-major order.
struct SafetensorsTensor {
  std::string key;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::string data;
};

// The bytes of a safetensors file holding `tensors`, for the caller to write (atomically): the
// header lists "__metadata__" first when `metadata` is not empty, then the tensors by key; their
// data follows in the same order, and the header is padded with spaces so that the data starts
// at a multiple of 8 bytes, as the safetensors library writes it. read_safetensors_header accepts
// the result. Errors (`blob.malformed`, pointer "/<key>"): an empty key, "__metadata__" or a
// repeated key, a dtype whose width the format does not define, a negative dimension, a data
// size other than element_count × element size, an element count that overflows.
Expected<std::string> encode_safetensors(const std::vector<SafetensorsTensor>& tensors,
                                         const std::map<std::string, std::string>& metadata = {});

// The DType whose safetensors spelling is `name` (the inverse of safetensors_dtype_name): "F32" →
// float32, "BOOL" → boolean. nullopt for names no DType has ("U8", "F4", "f32").
std::optional<DType> dtype_from_safetensors(std::string_view name);

} // namespace fib
