#include "fib/io/safetensors.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <fstream>
#include <limits>
#include <system_error>
#include <utility>

namespace fib {
namespace {

constexpr std::uint64_t k_length_prefix_bytes = 8;
// Git LFS pointers are small text files; the spec's parsers look at no more than this.
constexpr std::size_t k_lfs_pointer_max_bytes = 1024;
// The current spec and the pre-release one that Git LFS still accepts.
constexpr std::array<std::string_view, 2> k_lfs_prefixes = {
    "version https://git-lfs.github.com/spec/v1", "version https://hawser.github.com/spec/v1"};

constexpr std::string_view k_key_metadata = "__metadata__";
constexpr std::string_view k_key_dtype = "dtype";
constexpr std::string_view k_key_shape = "shape";
constexpr std::string_view k_key_data_offsets = "data_offsets";

Diagnostic blob_error(std::string_view code, const std::filesystem::path& file, std::string message,
                      std::string pointer = {}) {
  Diagnostic d = make_diagnostic(code, std::move(message));
  d.file = file;
  d.pointer = std::move(pointer);
  return d;
}

// Width in bits of each dtype the safetensors library knows (its Dtype::bitsize); 0 for others,
// which are then kept without a size check.
std::uint64_t dtype_bits(std::string_view dtype) {
  struct Width {
    std::string_view name;
    std::uint64_t bits;
  };
  static constexpr std::array k_widths = std::to_array<Width>({
      {"BOOL", 8}, {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
      {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"I16", 16},
      {"U16", 16}, {"F16", 16},    {"BF16", 16},   {"I32", 32},    {"U32", 32},
      {"F32", 32}, {"C64", 64},    {"F64", 64},    {"I64", 64},    {"U64", 64},
  });
  for (const Width& width : k_widths) {
    if (width.name == dtype) {
      return width.bits;
    }
  }
  return 0;
}

bool checked_multiply(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) {
    return false;
  }
  out = a * b;
  return true;
}

// A non-negative JSON integer, as serde reads a usize (floats such as 2.0 are rejected).
std::optional<std::uint64_t> as_unsigned(const Json& value) {
  if (value.is_number_unsigned()) {
    return value.get<std::uint64_t>();
  }
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  }
  return std::nullopt;
}

// Reads exactly `size` bytes at `offset`; false on any shortfall.
bool read_at(std::ifstream& in, std::uint64_t offset, std::uint64_t size, std::string& out) {
  out.assign(static_cast<std::size_t>(size), '\0');
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in) {
    return false;
  }
  in.read(out.data(), static_cast<std::streamsize>(size));
  return in.gcount() == static_cast<std::streamsize>(size);
}

std::optional<Diagnostic> lfs_pointer_error(const std::filesystem::path& file,
                                            std::string_view start) {
  const bool is_pointer = std::any_of(k_lfs_prefixes.begin(), k_lfs_prefixes.end(),
                                      [&](std::string_view p) { return start.starts_with(p); });
  if (!is_pointer) {
    return std::nullopt;
  }
  std::string message = "blob is a Git LFS pointer file, not the tensor data";
  // The pointer's "size <bytes>" line says how big the real object is.
  if (const auto at = start.find("\nsize "); at != std::string_view::npos) {
    const std::string_view rest = start.substr(at + 6);
    const std::string_view digits = rest.substr(0, rest.find_first_not_of("0123456789"));
    if (!digits.empty()) {
      message += fmt::format(" (the object is {} bytes)", digits);
    }
  }
  Diagnostic d = blob_error(codes::k_blob_lfs_pointer, file, std::move(message));
  d.hint = "fetch the blobs with `git lfs pull` in the dataset repository";
  return d;
}

