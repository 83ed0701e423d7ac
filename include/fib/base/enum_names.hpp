#pragma once
// EnumNames<E>: one table of value ↔ name per enum, instead of a hand-written switch for each
// direction. An enum opts in by specializing EnumNames next to its declaration:
//
//   enum class Color { red, green };
//   template <> struct EnumNames<Color> {
//     static constexpr std::array k_table = std::to_array<EnumName<Color>>({
//         {Color::red, "red"}, {Color::green, "green"}});
//   };
//
// The table is the single source of the spelling: to_string-style functions, parsers, CLI choice
// lists and docs all read it.

#include <optional>
#include <string_view>

namespace fib {

// --- Interface ---

template <class E> struct EnumName {
  E value;
  std::string_view name;
};

// Primary template left undefined: using enum_name on an enum without a table does not compile.
template <class E> struct EnumNames;

// The name of `value`; "" when the table lacks it (a value added to the enum but not to its
// table, which the enum's unit test catches).
template <class E> constexpr std::string_view enum_name(E value) {
  for (const EnumName<E>& entry : EnumNames<E>::k_table) {
    if (entry.value == value) {
      return entry.name;
    }
  }
  return {};
}

// Exact, case-sensitive lookup of `name`; nullopt when no entry has it.
template <class E> constexpr std::optional<E> parse_enum(std::string_view name) {
  for (const EnumName<E>& entry : EnumNames<E>::k_table) {
    if (entry.name == name) {
      return entry.value;
    }
  }
  return std::nullopt;
}

} // namespace fib
