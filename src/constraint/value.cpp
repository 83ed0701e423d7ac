#include "constraint/value.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <type_traits>

namespace fib::constraint_detail {

Value make_int(std::int64_t v) {
  return Value{v};
}
Value make_float(double v) {
  return Value{v};
}
Value make_bool(bool v) {
  return Value{v};
}

bool is_none(const Value& v) {
  return std::holds_alternative<std::monostate>(v.data);
}

std::string_view type_name(const Value& v) {
  switch (v.data.index()) {
  case 0:
    return "NoneType";
  case 1:
    return "bool";
  case 2:
    return "int";
  case 3:
    return "float";
  case 4:
    return "str";
  case 5:
    return std::get<Sequence>(v.data).kind == SequenceKind::tuple ? "tuple" : "list";
  default:
    return "Tensor";
  }
}

std::optional<Number> as_number(const Value& v) {
  if (const auto* b = std::get_if<bool>(&v.data)) {
    return Number{false, *b ? 1 : 0, 0.0};
  }
  if (const auto* i = std::get_if<std::int64_t>(&v.data)) {
    return Number{false, *i, 0.0};
  }
  if (const auto* f = std::get_if<double>(&v.data)) {
    return Number{true, 0, *f};
  }
  return std::nullopt;
}

std::string cut(std::string text, std::size_t limit) {
  if (text.size() <= limit) {
    return text;
  }
  std::size_t end = limit;
  // Do not split a UTF-8 sequence.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U) {
    --end;
  }
  text.resize(end);
  text += "...";
  return text;
}

std::string python_float_repr(double d) {
  if (std::isnan(d)) {
    return "nan";
  }
  if (std::isinf(d)) {
    return d < 0 ? "-inf" : "inf";
  }
  if (d == 0.0) {
    return std::signbit(d) ? "-0.0" : "0.0";
  }
  char buffer[64];
  const auto converted =
      std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::scientific);
  const std::string scientific(buffer, converted.ptr);
  std::string out;
  std::size_t pos = 0;
  if (scientific[0] == '-') {
    out += '-';
    pos = 1;
  }
  const std::size_t e_pos = scientific.find('e');
  std::string digits;
  for (std::size_t i = pos; i < e_pos; ++i) {
    if (scientific[i] != '.') {
      digits += scientific[i];
    }
  }
  const int exponent = std::atoi(scientific.c_str() + e_pos + 1);
  if (exponent >= -4 && exponent < 16) {
    if (exponent >= 0) {
      const auto int_digits = static_cast<std::size_t>(exponent) + 1;
      if (digits.size() <= int_digits) {
        out += digits;
        out.append(int_digits - digits.size(), '0');
        out += ".0";
      } else {
        out += digits.substr(0, int_digits);
        out += '.';
        out += digits.substr(int_digits);
      }
    } else {
      out += "0.";
      out.append(static_cast<std::size_t>(-exponent - 1), '0');
      out += digits;
    }
    return out;
  }
  out += digits[0];
  if (digits.size() > 1) {
    out += '.';
    out += digits.substr(1);
  }
  out += fmt::format("e{}{:02}", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out;
}

std::size_t code_points(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U;
  }));
}

std::string python_str_repr(std::string_view text) {
  const char quote =
      (text.find('\'') != std::string_view::npos && text.find('"') == std::string_view::npos)
          ? '"'
          : '\'';
  std::string out(1, quote);
  for (const char c : text) {
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

std::string shape_repr(const std::vector<std::int64_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    out += fmt::format("{}{}", i == 0 ? "" : ", ", shape[i]);
  }
  out += shape.size() == 1 ? ",)" : ")";
  return out;
}

std::optional<std::int64_t> checked_numel(const std::vector<std::int64_t>& shape) {
  std::int64_t product = 1;
  for (const std::int64_t dim : shape) {
    if (dim < 0 || __builtin_mul_overflow(product, dim, &product)) {
      return std::nullopt;
    }
  }
  return product;
}

std::optional<Value> known_element(const TensorRef& tensor, std::size_t index) {
  const TensorFacts& facts = *tensor.facts;
  const auto numel = checked_numel(facts.shape);
  if (!facts.values || !numel || facts.values->size() != static_cast<std::size_t>(*numel) ||
      index >= facts.values->size()) {
    return std::nullopt;
  }
  const double element = (*facts.values)[index];
  if (!facts.integral) {
    return make_float(element);
  }
  // 2^63 is exactly representable; anything at or above it does not fit.
  constexpr double k_two_63 = 9223372036854775808.0;
  if (!std::isfinite(element) || element != std::trunc(element) || element >= k_two_63 ||
      element < -k_two_63) {
    return std::nullopt;
  }
  return make_int(static_cast<std::int64_t>(element));
}

std::string repr(const Value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "None";
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "True" : "False";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return fmt::format("{}", x);
        } else if constexpr (std::is_same_v<T, double>) {
          return python_float_repr(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return python_str_repr(x);
        } else if constexpr (std::is_same_v<T, Sequence>) {
          const bool tuple = x.kind == SequenceKind::tuple;
          std::string out = tuple ? "(" : "[";
          for (std::size_t i = 0; i < x.items.size(); ++i) {
            out += (i == 0 ? "" : ", ") + repr(x.items[i]);
          }
          out += tuple ? (x.items.size() == 1 ? ",)" : ")") : "]";
          return out;
        } else if constexpr (std::is_same_v<T, TensorRef>) {
          return "<tensor of shape " + shape_repr(x.facts->shape) + ">";
        } else {
          const auto element = known_element(x.tensor, x.index);
          return element ? "tensor(" + repr(*element) + ")" : "<0-d tensor>";
        }
      },
      v.data);
}

} // namespace fib::constraint_detail