// Checks one header entry and fills `entry`; `data_size` is the size of the data section.
std::optional<Diagnostic> parse_entry(const std::filesystem::path& file, const std::string& key,
                                      const Json& value, std::uint64_t data_size,
                                      SafetensorsEntry& entry) {
  const std::string pointer = pointer_append("", key);
  const auto malformed = [&](std::string_view field, std::string message) {
    return blob_error(codes::k_blob_malformed, file, fmt::format("tensor \"{}\": {}", key, message),
                      field.empty() ? pointer : pointer_append(pointer, field));
  };
  if (!value.is_object()) {
    return malformed("", fmt::format("expected an object, got {}", json_excerpt(value)));
  }
  for (const std::string_view field : {k_key_dtype, k_key_shape, k_key_data_offsets}) {
    if (!value.contains(field)) {
      return malformed(field, fmt::format("missing \"{}\"", field));
    }
  }

  const Json& dtype = value.at(k_key_dtype);
  if (!dtype.is_string()) {
    return malformed(k_key_dtype,
                     fmt::format("expected \"dtype\" to be a string, got {}", json_excerpt(dtype)));
  }
  entry.dtype = dtype.get<std::string>();

  const Json& shape = value.at(k_key_shape);
  if (!shape.is_array()) {
    return malformed(k_key_shape,
                     fmt::format("expected \"shape\" to be a list, got {}", json_excerpt(shape)));
  }
  std::uint64_t elements = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const auto dim = as_unsigned(shape[i]);
    if (!dim || *dim > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return blob_error(codes::k_blob_malformed, file,
                        fmt::format("tensor \"{}\": expected a non-negative integer in \"shape\", "
                                    "got {}",
                                    key, json_excerpt(shape[i])),
                        pointer_append(pointer_append(pointer, k_key_shape), i));
    }
    entry.shape.push_back(static_cast<std::int64_t>(*dim));
    if (!checked_multiply(elements, *dim, elements)) {
      return malformed(k_key_shape, "the number of elements overflows");
    }
  }

  const Json& offsets = value.at(k_key_data_offsets);
  std::optional<std::uint64_t> begin;
  std::optional<std::uint64_t> end;
  if (offsets.is_array() && offsets.size() == 2) {
    begin = as_unsigned(offsets[0]);
    end = as_unsigned(offsets[1]);
  }
  if (!begin || !end) {
    return malformed(
        k_key_data_offsets,
        fmt::format("expected \"data_offsets\" to be [begin, end], got {}", json_excerpt(offsets)));
  }
  const std::uint64_t first = begin.value_or(0);
  const std::uint64_t last = end.value_or(0);
  entry.data_begin = first;
  entry.data_end = last;
  if (last < first) {
    return malformed(k_key_data_offsets,
                     fmt::format("data_offsets [{}, {}] end before they begin", first, last));
  }
  if (last > data_size) {
    return malformed(k_key_data_offsets,
                     fmt::format("data_offsets [{}, {}] run past the end of the data section "
                                 "({} bytes)",
                                 first, last, data_size));
  }

  if (const std::uint64_t bits = dtype_bits(entry.dtype); bits != 0) {
    std::uint64_t total_bits = 0;
    if (!checked_multiply(elements, bits, total_bits)) {
      return malformed(k_key_shape, "the tensor size overflows");
    }
    if (total_bits % 8 != 0) {
      return malformed(k_key_shape, fmt::format("{} elements of {} do not fill whole bytes",
                                                elements, entry.dtype));
    }
    if (last - first != total_bits / 8) {
      return malformed(k_key_data_offsets,
                       fmt::format("expected {} bytes for {} elements of {}, got {}",
                                   total_bits / 8, elements, entry.dtype, last - first));
    }
  }
  return std::nullopt;
}

// The safetensors library requires the tensors, sorted by offsets, to tile the data section
// exactly: no gaps, no overlaps, no bytes left over.
std::optional<Diagnostic> check_tiling(const std::filesystem::path& file,
                                       const SafetensorsHeader& header, std::uint64_t data_size) {
  std::vector<std::pair<const std::string*, const SafetensorsEntry*>> order;
  for (const auto& [key, entry] : header.tensors) {
    order.emplace_back(&key, &entry);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::pair(a.second->data_begin, a.second->data_end) <
           std::pair(b.second->data_begin, b.second->data_end);
  });
  std::uint64_t covered = 0;
  for (const auto& [key, entry] : order) {
    if (entry->data_begin != covered) {
      return blob_error(codes::k_blob_malformed, file,
                        fmt::format("tensor \"{}\" starts at byte {} of the data section, "
                                    "expected {} (tensors must not leave gaps or overlap)",
                                    *key, entry->data_begin, covered),
                        pointer_append(pointer_append("", *key), k_key_data_offsets));
    }
    covered = entry->data_end;
  }
  if (covered != data_size) {
    return blob_error(
        codes::k_blob_malformed, file,
        fmt::format("the data section is {} bytes but the tensors cover {}", data_size, covered));
  }
  return std::nullopt;
}

