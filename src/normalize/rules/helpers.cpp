// The rules about names the reference reads but never binds: N22 (inlined from FlashInfer's trace
// templates) and N3 (what is left, asked with the reason).

#include "normalize/context.hpp"
#include "normalize/rules/rules.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>
#include <string_view>
#include <utility>

namespace fib {
namespace {

// The names the reference reads and binds nowhere, less those N1 imported.
std::vector<std::string> unresolved_names(const NormalizeContext& context) {
  std::vector<std::string> names;
  for (const auto& name : context.structure->unresolved_names) {
    if (!context.resolved_by_imports.contains(name) &&
        !context.resolved_by_helpers.contains(name)) {
      names.push_back(name);
    }
  }
  return names;
}

bool has_analysed_reference(const NormalizeContext& context) {
  return context.structure && !context.structure->syntax_error;
}

// "2 helpers from flashinfer/trace/templates/rope.py: _rope_freqs, _rotate", or with several
// files "3 helpers from a.py (_x, _y) and b.py (_z)".
std::string inlined_summary(const HelperResolution& resolution) {
  std::size_t count = 0;
  std::vector<std::string> parts;
  for (const auto& source : resolution.sources) {
    count += source.names.size();
    parts.push_back(fmt::format("{} ({})", source.file, fmt::join(source.names, ", ")));
  }
  std::string text;
  if (resolution.sources.size() == 1) {
    text = fmt::format("inlined {} helper{} from {}: {}", count, count == 1 ? "" : "s",
                       resolution.sources.front().file,
                       fmt::join(resolution.sources.front().names, ", "));
  } else {
    text = fmt::format("inlined {} helpers from {}", count, fmt::join(parts, " and "));
  }
  if (!resolution.imports.empty()) {
    text +=
        fmt::format(", with the import{} they need: {}", resolution.imports.size() == 1 ? "" : "s",
                    fmt::join(resolution.imports, "; "));
  }
  return text;
}

// "A, B: reason one; C: reason two": the unresolved names grouped by N22's reason, in name order.
// Linear in the names (a reference may name thousands).
std::string grouped_reasons(const std::vector<std::string>& names,
                            const std::vector<UnresolvedHelper>& reasons) {
  std::map<std::string_view, std::string_view> reason_of;
  for (const auto& r : reasons) {
    reason_of.emplace(r.name, r.reason);
  }
  std::vector<std::pair<std::string_view, std::vector<std::string_view>>> groups;
  std::map<std::string_view, std::size_t> group_of;
  for (const auto& name : names) {
    const auto it = reason_of.find(name);
    const std::string_view reason = it != reason_of.end() ? it->second : "it was not looked up";
    const auto [group, added] = group_of.emplace(reason, groups.size());
    if (added) {
      groups.emplace_back(reason, std::vector<std::string_view>{});
    }
    groups[group->second].second.push_back(name);
  }
  std::vector<std::string> parts;
  for (const auto& [reason, group] : groups) {
    parts.push_back(fmt::format("{}: {}", fmt::join(group, ", "), reason));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

// Whether no FlashInfer source was found at all (the hint then says how to name one).
bool source_was_found(const NormalizeContext& context) {
  return !context.helper_package.empty();
}

} // namespace

// --- N22 ---

void apply_n22_flashinfer_helpers(NormalizeContext& context) {
  if (!has_analysed_reference(context)) {
    return;
  }
  const std::vector<std::string> names = unresolved_names(context);
  if (names.empty()) {
    return;
  }
  const std::string reference = context.doc["reference"].get<std::string>();
  const HelperQuery query{reference, names, context.options.flashinfer_source};
  auto resolution = context.python.resolve_helpers(query);
  if (!resolution) {
    // The interpreter failed on the lookup: an environment problem, reported as it is; N3 asks.
    Diagnostic d = std::move(resolution.error());
    d.file = context.input.file;
    d.pointer = "/reference";
    context.findings.push_back({std::move(d), FindingKind::advice});
    for (const auto& name : names) {
      context.unresolved_helpers.push_back(
          {name, "the lookup in FlashInfer's source failed (see the error above)"});
    }
    return;
  }
  context.helper_package = resolution->package_directory;
  context.unresolved_helpers = resolution->missing;
  if (!resolution->reference) {
    return;
  }
  std::set<std::string_view> missing;
  for (const auto& m : resolution->missing) {
    missing.insert(m.name);
  }
  for (const auto& name : names) {
    if (!missing.contains(name)) {
      context.resolved_by_helpers.insert(name);
    }
  }
  context.doc["reference"] = *resolution->reference;
  context.line_shift += resolution->inserted_lines;
  context.applied(codes::k_normalize_n22, "/reference", inlined_summary(*resolution));
}

// --- N3 ---

void apply_n3_unresolved_names(NormalizeContext& context) {
  if (!has_analysed_reference(context)) {
    return;
  }
  const std::vector<std::string> names = unresolved_names(context);
  if (names.empty()) {
    return;
  }
  const std::string hint =
      source_was_found(context)
          ? std::string("paste the missing helpers into the reference by hand")
          : std::string("paste the missing helpers into the reference, or name FlashInfer's "
                        "source: --flashinfer-src DIR or FIB_FLASHINFER_SRC=DIR (DIR holds the "
                        "flashinfer package directory)");
  context.question(codes::k_normalize_n3, "/reference",
                   fmt::format("the reference reads name{} it never defines: {}; it fails with "
                               "NameError when run. Not inlined from FlashInfer's trace "
                               "templates: {}",
                               names.size() == 1 ? "" : "s", fmt::join(names, ", "),
                               grouped_reasons(names, context.unresolved_helpers)),
                   hint);
}

} // namespace fib
