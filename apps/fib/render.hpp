#pragma once
// Rendering diagnostics for people (text) and programs (json).

#include <fib/diagnostic.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace fib::app {

enum class OutputFormat { text, json };

// One line per diagnostic: `FILE:LINE: SEVERITY[CODE] POINTER: MESSAGE`, where `:LINE` is left out
// when unknown and ` POINTER` when it is the whole document; a hint follows on its own line,
// indented, as `  hint: …`. Continuation lines of multi-line messages are indented too.
std::string render_text(const Diagnostic& diagnostic);

// A stable JSON array: one object per diagnostic with keys file, line, pointer, severity, code,
// message and hint (line is null when unknown, hint "" when none), in report order.
std::string render_json(const std::vector<Diagnostic>& diagnostics);

} // namespace fib::app