std::uint64_t load_le(const char* bytes, std::size_t width) {
  std::uint64_t value = 0;
  for (std::size_t i = width; i-- > 0;) {
    value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  }
  return value;
}

double half_to_double(std::uint64_t bits) {
  const bool negative = (bits >> 15) & 1;
  const int exponent = static_cast<int>((bits >> 10) & 0x1f);
  const auto mantissa = static_cast<double>(bits & 0x3ff);
  double magnitude = 0;
  if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -24);
  } else if (exponent == 0x1f) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else {
    magnitude = std::ldexp(mantissa + 1024, exponent - 25);
  }
  return negative ? -magnitude : magnitude;
}

// float8_e4m3fn: bias 7, no infinities, S.1111.111 is NaN.
double e4m3_to_double(std::uint64_t bits) {
  const bool negative = (bits >> 7) & 1;
  const int exponent = static_cast<int>((bits >> 3) & 0xf);
  const auto mantissa = static_cast<double>(bits & 0x7);
  double magnitude = 0;
  if (exponent == 0xf && (bits & 0x7) == 0x7) {
    magnitude = std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -9);
  } else {
    magnitude = std::ldexp(mantissa + 8, exponent - 10);
  }
  return negative ? -magnitude : magnitude;
}

// Turns the little-endian bits of one element into a double.
using Decoder = double (*)(std::uint64_t raw);

// The decoder for `dtype`, or nullptr for dtypes fib cannot turn into numbers (C64, F4, F6_*,
// F8_E8M0, unknown names).
Decoder decoder_for(std::string_view dtype) {
  struct Entry {
    std::string_view name;
    Decoder decode;
  };
  static constexpr std::array k_decoders = std::to_array<Entry>({
      {"BOOL", [](std::uint64_t raw) { return raw != 0 ? 1.0 : 0.0; }},
      {"U8", [](std::uint64_t raw) { return static_cast<double>(raw); }},
      {"U16", [](std::uint64_t raw) { return static_cast<double>(raw); }},
      {"U32", [](std::uint64_t raw) { return static_cast<double>(raw); }},
      {"U64", [](std::uint64_t raw) { return static_cast<double>(raw); }},
      {"I8", [](std::uint64_t raw) { return static_cast<double>(static_cast<std::int8_t>(raw)); }},
      {"I16",
       [](std::uint64_t raw) { return static_cast<double>(static_cast<std::int16_t>(raw)); }},
      {"I32",
       [](std::uint64_t raw) { return static_cast<double>(static_cast<std::int32_t>(raw)); }},
      {"I64",
       [](std::uint64_t raw) { return static_cast<double>(static_cast<std::int64_t>(raw)); }},
      {"F16", [](std::uint64_t raw) { return half_to_double(raw); }},
      {"BF16",
       [](std::uint64_t raw) {
         return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(raw << 16)));
       }},
      {"F32",
       [](std::uint64_t raw) {
         return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(raw)));
       }},
      {"F64", [](std::uint64_t raw) { return std::bit_cast<double>(raw); }},
      // float8_e5m2 is the top byte of a float16.
      {"F8_E5M2", [](std::uint64_t raw) { return half_to_double(raw << 8); }},
      {"F8_E4M3", [](std::uint64_t raw) { return e4m3_to_double(raw); }},
  });
  for (const Entry& entry : k_decoders) {
    if (entry.name == dtype) {
      return entry.decode;
    }
  }
  return nullptr;
}

} // namespace

std::uint64_t SafetensorsEntry::element_count() const {
  std::uint64_t count = 1;
  for (const std::int64_t dim : shape) {
    count *= static_cast<std::uint64_t>(dim);
  }
  return count;
}

