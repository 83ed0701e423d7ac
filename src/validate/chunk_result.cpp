#include "validate/chunk_result.hpp"

#include "util/byte_codec.hpp"
#include "validate/report_codec.hpp"

#include <cstdint>
#include <cstring>

namespace fib::dataset_checks {

std::string encode_chunk(const ChunkResult& result, const DiagnosticList& environment) {
  detail::ByteWriter out;
  out.u64(result.loaded);
  out.u32(static_cast<std::uint32_t>(environment.items().size()));
  for (const Diagnostic& d : environment.items()) {
    encode_diagnostic(d, out);
  }
  out.u32(static_cast<std::uint32_t>(result.reports.size()));
  for (const auto& [name, report] : result.reports) {
    out.str(name);
    encode_definition_report(report, out);
  }
  out.u32(static_cast<std::uint32_t>(result.cache_entries.size()));
  for (const auto& [key, value] : result.cache_entries) {
    out.str(std::string_view(reinterpret_cast<const char*>(key.data()), key.size()));
    out.str(value);
  }
  out.u32(static_cast<std::uint32_t>(result.used_packs.size()));
  for (const std::size_t pack : result.used_packs) {
    out.u64(pack);
  }
  out.u32(static_cast<std::uint32_t>(result.signed_files.size()));
  for (const auto& [path, signed_file] : result.signed_files) {
    out.str(path);
    out.u8(static_cast<std::uint8_t>(signed_file.role));
    out.u8(signed_file.sign ? 1 : 0);
  }
  return out.take();
}

std::optional<DecodedChunk> decode_chunk(std::string_view bytes,
                                         std::vector<Diagnostic>& environment) {
  detail::ByteReader in(bytes);
  DecodedChunk decoded;
  ChunkResult& result = decoded.result;
  result.loaded = in.u64();
  const std::uint32_t diagnostics = in.u32();
  for (std::uint32_t i = 0; in.ok() && i < diagnostics; ++i) {
    if (auto d = decode_diagnostic(in)) {
      environment.push_back(std::move(*d));
    }
  }
  const std::uint32_t reports = in.u32();
  for (std::uint32_t i = 0; in.ok() && i < reports; ++i) {
    std::string name(in.str());
    if (auto report = decode_definition_report(in)) {
      result.reports.emplace_back(std::move(name), std::move(*report));
    }
  }
  const std::uint32_t entries = in.u32();
  for (std::uint32_t i = 0; in.ok() && i < entries; ++i) {
    const std::string_view key = in.str();
    const std::string_view value = in.str();
    Sha256Digest digest{};
    if (key.size() != digest.size()) {
      in.fail();
      break;
    }
    std::memcpy(digest.data(), key.data(), digest.size());
    decoded.cache_entries.emplace_back(digest, value);
  }
  const std::uint32_t packs = in.u32();
  for (std::uint32_t i = 0; in.ok() && i < packs; ++i) {
    result.used_packs.push_back(static_cast<std::size_t>(in.u64()));
  }
  const std::uint32_t signed_files = in.u32();
  for (std::uint32_t i = 0; in.ok() && i < signed_files; ++i) {
    std::string path(in.str());
    const std::uint8_t role = in.u8();
    const std::uint8_t sign = in.u8();
    if (role > static_cast<std::uint8_t>(OldSchemaRole::solution) || sign > 1) {
      in.fail();
      break;
    }
    result.signed_files.emplace_back(std::move(path),
                                     SignedFile{static_cast<OldSchemaRole>(role), sign == 1});
  }
  if (!in.finished()) {
    return std::nullopt;
  }
  return decoded;
}

} // namespace fib::dataset_checks
