// The definition category: the definition loads (schema and the Python-exact checks), has its
// descriptions, passes fib's lint and plausibility checks, and its reference builds in the worker.

#include "validate/dataset_job.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <utility>

namespace fib::dataset_checks {
namespace {

using ConstAxis = std::pair<std::string, std::int64_t>;

// The first of `names` that is a const axis of `consts`, with its value.
std::optional<ConstAxis> find_const(const std::map<std::string, std::int64_t>& consts,
                                    std::initializer_list<std::string_view> names) {
  for (const std::string_view n : names) {
    if (auto it = consts.find(std::string(n)); it != consts.end()) {
      return *it;
    }
  }
  return std::nullopt;
}

// Query heads must be a whole number of groups per KV head.
void check_head_ratio(const Definition& def, CheckResult& r) {
  const auto consts = def.const_axes();
  const auto q = find_const(consts, {"num_qo_heads", "num_q_heads", "num_attention_heads"});
  const auto kv = find_const(consts, {"num_kv_heads", "num_k_heads", "num_key_value_heads"});
  if (q && kv && kv->second > 0 && q->second % kv->second != 0) {
    r.add(codes::k_dataset_definition_head_ratio,
          fib_message(fmt::format("{} = {} is not a multiple of {} = {}: query heads must be a "
                                  "whole number of groups per KV head (were the axes read from "
                                  "the wrong tensor layout?)",
                                  q->first, q->second, kv->first, kv->second)));
  }
}

// The naming convention of FlashInfer's kernel families: the tokens a name must carry for its
// const axes (e.g. gqa_paged_…_h32_kv8_d128_ps1).
struct NameToken {
  std::string_view prefix;
  std::initializer_list<std::string_view> axes;
};
struct NamingConvention {
  std::string_view name_prefix;
  std::initializer_list<NameToken> tokens;
};

const NamingConvention* convention_of(const std::string& name) {
  static const NamingConvention conventions[] = {
      {"gqa_paged_",
       {{"h", {"num_qo_heads"}},
        {"kv", {"num_kv_heads"}},
        {"d", {"head_dim"}},
        {"ps", {"page_size"}}}},
      {"gqa_ragged_", {{"h", {"num_qo_heads"}}, {"kv", {"num_kv_heads"}}, {"d", {"head_dim"}}}},
      {"mla_paged_",
       {{"h", {"num_qo_heads"}},
        {"ckv", {"head_dim_ckv"}},
        {"kpe", {"head_dim_kpe"}},
        {"ps", {"page_size"}}}},
      {"rmsnorm_", {{"h", {"hidden_size"}}}},
      {"fused_add_rmsnorm_", {{"h", {"hidden_size"}}}},
  };
  for (const NamingConvention& c : conventions) {
    if (name.starts_with(c.name_prefix)) {
      return &c;
    }
  }
  return nullptr;
}

void check_name_convention(const Definition& def, CheckResult& r) {
  const NamingConvention* convention = convention_of(def.name);
  if (convention == nullptr) {
    return;
  }
  std::vector<std::string> parts;
  for (std::size_t start = 0; start <= def.name.size();) {
    const std::size_t end = std::min(def.name.find('_', start), def.name.size());
    parts.push_back(def.name.substr(start, end - start));
    start = end + 1;
  }
  const auto consts = def.const_axes();
  for (const NameToken& token : convention->tokens) {
    const auto axis = find_const(consts, token.axes);
    if (!axis) {
      continue;
    }
    const std::string expected = fmt::format("{}{}", token.prefix, axis->second);
    if (std::find(parts.begin(), parts.end(), expected) == parts.end()) {
      r.add(codes::k_dataset_definition_name_convention,
            fib_message(fmt::format("name '{}' does not carry '{}' for {} = {}, as the "
                                    "{}* naming convention expects",
                                    def.name, expected, axis->first, axis->second,
                                    convention->name_prefix)));
    }
  }
}

// The old tool's description warnings first, then fib's errors and lint findings.
void check_lint(const DefinitionJob& job, CheckResult& r) {
  const LoadedDefinition& d = *job.definition;
  DiagnosticList lint;
  lint_definition(d.definition, *d.document, lint);
  for (const Diagnostic& diag : lint.items()) {
    if (diag.code == codes::k_description_missing) {
      r.add(level_of(diag.severity), diag.code, diag.message).where.pointer = diag.pointer;
    }
  }
  for (const Diagnostic& error : job.python_errors) {
    r.add(level_of(error.severity), error.code, fib_message(error.message)).where.pointer =
        error.pointer;
  }
  for (const Diagnostic& diag : lint.items()) {
    if (diag.code == codes::k_axis_unbound || diag.code == codes::k_axis_unused ||
        diag.code == codes::k_tag_format) {
      r.add(level_of(diag.severity), diag.code, fib_message(diag.message)).where.pointer =
          diag.pointer;
    } else if (diag.code == codes::k_tag_conflict) {
      // The report has no pointer column: the message names the tag's place itself.
      r.add(level_of(diag.severity), diag.code,
            fib_message(fmt::format("{}: {}", diag.pointer, diag.message)))
          .where.pointer = diag.pointer;
    }
  }
}

} // namespace

namespace {

std::optional<CheckResult> definition_messages(const DefinitionJob& job,
                                               const CategoryContext& context) {
  CheckResult r;
  const LoadedDefinition& d = *job.definition;
  if (d.entry->duplicate_error) {
    r.add(codes::k_dataset_definition_duplicate,
          fmt::format("parse error: {}", *d.entry->duplicate_error));
    return r;
  }
  if (!d.loaded()) {
    const Diagnostic& first = d.errors.front();
    r.add(CheckLevel::error, first.code,
          fmt::format("parse error: {}", validation_error_text("Definition", d.errors)))
        .where = MessageLocation{
        {}, first.pointer, first.line > 0 ? static_cast<std::uint32_t>(first.line) : 0};
    return r;
  }
  check_lint(job, r);
  check_head_ratio(d.definition, r);
  check_name_convention(d.definition, r);
  if (job.reference_messages) {
    for (const CheckMessage& message : *job.reference_messages) {
      r.add(message);
    }
  } else if (context.gpu == GpuChecks::enabled) {
    r.add(codes::k_dataset_definition_reference_not_run,
          fib_message("reference build not run: the reference worker is not available (fib built "
                      "without torch, or fib-worker failed to start; use --disable-gpu to "
                      "silence this)"));
  }
  return r;
}

} // namespace

std::optional<CheckResult> check_definition(const DefinitionJob& job,
                                            const CategoryContext& context) {
  std::optional<CheckResult> r = definition_messages(job, context);
  locate_unplaced(*r, job.definition->entry->file, context.root);
  return r;
}

void run_reference_phase(DefinitionJob& job, ReferenceChecks checks, ReferenceRunner& runner,
                         bool requested, bool& unavailable_reported, DiagnosticSink& environment) {
  if (job.definition == nullptr || !job.definition->loaded()) {
    return; // the old tool builds only definitions that loaded
  }
  std::vector<CheckMessage> messages;
  bool unavailable = false;
  for (const Diagnostic& d : run_reference_checks(job.definition->definition, checks, runner,
                                                  init_source(*job.definition))) {
    if (is_worker_unusable(d)) {
      unavailable = true;
      // Asked for: an error. By default the build check is the old tool's and a missing worker
      // is only the info line; a missing sandbox is still said once, as a warning.
      if (!unavailable_reported && (requested || d.code == codes::k_sandbox_unavailable)) {
        Diagnostic said = d;
        if (!requested) {
          said.severity = Severity::warning;
        }
        environment.report(said);
        unavailable_reported = true;
      }
      continue;
    }
    const bool old_tool_message =
        d.code == codes::k_reference_build_failed ||
        (d.code == codes::k_reference_ok && d.message == "reference build: ok");
    // The old tool's own messages as it writes them; fib's with its mark.
    messages.push_back(CheckMessage{level_of(d.severity),
                                    old_tool_message ? d.message : fib_message(d.message),
                                    table_code(d.code), MessageLocation{{}, d.pointer, 0}});
  }
  if (!unavailable) {
    job.reference_messages = std::move(messages);
  }
}

} // namespace fib::dataset_checks
