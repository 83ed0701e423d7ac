#include "constraint/evaluator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <variant>

namespace fib::constraint_detail {

namespace {

// Python's divmod() of two floats (b != 0): the floored quotient and the remainder with the
// divisor's sign, computed as CPython's float_divmod does.
std::pair<double, double> float_divmod(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, b);
  }
  double floor_div = 0.0;
  if (div != 0.0) {
    floor_div = std::floor(div);
    if (div - floor_div > 0.5) {
      floor_div += 1.0;
    }
  } else {
    floor_div = std::copysign(0.0, a / b);
  }
  return {floor_div, mod};
}

bool is_text_or_sequence(const Value& v) {
  return std::holds_alternative<std::string>(v.data) || std::holds_alternative<Sequence>(v.data);
}

bool is_integer(const Value& v) {
  return std::holds_alternative<std::int64_t>(v.data) || std::holds_alternative<bool>(v.data);
}

// len() of a str (code points) or of a tuple or list.
std::size_t length_of(const Value& v) {
  if (const auto* text = std::get_if<std::string>(&v.data)) {
    return code_points(*text);
  }
  return std::get<Sequence>(v.data).items.size();
}

// Two str, or two tuples (lists), joined.
Value concatenation(const Value& a, const Value& b) {
  if (const auto* x = std::get_if<std::string>(&a.data)) {
    return Value{*x + std::get<std::string>(b.data)};
  }
  Sequence joined = std::get<Sequence>(a.data);
  const auto& tail = std::get<Sequence>(b.data).items;
  joined.items.insert(joined.items.end(), tail.begin(), tail.end());
  return Value{std::move(joined)};
}

// A str, tuple or list repeated `count` times (none when count <= 0).
Value repetition(const Value& v, std::int64_t count) {
  if (const auto* text = std::get_if<std::string>(&v.data)) {
    std::string out;
    for (std::int64_t i = 0; i < count; ++i) {
      out += *text;
    }
    return Value{std::move(out)};
  }
  const auto& sequence = std::get<Sequence>(v.data);
  Sequence out{sequence.kind, {}};
  for (std::int64_t i = 0; i < count; ++i) {
    out.items.insert(out.items.end(), sequence.items.begin(), sequence.items.end());
  }
  return Value{std::move(out)};
}

// Python's int / int for b != 0: the exact quotient rounded once to the nearest double. Dividing
// the two ints converted to double rounds twice when one of them is over 2^53.
__extension__ typedef unsigned __int128 Unsigned128; // a GCC and Clang extension

double true_divide(std::int64_t a, std::int64_t b) {
  constexpr std::int64_t k_exact = std::int64_t{1} << 53;
  if (a == 0 || (a >= -k_exact && a <= k_exact && b >= -k_exact && b <= k_exact)) {
    return static_cast<double>(a) / static_cast<double>(b); // both exact: one rounding
  }
  const auto magnitude = [](std::int64_t v) {
    return v < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  };
  const std::uint64_t numerator = magnitude(a);
  const std::uint64_t denominator = magnitude(b);
  // Shift the numerator to 127 bits, so that the integer quotient has at least 63 significant
  // bits; a nonzero remainder is folded into its lowest bit, far below the double's last bit,
  // so that converting the quotient rounds as the exact value would.
  const int shift = 127 - (64 - __builtin_clzll(numerator));
  const Unsigned128 scaled = static_cast<Unsigned128>(numerator) << shift;
  Unsigned128 quotient = scaled / denominator;
  if (scaled % denominator != 0) {
    quotient |= 1U;
  }
  const double magnitude_quotient = std::ldexp(static_cast<double>(quotient), -shift);
  return (a < 0) != (b < 0) ? -magnitude_quotient : magnitude_quotient;
}

// Whether `op` concatenates or repeats rather than computes.
bool is_sequence_operation(BinaryOp op, const Value& a, const Value& b) {
  if (op == BinaryOp::add) {
    if (std::holds_alternative<std::string>(a.data)) {
      return std::holds_alternative<std::string>(b.data);
    }
    const auto* x = std::get_if<Sequence>(&a.data);
    const auto* y = std::get_if<Sequence>(&b.data);
    return x != nullptr && y != nullptr && x->kind == y->kind;
  }
  return op == BinaryOp::multiply &&
         ((is_text_or_sequence(a) && is_integer(b)) || (is_integer(a) && is_text_or_sequence(b)));
}

template <class T> bool apply_order(CompareOp op, const T& a, const T& b) {
  switch (op) {
  case CompareOp::lt:
    return a < b;
  case CompareOp::le:
    return a <= b;
  case CompareOp::gt:
    return a > b;
  default:
    return a >= b;
  }
}

} // namespace

