#pragma once
// Finding an argument of a dumped call: FlashInfer keys positional arguments `arg_<i>` (a
// method's self is arg_0) and keyword arguments `kwarg_<name>`, so a parameter is found by its
// name or by its position in the call's recorded `function_signature`; a member of a tuple or list
// argument is `<key>__<i>` (docs/collect.md, "Finding an argument").

#include <fib/collect/level10.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

enum class SignatureParameterKind { positional, var_positional, keyword_only, var_keyword };

struct SignatureParameter {
  std::string name;
  SignatureParameterKind kind = SignatureParameterKind::positional;
};

// The parameters of a signature as Python's str(inspect.signature(f)) writes it:
// "(self, q: torch.Tensor, paged_kv_cache: Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]],
// *, scale: float = 1.0, **kwargs: Any) -> torch.Tensor". Annotations and defaults may hold
// brackets, strings and commas; `/` marks the parameters before it positional-only (they stay
// positional) and a bare `*` makes the ones after it keyword-only. nullopt when the text is not
// such a signature (no parentheses around the list, unbalanced brackets or quotes, a parameter
// that is not an identifier).
std::optional<std::vector<SignatureParameter>> parse_function_signature(std::string_view text);

// A parameter, or a member of a tuple or list parameter: "q", "paged_kv_cache[0]".
struct ArgumentRef {
  std::string parameter;
  std::optional<int> member;
};

// "name" or "name[<0-999>]"; nullopt for anything else.
std::optional<ArgumentRef> parse_argument_ref(std::string_view text);

enum class ArgumentPlace { tensor, metadata };

// Where an argument is in a call's dump: a key of its inputs file (`tensor`) or a value of its
// input_metadata (`metadata`, for the values that are not tensors).
struct FoundArgument {
  ArgumentPlace place = ArgumentPlace::tensor;
  std::string key;             // the tensor key, or the input_metadata key of the argument
  const Json* value = nullptr; // `metadata`: the recorded value (a member's item), in the call
};

// Where `ref` is in `call`: under `kwarg_<parameter>`, else under `arg_<i>` for the parameter's
// position i among the positional parameters of the call's signature (`signature`, from
// parse_function_signature; an empty list makes only keywords findable). A member is the tensor
// `<key>__<i>`, or item i of a tuple or list FlashInfer recorded under `<key>` ({"type": "tuple",
// "items": [...]}) when that item is not a tensor. A tensor is preferred to a metadata value.
// nullopt when the call does not hold it (the argument was not passed: its default applied).
// `value` points into `call`, which must outlive the result.
std::optional<FoundArgument> find_argument(const DumpedCall& call,
                                           const std::vector<SignatureParameter>& signature,
                                           const ArgumentRef& ref);

} // namespace fib