std::optional<BlobProblem> blob_problem(std::string_view code) {
  if (code == codes::k_blob_not_found) {
    return BlobProblem::not_found;
  }
  if (code == codes::k_blob_lfs_pointer) {
    return BlobProblem::lfs_pointer;
  }
  if (code == codes::k_blob_unreadable) {
    return BlobProblem::unreadable;
  }
  if (code == codes::k_blob_malformed) {
    return BlobProblem::malformed;
  }
  return std::nullopt;
}

namespace {

// The size of `file`, which must be a regular file: `blob.not-found`, `blob.unreadable` or
// `blob.malformed` (a directory, a special file) otherwise.
Expected<std::uint64_t> blob_size(const std::filesystem::path& file) {
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    return unexpected(blob_error(codes::k_blob_not_found, file, "blob does not exist"));
  }
  if (ec) {
    return unexpected(
        blob_error(codes::k_blob_unreadable, file, fmt::format("cannot access: {}", ec.message())));
  }
  if (std::filesystem::is_directory(status)) {
    return unexpected(
        blob_error(codes::k_blob_malformed, file, "expected a safetensors file, got a directory"));
  }
  if (!std::filesystem::is_regular_file(status)) {
    return unexpected(blob_error(codes::k_blob_malformed, file,
                                 "expected a safetensors file, got a special file"));
  }
  const std::uint64_t file_size = std::filesystem::file_size(file, ec);
  if (ec) {
    return unexpected(
        blob_error(codes::k_blob_unreadable, file, fmt::format("cannot access: {}", ec.message())));
  }
  return file_size;
}

// The tensors and metadata of a parsed header object.
Expected<SafetensorsHeader> header_of(const std::filesystem::path& file, const Json& root,
                                      std::uint64_t header_size, std::uint64_t file_size) {
  SafetensorsHeader header;
  header.data_start = k_length_prefix_bytes + header_size;
  const std::uint64_t data_size = file_size - header.data_start;
  for (const auto& [key, value] : root.items()) {
    if (key == k_key_metadata) {
      if (value.is_null()) {
        continue;
      }
      const bool strings =
          value.is_object() &&
          std::all_of(value.begin(), value.end(), [](const Json& v) { return v.is_string(); });
      if (!strings) {
        return unexpected(
            blob_error(codes::k_blob_malformed, file,
                       fmt::format("expected \"__metadata__\" to be an object of strings, got {}",
                                   json_excerpt(value)),
                       pointer_append("", key)));
      }
      for (const auto& [name, text_value] : value.items()) {
        header.metadata[name] = text_value.get<std::string>();
      }
      continue;
    }
    SafetensorsEntry entry;
    if (auto problem = parse_entry(file, key, value, data_size, entry)) {
      return unexpected(std::move(*problem));
    }
    header.tensors[key] = std::move(entry);
  }
  if (auto problem = check_tiling(file, header, data_size)) {
    return unexpected(std::move(*problem));
  }
  return header;
}

} // namespace