std::optional<Value> Evaluator::arithmetic(BinaryOp op, Value left, Value right) {
  auto a = resolve(left);
  if (!a) {
    return std::nullopt;
  }
  auto b = resolve(right);
  if (!b) {
    return std::nullopt;
  }
  if (is_sequence_operation(op, *a, *b)) {
    return sequence_arithmetic(op, *a, *b);
  }
  const auto x = as_number(*a);
  const auto y = as_number(*b);
  if (!x || !y) {
    return fail(fmt::format("unsupported operand types for {}: '{}' and '{}'", symbol(op),
                            type_name(*a), type_name(*b)));
  }
  if (!x->is_float && !y->is_float && !(op == BinaryOp::power && y->integer < 0)) {
    return integer_arithmetic(op, x->integer, y->integer);
  }
  return float_arithmetic(op, x->as_double(), y->as_double());
}

std::optional<Value> Evaluator::sequence_arithmetic(BinaryOp op, const Value& a, const Value& b) {
  const auto too_long = [&](const Value& kind) {
    return fail(fmt::format("a {} longer than {} is not supported", type_name(kind),
                            k_max_sequence_length));
  };
  if (op == BinaryOp::add) {
    if (length_of(a) + length_of(b) > k_max_sequence_length) {
      return too_long(a);
    }
    return concatenation(a, b);
  }
  const bool sequence_first = is_text_or_sequence(a);
  const Value& sequence = sequence_first ? a : b;
  const Value& times = sequence_first ? b : a;
  const std::int64_t count = std::max<std::int64_t>(as_number(times)->integer, 0);
  const std::size_t length = length_of(sequence);
  if (length != 0 && static_cast<std::uint64_t>(count) > k_max_sequence_length / length) {
    return too_long(sequence);
  }
  return repetition(sequence, count);
}

std::optional<Value> Evaluator::integer_overflow() {
  return fail("integer overflow: the result does not fit in 64 bits");
}

std::optional<Value> Evaluator::integer_arithmetic(BinaryOp op, std::int64_t a, std::int64_t b) {
  std::int64_t result = 0;
  switch (op) {
  case BinaryOp::add:
    return __builtin_add_overflow(a, b, &result) ? integer_overflow() : make_int(result);
  case BinaryOp::subtract:
    return __builtin_sub_overflow(a, b, &result) ? integer_overflow() : make_int(result);
  case BinaryOp::multiply:
    return __builtin_mul_overflow(a, b, &result) ? integer_overflow() : make_int(result);
  case BinaryOp::divide:
    if (b == 0) {
      return fail("division by zero");
    }
    return make_float(true_divide(a, b));
  case BinaryOp::floor_divide: {
    if (b == 0) {
      return fail("division by zero");
    }
    if (a == std::numeric_limits<std::int64_t>::min() && b == -1) {
      return integer_overflow();
    }
    std::int64_t quotient = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) {
      --quotient; // Python rounds toward negative infinity
    }
    return make_int(quotient);
  }
  case BinaryOp::modulo: {
    if (b == 0) {
      return fail("division by zero");
    }
    if (b == -1) {
      return make_int(0); // also avoids INT64_MIN % -1, which traps in C++
    }
    std::int64_t remainder = a % b;
    if (remainder != 0 && ((remainder < 0) != (b < 0))) {
      remainder += b; // the sign follows the divisor
    }
    return make_int(remainder);
  }
  case BinaryOp::power:
    return integer_power(a, b);
  }
  return fail("unsupported operator");
}

// exponent >= 0 (a negative exponent gives a float).
std::optional<Value> Evaluator::integer_power(std::int64_t base, std::int64_t exponent) {
  std::int64_t value = 1;
  while (exponent > 0) {
    if ((exponent & 1) != 0 && __builtin_mul_overflow(value, base, &value)) {
      return integer_overflow();
    }
    exponent >>= 1;
    if (exponent > 0 && __builtin_mul_overflow(base, base, &base)) {
      return integer_overflow();
    }
  }
  return make_int(value);
}

std::optional<Value> Evaluator::float_arithmetic(BinaryOp op, double a, double b) {
  switch (op) {
  case BinaryOp::add:
    return make_float(a + b);
  case BinaryOp::subtract:
    return make_float(a - b);
  case BinaryOp::multiply:
    return make_float(a * b);
  case BinaryOp::divide:
    if (b == 0.0) {
      return fail("division by zero");
    }
    return make_float(a / b);
  case BinaryOp::floor_divide:
  case BinaryOp::modulo: {
    if (b == 0.0) {
      return fail("division by zero");
    }
    const auto [floor_div, mod] = float_divmod(a, b);
    return make_float(op == BinaryOp::modulo ? mod : floor_div);
  }
  case BinaryOp::power:
    return float_power(a, b);
  }
  return fail("unsupported operator");
}

std::optional<Value> Evaluator::float_power(double a, double b) {
  if (b == 0.0) {
    return make_float(1.0);
  }
  if (a == 0.0 && b < 0.0 && std::isfinite(b)) { // 0.0 ** -inf is inf
    return fail("division by zero: zero raised to a negative power");
  }
  if (std::isfinite(a) && std::isfinite(b) && a < 0.0 && b != std::floor(b)) {
    return fail("unsupported result: a negative number to a fractional power is complex");
  }
  const double result = std::pow(a, b);
  if (std::isinf(result) && std::isfinite(a) && std::isfinite(b)) {
    return fail("float overflow in '**'");
  }
  return make_float(result);
}

