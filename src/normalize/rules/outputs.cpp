// The output rules: A3b-3 (outputs that share an input's name) and N21 (output dtype sanity).

#include "normalize/context.hpp"
#include "normalize/rules/rules.hpp"
#include "util/strings.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fib {
namespace {

using detail::contains;
using detail::string_member;

// --- A3b-3 ---

// Outputs that share an input's name, how many outputs there are, and how to answer the question.
struct InPlaceOutputs {
  std::vector<std::string> overlap;
  std::size_t total = 0;
  std::string names; // the overlap, comma-separated
  std::string hint;  // the rename_outputs decision for the first of them
};

// A question when the reference's return arity cannot be read.
void ask_without_arity(NormalizeContext& context, const InPlaceOutputs& shared,
                       const PythonFunction* function) {
  const auto& overlap = shared.overlap;
  context.question(codes::k_normalize_a3b_3, pointer_append("/outputs", overlap.front()),
                   fmt::format("output{} {} share{} an input's name, and {}",
                               overlap.size() == 1 ? "" : "s", shared.names,
                               overlap.size() == 1 ? "s" : "",
                               function == nullptr
                                   ? "there is no parsable reference to read the return arity from"
                                   : "the reference's return arity cannot be read statically"),
                   shared.hint + fmt::format(", or \"drop_outputs\": [\"{}\"]", overlap.front()));
}

void ask_with_arity(NormalizeContext& context, const InPlaceOutputs& shared, std::size_t returned) {
  const auto& overlap = shared.overlap;
  context.question(codes::k_normalize_a3b_3, pointer_append("/outputs", overlap.front()),
                   fmt::format("output{} {} share{} an input's name; the reference returns {} "
                               "value{} for {} outputs",
                               overlap.size() == 1 ? "" : "s", shared.names,
                               overlap.size() == 1 ? "s" : "", returned, returned == 1 ? "" : "s",
                               shared.total),
                   shared.hint);
}

// The reference returns every output: the shared ones get a name of their own.
void rename_in_place_outputs(NormalizeContext& context, const InPlaceOutputs& shared) {
  for (const auto& output : shared.overlap) {
    std::string renamed = output + "_out";
    for (int n = 2; context.inputs().contains(renamed) || context.outputs().contains(renamed);
         ++n) {
      renamed = fmt::format("{}_out{}", output, n);
    }
    detail::rename_key(context.outputs(), output, renamed);
    context.add(codes::k_normalize_a3b_3, FindingKind::applied, pointer_append("/outputs", renamed),
                fmt::format("output '{}' shares an input's name; the reference returns all {} "
                            "outputs, so it is renamed '{}'",
                            output, shared.total, renamed));
  }
}

// The reference does not return the shared outputs: they are updated in place.
void drop_in_place_outputs(NormalizeContext& context, const InPlaceOutputs& shared,
                           std::size_t returned) {
  for (const auto& output : shared.overlap) {
    context.outputs().erase(output);
    context.add(codes::k_normalize_a3b_3, FindingKind::applied, pointer_append("/outputs", output),
                fmt::format("output '{}' shares an input's name and the reference does not return "
                            "it ({} value{} for {} outputs): dropped (the input is updated in "
                            "place)",
                            output, returned, returned == 1 ? "" : "s", shared.total));
  }
}

} // namespace

void apply_a3b_3_in_place_outputs(NormalizeContext& context) {
  InPlaceOutputs shared;
  for (auto& [output, spec] : context.outputs().items()) {
    if (context.inputs().contains(output)) {
      shared.overlap.push_back(output);
    }
  }
  if (shared.overlap.empty()) {
    return;
  }
  shared.total = context.outputs().size();
  shared.names = fmt::format("{}", fmt::join(shared.overlap, ", "));
  shared.hint = context.decision_hint(
      "rename_outputs",
      fmt::format("{{\"{}\": \"{}_out\"}}", shared.overlap.front(), shared.overlap.front()));
  const PythonFunction* function = context.callee();
  const int arity = function != nullptr && function->return_arity ? *function->return_arity : -1;
  if (arity < 0) {
    ask_without_arity(context, shared, function);
    return;
  }
  const auto returned = static_cast<std::size_t>(arity);
  if (!context.enabled("A3b-3") ||
      (returned != shared.total && returned + shared.overlap.size() != shared.total)) {
    ask_with_arity(context, shared, returned);
    return;
  }
  if (returned == shared.total) {
    rename_in_place_outputs(context, shared);
    return;
  }
  drop_in_place_outputs(context, shared, returned);
}

// --- N21 ---

void apply_n21_output_dtype_sanity(NormalizeContext& context) {
  for (auto& [output, spec] : context.outputs().items()) {
    const std::string description = detail::ascii_lower(string_member(spec, "description"));
    const std::string dtype = string_member(spec, "dtype");
    const bool quantized = (contains(description, "quantized") || contains(description, "fp8") ||
                            contains(description, "fp4") || contains(description, "e4m3")) &&
                           !contains(description, "dequant") && !contains(description, "scale");
    if (!quantized || (dtype != "bfloat16" && dtype != "float16" && dtype != "float32")) {
      continue;
    }
    context.question(
        codes::k_normalize_n21, pointer_append(pointer_append("/outputs", output), "dtype"),
        fmt::format("output '{}' is described as quantized but declared {} (the dumper "
                    "infers output dtypes from the inputs)",
                    output, dtype),
        context.decision_hint("output_dtypes",
                              fmt::format("{{\"{}\": \"float8_e4m3fn\"}}", output)));
  }
}

} // namespace fib
