// What the lines and the summary of a staging run say: one word per entry, counted.

#include "fib/stage/stage.hpp"

#include <array>
#include <map>

namespace fib {

std::string_view stage_line_label(const StageEntry& entry, const StageSummary& summary) {
  const bool planned_write =
      entry.action == StageAction::added || entry.action == StageAction::overwritten;
  if (!planned_write || entry.written) {
    return to_string(entry.action);
  }
  if (summary.dry_run == DryRun::yes) {
    return entry.action == StageAction::added ? "would add" : "would overwrite";
  }
  return summary.blocked_by_conflicts ? "not written" : to_string(entry.action);
}

namespace {

// Always in the summary, even at zero.
constexpr std::array<std::string_view, 6> k_always_counted = {
    "added", "unchanged", "overwritten", "conflict", "rejected", "duplicate"};
// In the summary when not zero, in this order (after them, any other label, by name).
constexpr std::array<std::string_view, 6> k_counted_when_present = {
    "skipped", "excluded", "failed", "would add", "would overwrite", "not written"};

} // namespace

std::vector<std::pair<std::string_view, std::size_t>>
stage_summary_counts(const StageResult& result) {
  std::map<std::string_view, std::size_t> by_label;
  for (const StageEntry& entry : result.entries) {
    ++by_label[stage_line_label(entry, result.summary)];
  }
  std::vector<std::pair<std::string_view, std::size_t>> counts;
  for (const std::string_view label : k_always_counted) {
    counts.emplace_back(label, by_label[label]);
    by_label.erase(label);
  }
  for (const std::string_view label : k_counted_when_present) {
    if (const auto it = by_label.find(label); it != by_label.end()) {
      counts.emplace_back(label, it->second);
      by_label.erase(it);
    }
  }
  for (const auto& [label, count] : by_label) {
    counts.emplace_back(label, count);
  }
  return counts;
}

} // namespace fib
