// The rules about what is not a tensor's dtype or shape: N17 (semantic scalars), N18 (extras), N19
// (names).

#include "normalize/context.hpp"
#include "normalize/rules/rules.hpp"
#include "util/strings.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

namespace fib {
namespace {

using detail::contains;
using detail::string_member;

// A scalar input named or described like a boolean flag, declared int32.
bool is_flag_like(const std::string& input, const Json& spec) {
  const std::string description = detail::ascii_lower(string_member(spec, "description"));
  return string_member(spec, "dtype") == "int32" &&
         (input.starts_with("return_") || input.starts_with("is_") || input.starts_with("use_") ||
          input.starts_with("enable_") || input.starts_with("do_") || input == "interleave" ||
          contains(description, "bool") || contains(description, "whether") ||
          contains(description, "if true"));
}

// --strip-extras: removes init, check, and optional/param on inputs and outputs.
void strip_extras(NormalizeContext& context) {
  Json& doc = context.doc;
  std::vector<std::string> removed;
  for (const std::string_view key : {"init", "check"}) {
    if (doc.contains(key)) {
      doc.erase(std::string(key));
      removed.emplace_back(key);
    }
  }
  for (const std::string_view section : {"inputs", "outputs"}) {
    for (auto& [tensor, spec] : doc[std::string(section)].items()) {
      for (const std::string_view key : {"optional", "param"}) {
        if (spec.is_object() && spec.contains(key)) {
          spec.erase(std::string(key));
          removed.push_back(fmt::format("{}.{}.{}", section, tensor, key));
        }
      }
    }
  }
  if (!removed.empty()) {
    context.applied(codes::k_normalize_n18, "",
                    fmt::format("stripped extras (--strip-extras): {}", fmt::join(removed, ", ")));
  }
}

} // namespace

// --- N17 ---

void apply_n17_semantic_scalars(NormalizeContext& context) {
  if (!context.enabled("N17")) {
    return;
  }
  std::set<std::string> axes;
  if (context.has_axes()) {
    for (auto& [axis, spec] : context.doc["axes"].items()) {
      axes.insert(axis);
    }
  }
  for (auto& [input, spec] : context.inputs().items()) {
    if (!detail::is_scalar(spec)) {
      continue;
    }
    const std::string pointer = pointer_append("/inputs", input);
    if (is_flag_like(input, spec)) {
      context.add(codes::k_normalize_n17, FindingKind::advice, pointer,
                  fmt::format("scalar '{}' is a flag declared int32: flashinfer-bench draws a "
                              "random int for it; pin its value in the workloads",
                              input));
    } else if (axes.contains(input)) {
      context.add(codes::k_normalize_n17, FindingKind::advice, pointer,
                  fmt::format("scalar '{}' shares its name with an axis: flashinfer-bench draws a "
                              "random value for it; pin it in the workloads to the axis value",
                              input));
    }
  }
}

// --- N18 ---

void apply_n18_extras(NormalizeContext& context) {
  if (context.options.strip_extras == StripExtras::yes) {
    strip_extras(context);
    return;
  }
  if (contains(string_member(context.doc, "check"), "flashinfer")) {
    context.add(codes::k_normalize_n18, FindingKind::advice, "/check",
                "kept `check`; it imports flashinfer, so it is not standalone");
  }
}

// --- N19 ---

void apply_n19_names(NormalizeContext& context) {
  const std::string current = context.name();
  if (context.decisions != nullptr && context.decisions->name) {
    return;
  }
  if (std::any_of(current.begin(), current.end(),
                  [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; })) {
    context.question(codes::k_normalize_n19, "/name",
                     fmt::format("name '{}' has upper-case letters; it is FlashInfer's routing "
                                 "key, so it is kept unless you rename it",
                                 current),
                     context.decision_hint("name", "\"<new name>\""));
  }
}

} // namespace fib
