#include "fib/collect/arguments.hpp"

#include "collect/python_names.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace fib {
namespace {

using collect_detail::is_identifier;

std::string_view trim(std::string_view text) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n'; };
  while (!text.empty() && blank(text.front())) {
    text.remove_prefix(1);
  }
  while (!text.empty() && blank(text.back())) {
    text.remove_suffix(1);
  }
  return text;
}

// The top-level comma-separated parts of the text between the signature's outer parentheses, or
// nullopt when brackets or quotes do not balance. `close` receives the index of the ')' closing
// the list.
std::optional<std::vector<std::string_view>> split_parameters(std::string_view text,
                                                              std::size_t& close) {
  std::vector<std::string_view> parts;
  std::vector<char> stack;
  std::size_t start = 1;
  for (std::size_t i = 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\'' || c == '"') {
      const std::size_t end = text.find(c, i + 1); // repr() quotes never hold their own quote
      if (end == std::string_view::npos) {
        return std::nullopt;
      }
      i = end;
    } else if (c == '(' || c == '[' || c == '{') {
      stack.push_back(c == '(' ? ')' : (c == '[' ? ']' : '}'));
    } else if (c == ')' && stack.empty()) {
      parts.push_back(text.substr(start, i - start));
      close = i;
      return parts;
    } else if (c == ')' || c == ']' || c == '}') {
      if (stack.empty() || stack.back() != c) {
        return std::nullopt;
      }
      stack.pop_back();
    } else if (c == ',' && stack.empty()) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return std::nullopt;
}

// Item `index` of a tuple or list FlashInfer recorded ({"type": "tuple"|"list", "items": [...]}),
// unless it is a tensor (whose values are in the tensor file, not here); nullptr otherwise.
const Json* container_item(const Json& recorded, std::size_t index) {
  if (!recorded.is_object()) {
    return nullptr;
  }
  const auto type = recorded.find("type");
  const auto items = recorded.find("items");
  if (type == recorded.end() || !type->is_string() ||
      (type->get_ref<const std::string&>() != "tuple" &&
       type->get_ref<const std::string&>() != "list") ||
      items == recorded.end() || !items->is_array() || index >= items->size()) {
    return nullptr;
  }
  const Json& item = (*items)[index];
  if (item.is_object()) {
    const auto item_type = item.find("type");
    if (item_type != item.end() && item_type->is_string() &&
        item_type->get_ref<const std::string&>() == "torch.Tensor") {
      return nullptr;
    }
  }
  return &item;
}

} // namespace

std::optional<std::vector<SignatureParameter>> parse_function_signature(std::string_view text) {
  text = trim(text);
  if (text.empty() || text.front() != '(') {
    return std::nullopt;
  }
  std::size_t close = 0;
  const auto parts = split_parameters(text, close);
  if (!parts) {
    return std::nullopt;
  }
  const std::string_view rest = trim(text.substr(close + 1));
  if (!rest.empty() && !rest.starts_with("->")) {
    return std::nullopt;
  }
  std::vector<SignatureParameter> out;
  SignatureParameterKind next = SignatureParameterKind::positional;
  for (std::size_t i = 0; i < parts->size(); ++i) {
    std::string_view part = trim((*parts)[i]);
    if (part.empty() && parts->size() == 1) {
      break; // "()"
    }
    if (part == "/") {
      continue;
    }
    if (part == "*") {
      next = SignatureParameterKind::keyword_only;
      continue;
    }
    SignatureParameterKind kind = next;
    if (part.starts_with("**")) {
      kind = SignatureParameterKind::var_keyword;
      part.remove_prefix(2);
    } else if (part.starts_with("*")) {
      kind = SignatureParameterKind::var_positional;
      part.remove_prefix(1);
      next = SignatureParameterKind::keyword_only;
    }
    const std::size_t end = part.find_first_of(":=");
    const std::string_view name = trim(part.substr(0, end));
    if (!is_identifier(name)) {
      return std::nullopt;
    }
    out.push_back(SignatureParameter{std::string(name), kind});
  }
  return out;
}

std::optional<ArgumentRef> parse_argument_ref(std::string_view text) {
  ArgumentRef ref;
  const std::size_t open = text.find('[');
  if (open == std::string_view::npos) {
    if (!is_identifier(text)) {
      return std::nullopt;
    }
    ref.parameter = std::string(text);
    return ref;
  }
  const std::string_view digits = text.substr(open + 1, text.size() - open - 2);
  if (!text.ends_with(']') || digits.empty() || digits.size() > 3 ||
      !std::all_of(digits.begin(), digits.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }) ||
      !is_identifier(text.substr(0, open))) {
    return std::nullopt;
  }
  int member = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), member);
  ref.parameter = std::string(text.substr(0, open));
  ref.member = member;
  return ref;
}

std::optional<FoundArgument> find_argument(const DumpedCall& call,
                                           const std::vector<SignatureParameter>& signature,
                                           const ArgumentRef& ref) {
  std::vector<std::string> keys = {"kwarg_" + ref.parameter};
  int position = 0;
  for (const SignatureParameter& p : signature) {
    if (p.kind != SignatureParameterKind::positional) {
      break;
    }
    if (p.name == ref.parameter) {
      keys.push_back("arg_" + std::to_string(position));
      break;
    }
    ++position;
  }
  const auto has_tensor = [&](const std::string& key) {
    return std::find(call.input_tensor_keys.begin(), call.input_tensor_keys.end(), key) !=
           call.input_tensor_keys.end();
  };
  for (const std::string& key : keys) {
    const std::string tensor_key = ref.member ? key + "__" + std::to_string(*ref.member) : key;
    if (has_tensor(tensor_key)) {
      return FoundArgument{ArgumentPlace::tensor, tensor_key, nullptr};
    }
    const auto it = call.input_metadata.find(key);
    if (it == call.input_metadata.end()) {
      continue;
    }
    if (!ref.member) {
      return FoundArgument{ArgumentPlace::metadata, key, &*it};
    }
    if (const Json* item = container_item(*it, static_cast<std::size_t>(*ref.member))) {
      return FoundArgument{ArgumentPlace::metadata, key, item};
    }
  }
  return std::nullopt;
}

} // namespace fib