Expected<SafetensorsHeader> read_safetensors_header(const std::filesystem::path& file) {
  FIB_TRY_ASSIGN(const std::uint64_t file_size, blob_size(file));
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return unexpected(
        blob_error(codes::k_blob_unreadable, file, "cannot open the file for reading"));
  }

  std::string start;
  if (!read_at(in, 0, std::min<std::uint64_t>(file_size, k_lfs_pointer_max_bytes), start)) {
    return unexpected(blob_error(codes::k_blob_unreadable, file, "read error"));
  }
  if (auto pointer = lfs_pointer_error(file, start)) {
    return unexpected(std::move(*pointer));
  }
  if (file_size < k_length_prefix_bytes) {
    return unexpected(blob_error(
        codes::k_blob_malformed, file,
        fmt::format("file is {} bytes, too short for the 8-byte header length", file_size)));
  }

  const std::uint64_t header_size = load_le(start.data(), k_length_prefix_bytes);
  if (header_size > k_max_safetensors_header_bytes) {
    return unexpected(blob_error(codes::k_blob_malformed, file,
                                 fmt::format("header length {} is more than the limit of {} bytes",
                                             header_size, k_max_safetensors_header_bytes)));
  }
  if (header_size > file_size - k_length_prefix_bytes) {
    return unexpected(
        blob_error(codes::k_blob_malformed, file,
                   fmt::format("header length {} runs past the end of the file ({} bytes)",
                               header_size, file_size)));
  }
  std::string text;
  if (!read_at(in, k_length_prefix_bytes, header_size, text)) {
    return unexpected(blob_error(codes::k_blob_unreadable, file, "read error"));
  }
  // The library insists on '{' first (no leading whitespace); trailing spaces are padding.
  if (text.empty() || text.front() != '{') {
    return unexpected(blob_error(codes::k_blob_malformed, file, "header is not a JSON object"));
  }
  DiagnosticList ignored; // duplicate keys: the last one wins, as in the library
  auto document = parse_json(text, file, ignored);
  if (!document) {
    return unexpected(blob_error(codes::k_blob_malformed, file,
                                 fmt::format("header is not JSON: {}", document.error().message),
                                 document.error().pointer));
  }
  const Json& root = document->root;
  if (!root.is_object()) {
    return unexpected(blob_error(codes::k_blob_malformed, file, "header is not a JSON object"));
  }

  return header_of(file, root, header_size, file_size);
}

Expected<std::vector<double>> read_tensor_values(const std::filesystem::path& file,
                                                 const SafetensorsHeader& header,
                                                 const std::string& key, std::size_t max_elements) {
  const auto found = header.tensors.find(key);
  if (found == header.tensors.end()) {
    return unexpected(blob_error(codes::k_blob_malformed, file,
                                 fmt::format("no tensor named \"{}\" in the blob", key)));
  }
  const SafetensorsEntry& entry = found->second;
  const std::string pointer = pointer_append("", key);
  const Decoder decode = decoder_for(entry.dtype);
  if (decode == nullptr) {
    return unexpected(blob_error(
        codes::k_blob_unreadable, file,
        fmt::format("tensor \"{}\": cannot read values of dtype \"{}\"", key, entry.dtype),
        pointer));
  }
  const std::uint64_t count = entry.element_count();
  if (count > max_elements) {
    return unexpected(
        blob_error(codes::k_io_too_large, file,
                   fmt::format("tensor \"{}\" has {} elements, more than the limit of {}", key,
                               count, max_elements),
                   pointer));
  }
  const std::size_t width = static_cast<std::size_t>(dtype_bits(entry.dtype) / 8);
  const std::uint64_t size = entry.data_end - entry.data_begin;
  if (size != count * width) {
    return unexpected(
        blob_error(codes::k_blob_unreadable, file,
                   fmt::format("tensor \"{}\": its {} bytes do not hold {} elements of {}", key,
                               size, count, entry.dtype),
                   pointer));
  }
  FIB_TRY_ASSIGN(const std::string bytes, read_tensor_bytes(file, header, key, std::nullopt, size));
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i) {
    values.push_back(decode(load_le(bytes.data() + i * width, width)));
  }
  return values;
}

Expected<std::string> read_tensor_bytes(const std::filesystem::path& file,
                                        const SafetensorsHeader& header, const std::string& key,
                                        std::optional<std::uint64_t> bytes,
                                        std::uint64_t max_bytes) {
  const auto found = header.tensors.find(key);
  if (found == header.tensors.end()) {
    return unexpected(blob_error(codes::k_blob_malformed, file,
                                 fmt::format("no tensor named \"{}\" in the blob", key)));
  }
  const SafetensorsEntry& entry = found->second;
  const std::string pointer = pointer_append("", key);
  const std::uint64_t size = entry.data_end - entry.data_begin;
  const std::uint64_t wanted = bytes.value_or(size);
  if (wanted > size) {
    return unexpected(blob_error(
        codes::k_blob_malformed, file,
        fmt::format("tensor \"{}\" has {} bytes, not the {} asked for", key, size, wanted),
        pointer));
  }
  if (wanted > max_bytes) {
    return unexpected(
        blob_error(codes::k_io_too_large, file,
                   fmt::format("tensor \"{}\" has {} bytes, more than the limit of {}", key, wanted,
                               max_bytes),
                   pointer));
  }
  std::ifstream in(file, std::ios::binary);
  std::string out;
  if (!in || !read_at(in, header.data_start + entry.data_begin, wanted, out)) {
    return unexpected(blob_error(
        codes::k_blob_unreadable, file,
        fmt::format("tensor \"{}\": cannot read its {} bytes (has the file changed?)", key, wanted),
        pointer));
  }
  return out;
}

