// The binary encoding of definition reports and diagnostics (see report_codec.hpp).

#include "validate/report_codec.hpp"

#include "util/byte_codec.hpp"

#include <fib/base/codes.hpp>

namespace fib::dataset_checks {
namespace {

// Set in a category's first byte when the category ran.
constexpr std::uint8_t k_category_ran = 1;

template <class Enum> std::optional<Enum> decode_enum(detail::ByteReader& in, Enum last) {
  const std::uint8_t value = in.u8();
  if (!in.ok() || value > static_cast<std::uint8_t>(last)) {
    in.fail();
    return std::nullopt;
  }
  return static_cast<Enum>(value);
}

void encode_result(const CheckResult& result, detail::ByteWriter& out) {
  out.u8(static_cast<std::uint8_t>(result.status));
  out.u32(static_cast<std::uint32_t>(result.messages.size()));
  for (const CheckMessage& message : result.messages) {
    out.u8(static_cast<std::uint8_t>(message.level));
    out.str(message.code);
    out.str(message.message);
  }
}

std::optional<CheckResult> decode_result(detail::ByteReader& in) {
  CheckResult result;
  const auto status = decode_enum(in, CheckStatus::error);
  const std::uint32_t count = in.u32();
  if (!status || !in.ok()) {
    return std::nullopt;
  }
  result.status = *status;
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto level = decode_enum(in, CheckLevel::error);
    const std::string_view code = in.str();
    const std::string_view text = in.str();
    if (!level || !in.ok()) {
      return std::nullopt;
    }
    result.messages.push_back(CheckMessage{*level, std::string(text), table_code(code)});
  }
  return result;
}

} // namespace

void encode_definition_report(const DefinitionReport& report, detail::ByteWriter& out) {
  out.u8(static_cast<std::uint8_t>(report.status));
  for (const std::optional<CheckResult>& category : report.categories) {
    out.u8(category ? k_category_ran : 0);
    if (category) {
      encode_result(*category, out);
    }
  }
}

std::optional<DefinitionReport> decode_definition_report(detail::ByteReader& in) {
  DefinitionReport report;
  const auto status = decode_enum(in, CheckStatus::error);
  if (!status) {
    return std::nullopt;
  }
  report.status = *status;
  for (std::optional<CheckResult>& category : report.categories) {
    const std::uint8_t ran = in.u8();
    if (!in.ok() || ran > k_category_ran) {
      in.fail();
      return std::nullopt;
    }
    if (ran == k_category_ran) {
      category = decode_result(in);
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
