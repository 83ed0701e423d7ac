#include "io/schema_reader.hpp"

#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace fib::detail {
namespace {

constexpr std::array<std::string_view, 5> k_dumper_extras = {"init", "check", "optional", "param",
                                                             "dtype_from"};

// Python float() on a string: decimal literals, "nan", "inf", "infinity" (any case, optional sign),
// underscores between digits are not accepted here.
std::optional<double> parse_python_float(std::string_view text) {
  const std::string t = ascii_lower(detail::trim(text));
  if (t.empty()) {
    return std::nullopt;
  }
  std::string_view body = t;
  bool negative = false;
  if (body.front() == '+' || body.front() == '-') {
    negative = body.front() == '-';
    body.remove_prefix(1);
    // One sign only: from_chars would read a second '-' ("--5" → 5), Python's float() does not.
    if (!body.empty() && (body.front() == '+' || body.front() == '-')) {
      return std::nullopt;
    }
  }
  if (body == "nan") {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (body == "inf" || body == "infinity") {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  double value = 0;
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (ec != std::errc() || ptr != body.data() + body.size()) {
    return std::nullopt;
  }
  return negative ? -value : value;
}

} // namespace

std::string_view json_type_name(const Json& value) {
  switch (value.type()) {
  case Json::value_t::null:
    return "null";
  case Json::value_t::boolean:
    return "boolean";
  case Json::value_t::number_integer:
  case Json::value_t::number_unsigned:
    return "integer";
  case Json::value_t::number_float:
    return "number";
  case Json::value_t::string:
    return "string";
  case Json::value_t::array:
    return "list";
  case Json::value_t::object:
    return "object";
  default:
    return "value";
  }
}

void Reader::report(std::string_view code, const std::string& pointer, std::string message,
                    std::string hint) {
  Diagnostic d = make_diagnostic(code, std::move(message));
  d.file = m_doc.file;
  d.pointer = pointer;
  d.line = m_doc.line_of(pointer);
  d.hint = std::move(hint);
  if (d.severity == Severity::error) {
    ++m_errors;
  }
  m_sink.report(std::move(d));
}

bool Reader::expect_object(const Json& value, const std::string& pointer) {
  if (value.is_object()) {
    return true;
  }
  report(codes::k_schema_type, pointer,
         fmt::format("Input should be a valid dictionary, got {}", json_type_name(value)));
  return false;
}

const Json* Reader::member(const Json& object, const std::string& pointer, std::string_view key,
                           Presence presence) {
  const auto it = object.find(key);
  if (it != object.end()) {
    return &*it;
  }
  if (presence == Presence::required) {
    report(codes::k_schema_required, pointer_append(pointer, key), "Field required");
  }
  return nullptr;
}

std::optional<std::string> Reader::string(const Json& value, const std::string& pointer,
                                          EmptyString empty) {
  if (!value.is_string()) {
    report(codes::k_schema_type, pointer,
           fmt::format("Input should be a valid string, got {}", json_type_name(value)));
    return std::nullopt;
  }
  const auto& text = value.get_ref<const std::string&>();
  if (empty == EmptyString::forbidden && text.empty()) {
    report(codes::k_schema_empty, pointer, "String should have at least 1 character");
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> Reader::nullable_string(const Json& value, const std::string& pointer) {
  if (value.is_null()) {
    return std::nullopt;
  }
  return string(value, pointer, EmptyString::allowed);
}

std::optional<std::int64_t> Reader::integer(const Json& value, const std::string& pointer,
                                            std::optional<std::int64_t> minimum) {
  std::optional<std::int64_t> result;
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    result = value.get<std::int64_t>();
  } else if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      report(codes::k_schema_range, pointer, "Input is too large for a 64-bit integer");
      return std::nullopt;
    }
    result = static_cast<std::int64_t>(u);
  } else if (value.is_boolean()) {
    result = value.get<bool>() ? 1 : 0;
    report(codes::k_schema_coerced, pointer,
           fmt::format("boolean {} accepted as the integer {}", value.dump(), *result),
           "write a plain integer");
  } else if (value.is_number_float() || value.is_string()) {
    std::optional<double> as_double;
    if (value.is_number_float()) {
      as_double = value.get<double>();
    } else {
      const std::string text(detail::trim(value.get_ref<const std::string&>()));
      std::int64_t parsed = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
      if (!text.empty() && ec == std::errc() && ptr == text.data() + text.size()) {
        result = parsed;
      } else {
        as_double = parse_python_float(text);
        if (!as_double) {
          report(codes::k_schema_type, pointer,
                 "Input should be a valid integer, unable to parse string as an integer");
          return std::nullopt;
        }
      }
    }
    if (!result) {
      const double d = *as_double;
      if (!std::isfinite(d)) {
        report(codes::k_schema_type, pointer, "Input should be a finite number");
        return std::nullopt;
      }
      if (d != std::trunc(d)) {
        report(codes::k_schema_type, pointer,
               "Input should be a valid integer, got a number with a fractional part");
        return std::nullopt;
      }
      if (std::fabs(d) > 9.2e18) {
        report(codes::k_schema_range, pointer, "Input is too large for a 64-bit integer");
        return std::nullopt;
      }
      result = static_cast<std::int64_t>(d);
    }
    report(codes::k_schema_coerced, pointer,
           fmt::format("{} accepted as the integer {}", json_excerpt(value), *result),
           "write a plain integer");
  } else {
    report(codes::k_schema_type, pointer,
           fmt::format("Input should be a valid integer, got {}", json_type_name(value)));
    return std::nullopt;
  }
  if (minimum && *result < *minimum) {
    report(codes::k_schema_range, pointer,
           fmt::format("Input should be greater than or equal to {}, got {}", *minimum, *result));
    return std::nullopt;
  }
  return result;
}

std::optional<double> Reader::number(const Json& value, const std::string& pointer) {
  if (value.is_number()) {
    return value.get<double>();
  }
  if (value.is_boolean()) {
    report(codes::k_schema_coerced, pointer,
           fmt::format("boolean {} accepted as a number", value.dump()), "write a plain number");
    return value.get<bool>() ? 1.0 : 0.0;
  }
  if (value.is_string()) {
    if (auto parsed = parse_python_float(value.get_ref<const std::string&>())) {
      // "NaN"/"Infinity" strings are how the old tool writes non-finite errors: not a coercion
      // worth a warning.
      if (std::isfinite(*parsed)) {
        report(codes::k_schema_coerced, pointer,
               fmt::format("{} accepted as a number", json_excerpt(value)), "write a plain number");
      }
      return parsed;
    }
    report(codes::k_schema_type, pointer,
           "Input should be a valid number, unable to parse string as a number");
    return std::nullopt;
  }
  report(codes::k_schema_type, pointer,
         fmt::format("Input should be a valid number, got {}", json_type_name(value)));
  return std::nullopt;
}

std::optional<bool> Reader::boolean(const Json& value, const std::string& pointer) {
  if (value.is_boolean()) {
    return value.get<bool>();
  }
  std::optional<bool> result;
  if (value.is_number()) {
    const double d = value.get<double>();
    if (d == 0.0 || d == 1.0) {
      result = d == 1.0;
    }
  } else if (value.is_string()) {
    const std::string t = ascii_lower(detail::trim(value.get_ref<const std::string&>()));
    if (t == "1" || t == "true" || t == "t" || t == "yes" || t == "y" || t == "on") {
      result = true;
    } else if (t == "0" || t == "false" || t == "f" || t == "no" || t == "n" || t == "off") {
      result = false;
    }
  }
  if (!result) {
    report(codes::k_schema_type, pointer, "Input should be a valid boolean");
    return std::nullopt;
  }
  report(
      codes::k_schema_coerced, pointer,
      fmt::format("{} accepted as the boolean {}", json_excerpt(value), *result ? "true" : "false"),
      "write true or false");
  return result;
}

std::optional<std::vector<std::string>>
Reader::string_list(const Json& value, const std::string& pointer, EmptyString empty) {
  if (!value.is_array()) {
    report(codes::k_schema_type, pointer,
           fmt::format("Input should be a valid list, got {}", json_type_name(value)));
    return std::nullopt;
  }
  std::vector<std::string> items;
  bool ok = true;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (auto item = string(value[i], pointer_append(pointer, i), empty)) {
      items.push_back(std::move(*item));
    } else {
      ok = false;
    }
  }
  if (!ok) {
    return std::nullopt;
  }
  return items;
}

void Reader::note_unknown_keys(const Json& object, const std::string& pointer,
                               std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : object.items()) {
    const bool is_known =
        std::find(known.begin(), known.end(), key) != known.end() ||
        std::find(k_dumper_extras.begin(), k_dumper_extras.end(), key) != k_dumper_extras.end();
    if (!is_known) {
      report(codes::k_schema_unknown_key, pointer_append(pointer, key),
             fmt::format("unknown key '{}' is ignored", text_excerpt(key)));
    }
  }
}

} // namespace fib::detail
