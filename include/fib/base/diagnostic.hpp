#pragma once
// Diagnostics: how every fib check reports a problem in the data.
//
// A check never throws for bad input: it builds a Diagnostic and hands it to a DiagnosticSink,
// then carries on so that one run reports every problem of a file.

#include <fib/base/enum_names.hpp>

#include <array>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

enum class Severity { note, warning, error };

template <> struct EnumNames<Severity> {
  static constexpr std::array k_table = std::to_array<EnumName<Severity>>({
      {Severity::note, "note"},
      {Severity::warning, "warning"},
      {Severity::error, "error"},
  });
};

// "note", "warning" or "error".
inline std::string_view to_string(Severity severity) {
  return enum_name(severity);
}

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

// Stamps context on diagnostics on their way to `parent`: `file` when the diagnostic has none, and
// `pointer_prefix` in front of its pointer (so a check of a sub-document can report pointers
// relative to that sub-document). The parent must outlive the sink.
class ContextSink final : public DiagnosticSink {
public:
  ContextSink(DiagnosticSink& parent, std::filesystem::path file, std::string pointer_prefix = {});
  void report(Diagnostic diagnostic) override;

private:
  DiagnosticSink& m_parent;
  std::filesystem::path m_file;
  std::string m_pointer_prefix;
};

// How many diagnostics of each kind went through a CountingSink.
struct DiagnosticCounts {
  std::size_t errors = 0;
  std::size_t warnings = 0;
  std::size_t notes = 0;
  // Errors whose code is of the environment exit class (fib could not do its job: I/O, Python,
  // the worker). Counted in `errors` too.
  std::size_t environment_errors = 0;
  // Errors whose code is of the usage exit class (a bad command line). Counted in `errors` too.
  std::size_t usage_errors = 0;

  DiagnosticCounts& operator+=(const DiagnosticCounts& other);
};

// Counts what it forwards to `parent` (by severity, and environment errors apart), so that an entry
// point's caller can tell "findings" from "could not run" without flags in every result struct.
// The parent must outlive the sink.
class CountingSink final : public DiagnosticSink {
public:
  explicit CountingSink(DiagnosticSink& parent) : m_parent(parent) {}
  void report(Diagnostic diagnostic) override;

  const DiagnosticCounts& counts() const { return m_counts; }
  bool has_errors() const { return m_counts.errors > 0; }
  bool has_environment_errors() const { return m_counts.environment_errors > 0; }

private:
  DiagnosticSink& m_parent;
  DiagnosticCounts m_counts;
};

// The counts of a list of diagnostics, as a CountingSink would have counted them.
DiagnosticCounts count_diagnostics(const std::vector<Diagnostic>& diagnostics);

// Appends one reference token to an RFC 6901 pointer, escaping '~' as "~0" and '/' as "~1".
std::string pointer_append(std::string_view pointer, std::string_view token);
std::string pointer_append(std::string_view pointer, std::size_t index);

} // namespace fib
