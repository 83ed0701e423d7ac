#pragma once
// Diagnostics: how every fib check reports a problem in the data.
//
// A check never throws for bad input: it builds a Diagnostic and hands it to a DiagnosticSink,
// then carries on so that one run reports every problem of a file.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

enum class Severity { note, warning, error };

// "note", "warning" or "error".
std::string_view to_string(Severity severity);

struct Diagnostic {
  Severity severity = Severity::error;
  std::string code;           // stable, from the codes table (fib/codes.hpp)
  std::string message;        // subject first; old-tool checks keep the old wording
  std::filesystem::path file; // empty when the problem is not about one file
  std::string pointer;        // RFC 6901 pointer into the document; "" is the whole document
  int line = 0;               // 1-based line of `pointer` in `file`; 0 when unknown
  std::string hint;           // optional next step for the user
};

// Builds a diagnostic whose severity is the default severity of `code` in the codes table.
// Aborts (FIB_ASSERT) when `code` is not in the table: codes are a closed set.
Diagnostic make_diagnostic(std::string_view code, std::string message);

// Receives diagnostics. Implementations decide what to keep; checks never stop early because of
// one.
class DiagnosticSink {
public:
  virtual ~DiagnosticSink() = default;
  virtual void report(Diagnostic diagnostic) = 0;
};

// Collects every diagnostic in arrival order and counts them by severity.
class DiagnosticList final : public DiagnosticSink {
public:
  void report(Diagnostic diagnostic) override;

  const std::vector<Diagnostic>& items() const { return m_items; }
  std::size_t count(Severity severity) const;
  bool has_errors() const { return count(Severity::error) > 0; }
  // True when some diagnostic carries `code`.
  bool contains(std::string_view code) const;

private:
  std::vector<Diagnostic> m_items;
};

// Appends one reference token to an RFC 6901 pointer, escaping '~' as "~0" and '/' as "~1".
std::string pointer_append(std::string_view pointer, std::string_view token);
std::string pointer_append(std::string_view pointer, std::size_t index);

} // namespace fib