std::optional<bool> Evaluator::compare(CompareOp op, const Value& left, const Value& right) {
  switch (op) {
  case CompareOp::is:
  case CompareOp::is_not: {
    const auto singleton = [](const Value& v) {
      return std::holds_alternative<std::monostate>(v.data) || std::holds_alternative<bool>(v.data);
    };
    if (!singleton(left) && !singleton(right)) {
      return fail("'is' is only supported with None, True or False");
    }
    bool same = left.data.index() == right.data.index();
    if (same && std::holds_alternative<bool>(left.data)) {
      same = std::get<bool>(left.data) == std::get<bool>(right.data);
    }
    return op == CompareOp::is ? same : !same;
  }
  case CompareOp::in:
  case CompareOp::not_in: {
    const auto found = contains_value(right, left);
    if (!found) {
      return std::nullopt;
    }
    return op == CompareOp::in ? *found : !*found;
  }
  case CompareOp::eq:
  case CompareOp::ne: {
    const auto equal = equals(left, right);
    if (!equal) {
      return std::nullopt;
    }
    return op == CompareOp::eq ? *equal : !*equal;
  }
  default:
    return order(op, left, right);
  }
}

std::optional<bool> Evaluator::contains_value(const Value& container, const Value& item) {
  if (const auto* sequence = std::get_if<Sequence>(&container.data)) {
    for (const Value& element : sequence->items) {
      const auto equal = equals(item, element);
      if (!equal) {
        return std::nullopt;
      }
      if (*equal) {
        return true;
      }
    }
    return false;
  }
  if (const auto* text = std::get_if<std::string>(&container.data)) {
    const auto* needle = std::get_if<std::string>(&item.data);
    if (!needle) {
      return fail(
          fmt::format("'in <string>' requires string as left operand, not '{}'", type_name(item)));
    }
    return text->find(*needle) != std::string::npos;
  }
  if (const auto* tensor = std::get_if<TensorRef>(&container.data)) {
    return fail(fmt::format("'in' on tensor '{}' is not supported", tensor->name));
  }
  return fail(fmt::format("argument of type '{}' is not iterable", type_name(container)));
}

std::optional<bool> Evaluator::equals(const Value& left, const Value& right) {
  const auto a = resolve(left);
  if (!a) {
    return std::nullopt;
  }
  const auto b = resolve(right);
  if (!b) {
    return std::nullopt;
  }
  for (const Value* v : {&*a, &*b}) {
    if (const auto* tensor = std::get_if<TensorRef>(&v->data)) {
      return fail(fmt::format("comparing tensor '{}' elementwise is not supported", tensor->name));
    }
  }
  const auto x = as_number(*a);
  const auto y = as_number(*b);
  if (x && y) {
    if (!x->is_float && !y->is_float) {
      return x->integer == y->integer;
    }
    return x->as_long_double() == y->as_long_double();
  }
  if (a->data.index() != b->data.index()) {
    return false; // different types (numbers aside) are never equal
  }
  if (is_none(*a)) {
    return true;
  }
  if (const auto* s = std::get_if<std::string>(&a->data)) {
    return *s == std::get<std::string>(b->data);
  }
  const auto& p = std::get<Sequence>(a->data);
  const auto& q = std::get<Sequence>(b->data);
  if (p.kind != q.kind || p.items.size() != q.items.size()) {
    return false;
  }
  for (std::size_t i = 0; i < p.items.size(); ++i) {
    const auto equal = equals(p.items[i], q.items[i]);
    if (!equal || !*equal) {
      return equal;
    }
  }
  return true;
}

std::optional<bool> Evaluator::order(CompareOp op, const Value& left, const Value& right) {
  const auto a = resolve(left);
  if (!a) {
    return std::nullopt;
  }
  const auto b = resolve(right);
  if (!b) {
    return std::nullopt;
  }
  const auto x = as_number(*a);
  const auto y = as_number(*b);
  if (x && y) {
    if (!x->is_float && !y->is_float) {
      return apply_order(op, x->integer, y->integer);
    }
    return apply_order(op, x->as_long_double(), y->as_long_double());
  }
  if (const auto* s = std::get_if<std::string>(&a->data)) {
    if (const auto* t = std::get_if<std::string>(&b->data)) {
      // Byte order of UTF-8 is code point order, which is what Python compares.
      return apply_order(op, *s, *t);
    }
  }
  if (const auto* p = std::get_if<Sequence>(&a->data)) {
    if (const auto* q = std::get_if<Sequence>(&b->data); q && q->kind == p->kind) {
      const std::size_t common = std::min(p->items.size(), q->items.size());
      for (std::size_t i = 0; i < common; ++i) {
        const auto equal = equals(p->items[i], q->items[i]);
        if (!equal) {
          return std::nullopt;
        }
        if (!*equal) {
          return order(op, p->items[i], q->items[i]);
        }
      }
      return apply_order(op, p->items.size(), q->items.size());
    }
  }
  return fail(fmt::format("'{}' not supported between instances of '{}' and '{}'", symbol(op),
                          type_name(*a), type_name(*b)));
}

} // namespace fib::constraint_detail
