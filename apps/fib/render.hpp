#pragma once
// Rendering diagnostics for people (text) and programs (json).

#include "color.hpp"

#include <fib/base/diagnostic.hpp>
#include <fib/collect/collect.hpp>
#include <fib/stage/stage.hpp>
#include <fib/tag/tags.hpp>
#include <fib/validate/report.hpp>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace fib::app {

enum class OutputFormat { text, json };

// Writes all of `text` to `stream`, embedded NUL bytes included (fputs would stop at the first).
void write_all(std::FILE* stream, std::string_view text);

// `text` and a newline.
void write_line(std::FILE* stream, std::string_view text);

// One line per diagnostic: `FILE:LINE: SEVERITY[CODE] POINTER: MESSAGE`, where `:LINE` is left out
// when unknown and ` POINTER` when it is the whole document; a hint follows on its own line,
// indented, as `  hint: …`. Continuation lines of multi-line messages are indented too. With a
// palette, the location is bold and the severity coloured (the text is otherwise the same).
std::string render_text(const Diagnostic& diagnostic, const Palette& colors = {});

// render_text of `diagnostic` with the palette for `stream` (--color, NO_COLOR), and a newline.
void write_diagnostic(std::FILE* stream, const Diagnostic& diagnostic);

// A stable JSON array: one object per diagnostic with keys file, line, pointer, severity, code,
// message and hint (line is null when unknown, hint "" when none), in report order.
std::string render_json(const std::vector<Diagnostic>& diagnostics);

// One plan line of `fib stage`: `LABEL       definitions/<op_type>/<name>.json  (SOURCE)`, or
// `LABEL       SOURCE` when the input never got a target; LABEL is stage_line_label's, and an
// overwrite that kept curated fields ends with `  kept: /description, tag x:y`.
std::string render_stage_line(const StageEntry& entry, const StageSummary& summary);

// The counts of the summary line of `fib stage` and `fib dump --stage`, in the words of the lines
// (stage_summary_counts): "3 added, 1 unchanged, 0 overwritten, 2 conflicts, …".
std::string render_stage_counts(const StageResult& result);

// What `fib tag` did to a file: `+tag -tag …` then `replaced status:a with status:b` for each
// replaced value of a single-valued namespace (after a "; " when +/- parts precede), `unchanged`
// or `skipped`.
std::string render_tag_change(const TaggedFile& file);

// The per-definition table of `fib collect` (and `fib dump --workloads --stage`): calls, accepted,
// refused (by code), duplicates, selected and written, the file written, and a totals line.
std::string render_collect_report(const CollectReport& report, DryRun dry_run);

} // namespace fib::app
