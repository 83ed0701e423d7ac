#pragma once
// fib::Expected<T>: the result of an operation that cannot proceed on failure (reading a file,
// parsing JSON, starting Python). The failure is a Diagnostic, never an exception.
// (Debian 12 ships no tl::expected and C++20 has no std::expected, so this is a minimal stand-in
// with the same spelling; it can be replaced by std::expected under C++23.)

#include <fib/base/diagnostic.hpp>

#include <cstdlib>
#include <utility>
#include <variant>

namespace fib {

// --- Interface ---

// Wraps the error alternative so that Expected<Diagnostic> stays unambiguous.
struct Unexpected {
  Diagnostic error;
};

inline Unexpected unexpected(Diagnostic diagnostic) {
  return Unexpected{std::move(diagnostic)};
}

template <class T> class [[nodiscard]] Expected {
public:
  Expected(T value) : m_state(std::in_place_index<0>, std::move(value)) {}
  Expected(Unexpected failure) : m_state(std::in_place_index<1>, std::move(failure.error)) {}

  bool has_value() const { return m_state.index() == 0; }
  explicit operator bool() const { return has_value(); }

  // Precondition: has_value(). Violations abort.
  T& value() & { return std::get<0>(checked()); }
  const T& value() const& { return std::get<0>(checked()); }
  T&& value() && { return std::get<0>(std::move(checked())); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // Precondition: !has_value().
  const Diagnostic& error() const& { return std::get<1>(m_state); }
  Diagnostic&& error() && { return std::get<1>(std::move(m_state)); }

private:
  std::variant<T, Diagnostic>& checked() {
    if (m_state.index() != 0) {
      std::abort();
    }
    return m_state;
  }
  const std::variant<T, Diagnostic>& checked() const {
    if (m_state.index() != 0) {
      std::abort();
    }
    return m_state;
  }
  std::variant<T, Diagnostic> m_state;
};

} // namespace fib

// Propagation helpers, for functions that themselves return an Expected (or an Unexpected-
// constructible type):
//
//   FIB_TRY(write_report(path));                        // returns the error, if any
//   FIB_TRY_ASSIGN(JsonDocument document, parse_json(text, path));
//
// FIB_TRY evaluates `expression` once and returns its error from the enclosing function when it
// has one. FIB_TRY_ASSIGN does the same and then moves the value into `target` (a declaration or
// an lvalue); it expands to several statements, so it cannot be the body of an unbraced if.
#define FIB_TRY(expression)                                                                        \
  do {                                                                                             \
    auto&& fib_try_result_ = (expression);                                                         \
    if (!fib_try_result_.has_value()) {                                                            \
      return ::fib::unexpected(std::move(fib_try_result_).error());                                \
    }                                                                                              \
  } while (false)

#define FIB_TRY_CONCAT_INNER_(a, b) a##b
#define FIB_TRY_CONCAT_(a, b) FIB_TRY_CONCAT_INNER_(a, b)
#define FIB_TRY_ASSIGN(target, expression)                                                         \
  FIB_TRY_ASSIGN_IMPL_(FIB_TRY_CONCAT_(fib_try_value_, __LINE__), target, expression)
#define FIB_TRY_ASSIGN_IMPL_(temporary, target, expression)                                        \
  auto temporary = (expression);                                                                   \
  if (!temporary.has_value()) {                                                                    \
    return ::fib::unexpected(std::move(temporary).error());                                        \
  }                                                                                                \
  target = std::move(temporary).value()
