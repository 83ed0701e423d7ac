#include "fib/base/diagnostic.hpp"

#include <fib/base/codes.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fib {

std::string_view to_string(Severity severity) {
  switch (severity) {
  case Severity::note:
    return "note";
  case Severity::warning:
    return "warning";
  case Severity::error:
    return "error";
  }
  return "error";
}

Diagnostic make_diagnostic(std::string_view code, std::string message) {
  const CodeInfo* info = find_code(code);
  if (info == nullptr) {
    std::fprintf(stderr, "fib: internal error: unknown diagnostic code '%.*s'\n",
                 static_cast<int>(code.size()), code.data());
    std::abort();
  }
  Diagnostic diagnostic;
  diagnostic.severity = info->severity;
  diagnostic.code = std::string(code);
  diagnostic.message = std::move(message);
  return diagnostic;
}

void DiagnosticList::report(Diagnostic diagnostic) {
  m_items.push_back(std::move(diagnostic));
}

std::size_t DiagnosticList::count(Severity severity) const {
  return static_cast<std::size_t>(std::count_if(
      m_items.begin(), m_items.end(), [&](const Diagnostic& d) { return d.severity == severity; }));
}

bool DiagnosticList::contains(std::string_view code) const {
  return std::any_of(m_items.begin(), m_items.end(),
                     [&](const Diagnostic& d) { return d.code == code; });
}

std::string pointer_append(std::string_view pointer, std::string_view token) {
  std::string out(pointer);
  out.reserve(pointer.size() + token.size() + 1);
  out += '/';
  for (const char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string pointer_append(std::string_view pointer, std::size_t index) {
  return pointer_append(pointer, std::to_string(index));
}

} // namespace fib
