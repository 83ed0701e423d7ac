// The binary encoding of definition reports and diagnostics (see report_codec.hpp).

#include "validate/report_codec.hpp"

#include "util/byte_codec.hpp"

#include <fib/base/codes.hpp>

#include <map>
#include <string>
#include <vector>

namespace fib::dataset_checks {
namespace {

// Set in a category's first byte when the category ran.
constexpr std::uint8_t k_category_ran = 1;

// The fewest bytes one encoded message takes (encode_result): its level, the sizes of its code,
// text and pointer, its file index and its line.
constexpr std::size_t k_least_message_bytes = 1 + 4 + 4 + 4 + 4 + 4;

template <class Enum> std::optional<Enum> decode_enum(detail::ByteReader& in, Enum last) {
  const std::uint8_t value = in.u8();
  if (!in.ok() || value > static_cast<std::uint8_t>(last)) {
    in.fail();
    return std::nullopt;
  }
  return static_cast<Enum>(value);
}

// The files the messages of one report point at, each written once: a message stores its
// file's index + 1 (0 when it names none).
class FileTable {
public:
  std::uint32_t index_of(const std::string& file) {
    if (file.empty()) {
      return 0;
    }
    const auto [it, inserted] =
        m_index.emplace(file, static_cast<std::uint32_t>(m_files.size() + 1));
    if (inserted) {
      m_files.push_back(file);
    }
    return it->second;
  }
  const std::vector<std::string>& files() const { return m_files; }

private:
  std::map<std::string, std::uint32_t> m_index;
  std::vector<std::string> m_files;
};

void encode_result(const CheckResult& result, FileTable& files, detail::ByteWriter& out) {
  out.u8(static_cast<std::uint8_t>(result.status));
  out.u32(static_cast<std::uint32_t>(result.messages.size()));
  for (const CheckMessage& message : result.messages) {
    out.u8(static_cast<std::uint8_t>(message.level));
    out.str(message.code);
    out.str(message.message);
    out.u32(files.index_of(message.where.file));
    out.u32(message.where.line);
    out.str(message.where.pointer);
  }
}

std::optional<CheckResult> decode_result(detail::ByteReader& in,
                                         const std::vector<std::string>& files) {
  CheckResult result;
  const auto status = decode_enum(in, CheckStatus::error);
  const std::uint32_t count = in.u32();
  if (!status || !in.ok()) {
    return std::nullopt;
  }
  if (count > in.remaining() / k_least_message_bytes) {
    // More messages than the bytes left can hold: corrupt, and not a size to reserve.
    in.fail();
    return std::nullopt;
  }
  result.status = *status;
  result.messages.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto level = decode_enum(in, CheckLevel::error);
    const std::string_view code = in.str();
    const std::string_view text = in.str();
    const std::uint32_t file = in.u32();
    const std::uint32_t line = in.u32();
    const std::string_view pointer = in.str();
    if (!level || !in.ok() || file > files.size()) {
      in.fail();
      return std::nullopt;
    }
    result.messages.push_back(CheckMessage{
        *level, std::string(text), table_code(code),
        MessageLocation{file == 0 ? std::string{} : files[file - 1], std::string(pointer), line}});
  }
  return result;
}

} // namespace

void encode_definition_report(const DefinitionReport& report, detail::ByteWriter& out) {
  FileTable files;
  for (const std::optional<CheckResult>& category : report.categories) {
    if (category) {
      for (const CheckMessage& message : category->messages) {
        files.index_of(message.where.file);
      }
    }
  }
  out.u8(static_cast<std::uint8_t>(report.status));
  out.u32(static_cast<std::uint32_t>(files.files().size()));
  for (const std::string& file : files.files()) {
    out.str(file);
  }
  for (const std::optional<CheckResult>& category : report.categories) {
    out.u8(category ? k_category_ran : 0);
    if (category) {
      encode_result(*category, files, out);
    }
  }
}

std::optional<DefinitionReport> decode_definition_report(detail::ByteReader& in) {
  DefinitionReport report;
  const auto status = decode_enum(in, CheckStatus::error);
  const std::uint32_t file_count = in.u32();
  if (!status || !in.ok()) {
    in.fail();
    return std::nullopt;
  }
  report.status = *status;
  std::vector<std::string> files;
  for (std::uint32_t i = 0; i < file_count && in.ok(); ++i) {
    files.emplace_back(in.str());
  }
  if (!in.ok()) {
    return std::nullopt;
  }
  for (std::optional<CheckResult>& category : report.categories) {
    const std::uint8_t ran = in.u8();
    if (!in.ok() || ran > k_category_ran) {
      in.fail();
      return std::nullopt;
    }
    if (ran == k_category_ran) {
      category = decode_result(in, files);
      if (!category) {
        return std::nullopt;
      }
    }
  }
  return report;
}

void encode_diagnostic(const Diagnostic& diagnostic, detail::ByteWriter& out) {
  out.u8(static_cast<std::uint8_t>(diagnostic.severity));
  out.str(diagnostic.code);
  out.str(diagnostic.message);
  out.str(diagnostic.file.native());
  out.str(diagnostic.pointer);
  out.u32(static_cast<std::uint32_t>(diagnostic.line));
  out.str(diagnostic.hint);
}

std::optional<Diagnostic> decode_diagnostic(detail::ByteReader& in) {
  Diagnostic d;
  const auto severity = decode_enum(in, Severity::error);
  d.code = in.str();
  d.message = in.str();
  d.file = std::filesystem::path(std::string(in.str()));
  d.pointer = in.str();
  d.line = static_cast<int>(in.u32());
  d.hint = in.str();
  if (!severity || !in.ok()) {
    return std::nullopt;
  }
  d.severity = *severity;
  return d;
}

} // namespace fib::dataset_checks
