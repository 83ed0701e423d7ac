#pragma once
// The binary encoding of one definition's report and of environment diagnostics: how the worker
// processes of dataset validation hand their results to the parent, and how the result cache
// stores a definition's report. Private to src/validate.

#include <fib/base/diagnostic.hpp>
#include <fib/validate/report.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib::detail {
class ByteReader;
class ByteWriter;
} // namespace fib::detail

namespace fib::dataset_checks {

// --- Interface ---

// Appends `report` to `out`. Codes are written as text and read back as the codes table's own
// static text (a code this build does not know reads back as "").
void encode_definition_report(const DefinitionReport& report, detail::ByteWriter& out);
// Reads one report written by encode_definition_report; nullopt (and `in` failed) when the bytes
// are not one: a level, status or category out of range, or the input too short.
std::optional<DefinitionReport> decode_definition_report(detail::ByteReader& in);

void encode_diagnostic(const Diagnostic& diagnostic, detail::ByteWriter& out);
std::optional<Diagnostic> decode_diagnostic(detail::ByteReader& in);

} // namespace fib::dataset_checks
