#include "fib/base/diagnostic.hpp"

#include <fib/base/codes.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fib {

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

ContextSink::ContextSink(DiagnosticSink& parent, std::filesystem::path file,
                         std::string pointer_prefix)
    : m_parent(parent), m_file(std::move(file)), m_pointer_prefix(std::move(pointer_prefix)) {}

void ContextSink::report(Diagnostic diagnostic) {
  if (diagnostic.file.empty()) {
    diagnostic.file = m_file;
  }
  if (!m_pointer_prefix.empty()) {
    diagnostic.pointer = m_pointer_prefix + diagnostic.pointer;
  }
  m_parent.report(std::move(diagnostic));
}

DiagnosticCounts& DiagnosticCounts::operator+=(const DiagnosticCounts& other) {
  errors += other.errors;
  warnings += other.warnings;
  notes += other.notes;
  environment_errors += other.environment_errors;
  usage_errors += other.usage_errors;
  return *this;
}

namespace {

void count_into(DiagnosticCounts& counts, const Diagnostic& diagnostic) {
  switch (diagnostic.severity) {
  case Severity::error:
    ++counts.errors;
    switch (exit_class_of(diagnostic)) {
    case ExitClass::environment:
      ++counts.environment_errors;
      break;
    case ExitClass::usage:
      ++counts.usage_errors;
      break;
    case ExitClass::finding:
      break;
    }
    break;
  case Severity::warning:
    ++counts.warnings;
    break;
  case Severity::note:
    ++counts.notes;
    break;
  }
}

} // namespace

void CountingSink::report(Diagnostic diagnostic) {
  count_into(m_counts, diagnostic);
  m_parent.report(std::move(diagnostic));
}

DiagnosticCounts count_diagnostics(const std::vector<Diagnostic>& diagnostics) {
  DiagnosticCounts counts;
  for (const Diagnostic& diagnostic : diagnostics) {
    count_into(counts, diagnostic);
  }
  return counts;
}

std::string pointer_append(std::string_view pointer, std::string_view token) {
  std::string out;
  out.reserve(pointer.size() + token.size() + 1); // one allocation unless the token is escaped
  out += pointer;
  out += '/';
  std::size_t plain = 0; // the start of the run not yet copied
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' || token[i] == '/') {
      out += token.substr(plain, i - plain);
      out += token[i] == '~' ? "~0" : "~1";
      plain = i + 1;
    }
  }
  out += token.substr(plain);
  return out;
}

std::string pointer_append(std::string_view pointer, std::size_t index) {
  return pointer_append(pointer, std::to_string(index));
}

} // namespace fib
