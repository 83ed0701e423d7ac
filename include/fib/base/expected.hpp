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
