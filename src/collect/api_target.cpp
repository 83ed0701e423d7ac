#include "fib/collect/api_target.hpp"

#include "collect/python_names.hpp"

#include <algorithm>
#include <cctype>

namespace fib {
namespace {

constexpr std::string_view k_run = "run";
constexpr std::string_view k_plan = "plan";

using collect_detail::is_identifier;

bool starts_upper(std::string_view part) {
  return !part.empty() && std::isupper(static_cast<unsigned char>(part.front())) != 0;
}

std::vector<std::string_view> split_dotted(std::string_view value) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = value.find('.', start);
    parts.push_back(value.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) {
      return parts;
    }
    start = dot + 1;
  }
}

// The class part of a wrapper call's logged name "<Class>.<method>" when the method is `method`.
std::optional<std::string_view> wrapper_class_of(const DumpedCall& call, std::string_view method) {
  const std::string_view name = call.function_name;
  if (name.size() <= method.size() + 1 || !name.ends_with(method) ||
      name[name.size() - method.size() - 1] != '.') {
    return std::nullopt;
  }
  return name.substr(0, name.size() - method.size() - 1);
}

// The `type` and `repr` FlashInfer recorded for a plain-class method's self (arg_0).
std::optional<std::pair<std::string, std::string>> self_of(const DumpedCall& call) {
  const auto self = call.input_metadata.find("arg_0");
  if (self == call.input_metadata.end() || !self->is_object()) {
    return std::nullopt;
  }
  const auto type = self->find("type");
  const auto repr = self->find("repr");
  if (type == self->end() || !type->is_string()) {
    return std::nullopt;
  }
  return std::pair{type->get<std::string>(),
                   repr != self->end() && repr->is_string() ? repr->get<std::string>() : ""};
}

bool wrapper_matches(const ApiTarget& target, std::string_view dumped_class) {
  return dumped_class.ends_with(target.class_name);
}

} // namespace

std::optional<ApiTarget> parse_fi_api(std::string_view value) {
  const std::vector<std::string_view> parts = split_dotted(value);
  if (!std::all_of(parts.begin(), parts.end(), is_identifier)) {
    return std::nullopt;
  }
  ApiTarget target;
  target.dotted = std::string(value);
  std::string_view last = parts.back();
  if (!starts_upper(last) && parts.size() >= 2 && starts_upper(parts[parts.size() - 2])) {
    last = parts[parts.size() - 2]; // the method form: "<…>.<Class>.run"
  }
  if (!starts_upper(last)) {
    target.kind = ApiKind::function;
    target.function = std::string(last);
    return target;
  }
  target.class_name = std::string(last);
  target.kind = last.find("Wrapper") != std::string_view::npos ? ApiKind::wrapper_class
                                                               : ApiKind::plain_class;
  return target;
}

std::vector<ApiTarget> api_targets_of(const std::vector<std::string>& tags) {
  std::vector<ApiTarget> out;
  for (const std::string& tag : tags) {
    if (tag.starts_with("fi_api:")) {
      if (auto target = parse_fi_api(std::string_view(tag).substr(7))) {
        out.push_back(std::move(*target));
      }
    }
  }
  return out;
}

bool is_workload_call(const ApiTarget& target, const DumpedCall& call) {
  switch (target.kind) {
  case ApiKind::function:
    return call.function_name == target.function;
  case ApiKind::wrapper_class: {
    const auto dumped_class = wrapper_class_of(call, k_run);
    return dumped_class && wrapper_matches(target, *dumped_class);
  }
  case ApiKind::plain_class: {
    const auto self = self_of(call);
    return call.function_name == k_run && self && self->first == target.class_name;
  }
  }
  return false;
}

const DumpedCall* paired_plan(const ApiTarget& target, const std::vector<DumpedCall>& calls,
                              const DumpedCall& run) {
  const auto same_object = [&](const DumpedCall& plan) {
    if (plan.process_id != run.process_id || !(plan.name < run.name)) {
      return false;
    }
    if (target.kind == ApiKind::wrapper_class) {
      const auto run_class = wrapper_class_of(run, k_run);
      const auto plan_class = wrapper_class_of(plan, k_plan);
      return run_class && plan_class && *run_class == *plan_class && run.self_id &&
             plan.self_id == run.self_id;
    }
    const auto run_self = self_of(run);
    const auto plan_self = self_of(plan);
    return plan.function_name == k_plan && run_self && plan_self && !run_self->second.empty() &&
           *run_self == *plan_self;
  };
  if (target.kind == ApiKind::function) {
    return nullptr;
  }
  const DumpedCall* found = nullptr;
  for (const DumpedCall& plan : calls) {
    if (same_object(plan) && (found == nullptr || found->name < plan.name)) {
      found = &plan;
    }
  }
  return found;
}

std::vector<std::string> dump_include_patterns(const std::vector<ApiTarget>& targets) {
  std::vector<std::string> patterns;
  for (const ApiTarget& target : targets) {
    switch (target.kind) {
    case ApiKind::function:
      patterns.push_back(target.function);
      break;
    case ApiKind::wrapper_class:
      patterns.push_back("*" + target.class_name + "." + std::string(k_run));
      patterns.push_back("*" + target.class_name + "." + std::string(k_plan));
      break;
    case ApiKind::plain_class:
      patterns.emplace_back(k_run);
      patterns.emplace_back(k_plan);
      break;
    }
  }
  std::sort(patterns.begin(), patterns.end());
  patterns.erase(std::unique(patterns.begin(), patterns.end()), patterns.end());
  return patterns;
}

} // namespace fib
