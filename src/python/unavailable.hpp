#pragma once
// The `python.unavailable` diagnostic of the embedded interpreter, for runtime.cpp (the
// interpreter could not start) and lazy_runtime.cpp (its module could not be loaded). Private to
// src/python.

#include <fib/base/codes.hpp>
#include <fib/base/diagnostic.hpp>

#include <string>
#include <utility>

namespace fib::python::detail {

// `message` says what failed; `hint`, when not empty, what to do about it.
inline Diagnostic unavailable(std::string message, std::string hint = {}) {
  Diagnostic d = make_diagnostic(codes::k_python_unavailable, std::move(message));
  d.hint = std::move(hint);
  return d;
}

} // namespace fib::python::detail
