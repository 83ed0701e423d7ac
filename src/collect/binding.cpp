#include "fib/collect/binding.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/safetensors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace fib {
namespace {

struct FamilyRule {
  std::string_view op_type;
  std::string_view input;
  std::array<InputSource, 3> sources; // empty `argument`: unused slot
};

InputSource run(std::string_view argument) {
  return InputSource{CallRole::run, std::string(argument)};
}
InputSource plan(std::string_view argument) {
  return InputSource{CallRole::plan, std::string(argument)};
}

// Where FlashInfer's APIs take the inputs that the family's definitions name differently (the
// names come from FlashInfer's trace templates, which record each input's `param` and
// `tuple_idx`).
const std::vector<FamilyRule>& family_rules() {
  static const std::vector<FamilyRule> rules = {
      {"gqa_paged", "k_cache", {run("paged_kv_cache[0]"), run("kv_cache[0]"), {}}},
      {"gqa_paged", "v_cache", {run("paged_kv_cache[1]"), run("kv_cache[1]"), {}}},
      {"gqa_paged", "kv_indptr", {plan("indptr"), plan("paged_kv_indptr"), plan("kv_indptr")}},
      {"gqa_paged", "kv_indices", {plan("indices"), plan("paged_kv_indices"), plan("kv_indices")}},
      {"gqa_paged",
       "kv_last_page_len",
       {plan("last_page_len"), plan("paged_kv_last_page_len"), plan("kv_last_page_len")}},
      {"rmsnorm", "hidden_states", {run("input"), {}, {}}},
      {"gdn", "state", {run("state"), run("initial_state"), {}}},
      {"gdn", "a", {run("a"), run("g"), {}}},
      {"gdn", "b", {run("b"), run("beta"), {}}},
  };
  return rules;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool contains(const std::vector<InputSource>& sources, const InputSource& source) {
  return std::any_of(sources.begin(), sources.end(), [&](const InputSource& s) {
    return s.role == source.role && s.argument == source.argument;
  });
}

std::vector<SignatureParameter> signature_of(const DumpedCall& call) {
  auto parsed = parse_function_signature(call.function_signature);
  return parsed ? std::move(*parsed) : std::vector<SignatureParameter>{};
}

Diagnostic binding_problem(const DumpedCall& call, std::string_view input, std::string message) {
  (void)call; // refuse() (collect.cpp) names the call and sets the definition's file
  Diagnostic d = make_diagnostic(codes::k_collect_binding_invalid, std::move(message));
  d.pointer = pointer_append("/inputs", input);
  return d;
}

bool is_integer_dtype(DType dtype) {
  return dtype == DType::int64 || dtype == DType::int32 || dtype == DType::int16 ||
         dtype == DType::int8;
}

// Cuts kv_indices to kv_indptr[-1] elements, after checking the indptr.
std::optional<Diagnostic> cut_indices(const DumpedCall& indptr_call, const BoundTensor& indptr,
                                      BoundTensor& indices) {
  const auto dtype = dtype_from_safetensors(indptr.entry.dtype);
  if (!dtype || !is_integer_dtype(*dtype)) {
    return binding_problem(
        indptr_call, indptr.input,
        fmt::format("\"{}\" is {}, not an integer tensor", indptr.input, indptr.entry.dtype));
  }
  if (indptr.entry.element_count() > k_max_indptr_elements) {
    return binding_problem(indptr_call, indptr.input,
                           fmt::format("\"{}\" has {} elements, more than fib reads ({})",
                                       indptr.input, indptr.entry.element_count(),
                                       k_max_indptr_elements));
  }
  auto values = [&]() -> Expected<std::vector<double>> {
    auto file_header = read_safetensors_header(indptr.file);
    if (!file_header) {
      return unexpected(std::move(file_header.error()));
    }
    return read_tensor_values(indptr.file, *file_header, indptr.key, k_max_indptr_elements);
  }();
  if (!values) {
    return binding_problem(
        indptr_call, indptr.input,
        fmt::format("cannot read \"{}\": {}", indptr.input, values.error().message));
  }
  if (values->empty() || (*values)[0] != 0) {
    return binding_problem(indptr_call, indptr.input,
                           fmt::format("\"{}\" does not start at 0", indptr.input));
  }
  for (std::size_t i = 1; i < values->size(); ++i) {
    if ((*values)[i] < (*values)[i - 1]) {
      return binding_problem(indptr_call, indptr.input,
                             fmt::format("\"{}\" decreases at element {} ({} after {})",
                                         indptr.input, i, (*values)[i], (*values)[i - 1]));
    }
  }
  const double last = values->back();
  const auto available = static_cast<double>(indices.entry.element_count());
  if (indices.entry.shape.size() != 1 || last > available) {
    return binding_problem(
        indptr_call, indices.input,
        fmt::format("\"{}\" ends at {}, but \"{}\" holds {} elements{}", indptr.input, last,
                    indices.input, indices.entry.element_count(),
                    indices.entry.shape.size() != 1 ? " and is not one-dimensional" : ""));
  }
  indices.used_elements = static_cast<std::int64_t>(last);
  indices.shape = {static_cast<std::int64_t>(last)};
  return std::nullopt;
}

// A tensor one dimension short of its declared rank gets back the one const axis of value 1.
void restore_unit_dimension(const Definition& definition, const TensorSpec& spec,
                            BoundTensor& tensor) {
  if (!spec.shape || tensor.shape.size() + 1 != spec.shape->size()) {
    return;
  }
  std::optional<std::size_t> unit;
  for (std::size_t i = 0; i < spec.shape->size(); ++i) {
    const Axis* axis = find_entry(definition.axes, (*spec.shape)[i]);
    if (axis != nullptr && axis->kind == AxisKind::const_axis && axis->value == 1) {
      if (unit) {
        return; // two candidates: ambiguous
      }
      unit = i;
    }
  }
  if (unit) {
    tensor.shape.insert(tensor.shape.begin() + static_cast<std::ptrdiff_t>(*unit), 1);
  }
}

} // namespace

const BoundTensor* CallBinding::tensor(std::string_view input) const {
  for (const BoundTensor& t : tensors) {
    if (t.input == input) {
      return &t;
    }
  }
  return nullptr;
}

const BoundValue* CallBinding::value(std::string_view input) const {
  for (const BoundValue& v : values) {
    if (v.input == input) {
      return &v;
    }
  }
  return nullptr;
}

std::vector<InputSource> input_sources(const Definition& definition, std::string_view input) {
  std::vector<InputSource> out;
  const auto add = [&](InputSource source) {
    if (!source.argument.empty() && !contains(out, source)) {
      out.push_back(std::move(source));
    }
  };
  for (const FamilyRule& rule : family_rules()) {
    if (rule.op_type == definition.op_type && rule.input == input) {
      for (const InputSource& source : rule.sources) {
        add(source);
      }
    }
  }
  add(run(input));
  add(plan(input));
  add(run(lower(input)));
  add(plan(lower(input)));
  return out;
}

Expected<CallBinding> bind_call(const Definition& definition, const DumpedCall& run_call,
                                const DumpedCall* plan_call) {
  const std::vector<SignatureParameter> run_signature = signature_of(run_call);
  const std::vector<SignatureParameter> plan_signature =
      plan_call != nullptr ? signature_of(*plan_call) : std::vector<SignatureParameter>{};
  CallBinding binding;
  for (const auto& [input, spec] : definition.inputs) {
    for (const InputSource& source : input_sources(definition, input)) {
      const DumpedCall* call = source.role == CallRole::run ? &run_call : plan_call;
      const auto ref = parse_argument_ref(source.argument);
      if (call == nullptr || !ref) {
        continue;
      }
      const auto found =
          find_argument(*call, source.role == CallRole::run ? run_signature : plan_signature, *ref);
      if (!found) {
        continue;
      }
      if (found->place == ArgumentPlace::metadata) {
        if (found->value == nullptr || found->value->is_null()) {
          continue; // passed as None: as good as not passed
        }
        binding.values.push_back(
            BoundValue{input, source.role, source.argument, found->key, *found->value});
        break;
      }
      if (!call->inputs) {
        continue;
      }
      const auto entry = call->inputs->header.tensors.find(found->key);
      if (entry == call->inputs->header.tensors.end()) {
        continue;
      }
      BoundTensor tensor{
          input,         source.role,         source.argument, found->key, call->inputs->path,
          entry->second, entry->second.shape, std::nullopt};
      restore_unit_dimension(definition, spec, tensor);
      binding.tensors.push_back(std::move(tensor));
      break;
    }
  }
  const BoundTensor* indptr = binding.tensor("kv_indptr");
  auto indices = std::find_if(binding.tensors.begin(), binding.tensors.end(),
                              [](const BoundTensor& t) { return t.input == "kv_indices"; });
  if (indptr != nullptr && indices != binding.tensors.end()) {
    const DumpedCall& owner = indptr->role == CallRole::run ? run_call : *plan_call;
    if (auto problem = cut_indices(owner, *indptr, *indices)) {
      return unexpected(std::move(*problem));
    }
  }
  return binding;
}

} // namespace fib
