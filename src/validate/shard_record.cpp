// A report's "fib_shard" record, read back for validate-merge.

#include "validate/shard_record.hpp"

#include <fib/base/codes.hpp>

#include <string>

namespace fib {
namespace {

constexpr const char* k_pointer = "/fib_shard";

// A JSON integer of at least `minimum` (no coercion: fib wrote it).
std::optional<std::size_t> whole_number(detail::Reader& reader, const Json& record, const char* key,
                                        std::size_t minimum) {
  const Json* value = reader.member(record, k_pointer, key, detail::Presence::required);
  if (value == nullptr) {
    return std::nullopt;
  }
  if (!value->is_number_integer() || value->get<long long>() < static_cast<long long>(minimum)) {
    reader.report(codes::k_report_invalid, pointer_append(k_pointer, key),
                  "Input should be an integer of at least " + std::to_string(minimum));
    return std::nullopt;
  }
  return static_cast<std::size_t>(value->get<long long>());
}

std::optional<std::string> text(detail::Reader& reader, const Json& record, const char* key) {
  const Json* value = reader.member(record, k_pointer, key, detail::Presence::required);
  if (value == nullptr) {
    return std::nullopt;
  }
  return reader.string(*value, pointer_append(k_pointer, key), detail::EmptyString::allowed);
}

} // namespace

std::optional<ShardRecord> parse_shard_record(detail::Reader& reader, const Json& value) {
  if (!reader.expect_object(value, k_pointer)) {
    return std::nullopt;
  }
  const auto index = whole_number(reader, value, "index", 1);
  const auto count = whole_number(reader, value, "count", 1);
  const auto definitions = whole_number(reader, value, "dataset_definitions", 0);
  auto fingerprint = text(reader, value, "dataset_fingerprint");
  auto version = text(reader, value, "fib_version");
  if (!index || !count || !definitions || !fingerprint || !version) {
    return std::nullopt;
  }
  if (*index > *count) {
    reader.report(codes::k_report_invalid, pointer_append(k_pointer, "index"),
                  "the shard index is larger than the shard count");
    return std::nullopt;
  }
  return ShardRecord{*index, *count, *definitions, std::move(*fingerprint), std::move(*version)};
}

} // namespace fib