Expected<std::string> encode_safetensors(const std::vector<SafetensorsTensor>& tensors,
                                         const std::map<std::string, std::string>& metadata) {
  std::vector<const SafetensorsTensor*> ordered;
  ordered.reserve(tensors.size());
  for (const SafetensorsTensor& tensor : tensors) {
    ordered.push_back(&tensor);
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const SafetensorsTensor* a, const SafetensorsTensor* b) { return a->key < b->key; });
  const auto refuse = [](const std::string& key, std::string message) {
    return unexpected(blob_error(codes::k_blob_malformed, {}, std::move(message),
                                 key.empty() ? std::string() : pointer_append("", key)));
  };
  Json header = Json::object();
  if (!metadata.empty()) {
    Json entries = Json::object();
    for (const auto& [name, value] : metadata) {
      entries[name] = value;
    }
    header[std::string(k_key_metadata)] = std::move(entries);
  }
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    const SafetensorsTensor& tensor = *ordered[i];
    if (tensor.key.empty() || tensor.key == k_key_metadata) {
      return refuse(tensor.key, fmt::format("\"{}\" cannot name a tensor", tensor.key));
    }
    if (i > 0 && ordered[i - 1]->key == tensor.key) {
      return refuse(tensor.key, fmt::format("two tensors are named \"{}\"", tensor.key));
    }
    const std::uint64_t bits = dtype_bits(tensor.dtype);
    if (bits == 0 || bits % 8 != 0) {
      return refuse(tensor.key, fmt::format("tensor \"{}\": fib cannot write dtype \"{}\"",
                                            tensor.key, tensor.dtype));
    }
    std::uint64_t count = 1;
    for (const std::int64_t dim : tensor.shape) {
      if (dim < 0) {
        return refuse(tensor.key, fmt::format("tensor \"{}\": negative dimension", tensor.key));
      }
      const auto extent = static_cast<std::uint64_t>(dim);
      if (extent != 0 && count > std::numeric_limits<std::uint64_t>::max() / extent / (bits / 8)) {
        return refuse(tensor.key, fmt::format("tensor \"{}\": too many elements", tensor.key));
      }
      count *= extent;
    }
    if (tensor.data.size() != count * (bits / 8)) {
      return refuse(tensor.key, fmt::format("tensor \"{}\": {} bytes of data for {} elements of {}",
                                            tensor.key, tensor.data.size(), count, tensor.dtype));
    }
    Json entry = Json::object();
    entry[std::string(k_key_dtype)] = tensor.dtype;
    entry[std::string(k_key_shape)] = tensor.shape;
    entry[std::string(k_key_data_offsets)] = {offset, offset + tensor.data.size()};
    header[tensor.key] = std::move(entry);
    offset += tensor.data.size();
  }
  std::string text = header.dump();
  text.append((8 - (k_length_prefix_bytes + text.size()) % 8) % 8, ' ');
  std::string out;
  out.reserve(k_length_prefix_bytes + text.size() + static_cast<std::size_t>(offset));
  for (std::uint64_t i = 0, size = text.size(); i < k_length_prefix_bytes; ++i) {
    out.push_back(static_cast<char>((size >> (8 * i)) & 0xff));
  }
  out += text;
  for (const SafetensorsTensor* tensor : ordered) {
    out += tensor->data;
  }
  return out;
}

std::optional<DType> dtype_from_safetensors(std::string_view name) {
  for (const DType dtype : k_all_dtypes) {
    const std::string_view spelling = safetensors_dtype_name(dtype);
    if (!spelling.empty() && spelling == name) {
      return dtype;
    }
  }
  return std::nullopt;
}

} // namespace fib
