#pragma once
// Which dumped calls belong to a definition: the FlashInfer API its `fi_api:` tag names, matched
// against the names FlashInfer's Level-10 logging gives calls, and the pairing of a wrapper's
// `run` with the `plan` that set it up (docs/collect.md, "Binding calls to definitions").

#include <fib/collect/level10.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// What an `fi_api:` tag names.
enum class ApiKind {
  function,      // a plain function: calls are logged under its name ("rmsnorm")
  wrapper_class, // a class whose name contains "Wrapper": calls logged "<Class>.<method>"
  plain_class,   // another class: its methods are logged bare ("run"), self as arg_0
};

struct ApiTarget {
  std::string dotted; // the tag's value as written
  ApiKind kind = ApiKind::function;
  std::string class_name; // for the two class kinds
  std::string function;   // for ApiKind::function
};

// The API of an `fi_api:` tag value, in either form the ecosystem writes: the class
// ("flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper", the old tools' form) or the method
// ("….BatchDecodeWithPagedKVCacheWrapper.run", FlashInfer's own dumper's form: a lower-case last
// component after an upper-case one), or a function ("flashinfer.norm.rmsnorm"). A class is
// recognised by its upper-case first letter. nullopt for a value that is not a dotted Python
// name.
std::optional<ApiTarget> parse_fi_api(std::string_view value);

// The APIs a definition's `fi_api:<value>` tags name, in tag order (parse_fi_api of each value;
// values it refuses are left out).
std::vector<ApiTarget> api_targets_of(const std::vector<std::string>& tags);

// Whether `call` is a call of `target` that can become a workload: for a function, a call logged
// under its name; for a wrapper class, its `run` (or a subclass's whose name ends with the class
// name, such as CUDAGraphBatchDecodeWithPagedKVCacheWrapper); for a plain class, a bare `run`
// whose `arg_0` (self) is of that class. `plan` calls are never workloads themselves.
bool is_workload_call(const ApiTarget& target, const DumpedCall& call);

// The plan call that set up `run` (a call for which is_workload_call holds for a class target):
// among `calls`, the last `plan` of the same process and the same object (`self_id` for wrappers;
// for plain classes the address in self's repr), whose directory name sorts before the run's.
// nullptr when there is none (a function target, or no such plan was dumped).
const DumpedCall* paired_plan(const ApiTarget& target, const std::vector<DumpedCall>& calls,
                              const DumpedCall& run);

// FLASHINFER_DUMP_INCLUDE patterns (fnmatch) that dump every call is_workload_call and
// paired_plan can use for `targets`: "*<Class>.run" and "*<Class>.plan" for wrappers (the `*`
// takes in subclasses), "run" and "plan" for plain classes, the name for functions; sorted,
// without repeats.
std::vector<std::string> dump_include_patterns(const std::vector<ApiTarget>& targets);

} // namespace fib
