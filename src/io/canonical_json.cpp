// canonical_json_text (fib/io/json_io.hpp): the text of the documents fib writes.

#include "fib/io/json_io.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace fib {

namespace {

bool has_non_finite_number(const Json& value) {
  switch (value.type()) {
  case Json::value_t::number_float:
    return !std::isfinite(value.get<double>());
  case Json::value_t::object:
  case Json::value_t::array:
    return std::any_of(value.begin(), value.end(),
                       [](const Json& item) { return has_non_finite_number(item); });
  default:
    return false;
  }
}

// nlohmann's dump(2) of `value` at nesting `depth`, except that a number that is not finite is
// written as Python's json module writes it (Infinity, -Infinity, NaN) where nlohmann writes null.
void write_with_python_non_finite(const Json& value, std::size_t depth, std::string& out) {
  const auto indent = [&](std::size_t level) { out.append(level * 2, ' '); };
  switch (value.type()) {
  case Json::value_t::object: {
    if (value.empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    bool first = true;
    for (const auto& [key, member] : value.items()) {
      if (!first) {
        out += ",\n";
      }
      first = false;
      indent(depth + 1);
      out += Json(key).dump(-1, ' ', false, Json::error_handler_t::replace);
      out += ": ";
      write_with_python_non_finite(member, depth + 1, out);
    }
    out += '\n';
    indent(depth);
    out += '}';
    return;
  }
  case Json::value_t::array: {
    if (value.empty()) {
      out += "[]";
      return;
    }
    out += "[\n";
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (i > 0) {
        out += ",\n";
      }
      indent(depth + 1);
      write_with_python_non_finite(value[i], depth + 1, out);
    }
    out += '\n';
    indent(depth);
    out += ']';
    return;
  }
  case Json::value_t::number_float: {
    const double number = value.get<double>();
    if (std::isnan(number)) {
      out += "NaN";
      return;
    }
    if (std::isinf(number)) {
      out += number > 0 ? "Infinity" : "-Infinity";
      return;
    }
    break;
  }
  default:
    break;
  }
  out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

} // namespace

std::string canonical_json_text(const Json& document) {
  std::string text;
  if (has_non_finite_number(document)) {
    write_with_python_non_finite(document, 0, text);
  } else {
    text = document.dump(2, ' ', false, Json::error_handler_t::replace);
  }
  text += '\n';
  return text;
}

} // namespace fib
