#include "constraint/evaluator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <type_traits>
#include <utility>
#include <variant>

namespace fib::constraint_detail {

namespace {

constexpr std::string_view k_functions[] = {"min", "max", "abs", "len"};
constexpr std::string_view k_attributes[] = {"shape", "ndim"};
constexpr std::string_view k_methods[] = {"item", "numel", "dim", "size"};

template <std::size_t N> bool contains(const std::string_view (&list)[N], std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

} // namespace

bool is_supported_function(std::string_view name) {
  return contains(k_functions, name);
}

bool is_supported_attribute(std::string_view name) {
  return contains(k_attributes, name);
}

bool is_supported_method(std::string_view name) {
  return contains(k_methods, name);
}

// Children first, so the leftmost unsupported construct is the one named.
std::optional<std::string> find_unsupported(const Node& node) {
  for (std::size_t i = 0; i < node.children.size(); ++i) {
    const Node& child = *node.children[i];
    if (node.kind == NodeKind::call && i == 0 && child.kind == NodeKind::attribute) {
      // The callee of a method call: check its object only; the method is checked below.
      if (auto found = find_unsupported(*child.children[0])) {
        return found;
      }
      continue;
    }
    if (auto found = find_unsupported(child)) {
      return found;
    }
  }
  if (node.kind == NodeKind::attribute && !is_supported_attribute(node.name)) {
    return fmt::format("unsupported attribute '{}'", node.name);
  }
  if (node.kind == NodeKind::call) {
    const Node& callee = *node.children[0];
    if (callee.kind == NodeKind::attribute && !is_supported_method(callee.name)) {
      return fmt::format("unsupported method '{}'", callee.name);
    }
    if (callee.kind == NodeKind::name && !is_supported_function(callee.name)) {
      return fmt::format("unsupported function '{}'", callee.name);
    }
    if (callee.kind != NodeKind::attribute && callee.kind != NodeKind::name) {
      return std::string("unsupported call");
    }
  }
  return std::nullopt;
}

std::optional<Value> Evaluator::eval(const Node& node, Record record) {
  switch (node.kind) {
  case NodeKind::constant:
    return node.constant;
  case NodeKind::name:
    return eval_name(node, record);
  case NodeKind::sequence:
    return eval_sequence(node, record);
  case NodeKind::unary:
    return eval_unary(node, record);
  case NodeKind::binary:
    return eval_binary(node, record);
  case NodeKind::logical:
    return eval_logical(node, record);
  case NodeKind::not_op:
    return eval_not(node, record);
  case NodeKind::compare:
    return eval_compare(node, record);
  case NodeKind::call:
    return eval_call(node, record);
  case NodeKind::attribute:
  case NodeKind::subscript:
    return eval_chain(node, record);
  }
  return fail("unsupported syntax");
}

std::optional<Value> Evaluator::eval_sequence(const Node& node, Record record) {
  Sequence sequence{node.sequence, {}};
  for (const NodePtr& child : node.children) {
    auto item = eval(*child, record);
    if (!item) {
      return std::nullopt;
    }
    sequence.items.push_back(std::move(*item));
  }
  return Value{std::move(sequence)};
}

std::optional<Value> Evaluator::eval_binary(const Node& node, Record record) {
  auto left = eval(*node.children[0], record);
  if (!left) {
    return std::nullopt;
  }
  auto right = eval(*node.children[1], record);
  if (!right) {
    return std::nullopt;
  }
  return arithmetic(node.binary, std::move(*left), std::move(*right));
}

std::optional<Value> Evaluator::eval_not(const Node& node, Record record) {
  auto operand = eval(*node.children[0], record);
  if (!operand) {
    return std::nullopt;
  }
  const auto truth = truthy(*operand);
  if (!truth) {
    return std::nullopt;
  }
  return make_bool(!*truth);
}

std::optional<bool> Evaluator::truthy(const Value& value) {
  const auto resolved = resolve(value);
  if (!resolved) {
    return std::nullopt;
  }
  if (const auto* tensor = std::get_if<TensorRef>(&resolved->data)) {
    const auto numel = checked_numel(tensor->facts->shape);
    if (numel && *numel == 1) {
      const auto element = scalar_of(*tensor, 0);
      return element ? truthy(*element) : std::nullopt;
    }
    fail(fmt::format("the truth value of tensor '{}' with {} elements is ambiguous", tensor->name,
                     numel ? fmt::format("{}", *numel) : std::string("many")));
    return std::nullopt;
  }
  return std::visit(
      [](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return false;
        } else if constexpr (std::is_same_v<T, bool>) {
          return x;
        } else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>) {
          return x != 0;
        } else if constexpr (std::is_same_v<T, std::string>) {
          return !x.empty();
        } else if constexpr (std::is_same_v<T, Sequence>) {
          return !x.items.empty();
        } else {
          return true; // not reached: tensors are handled above
        }
      },
      resolved->data);
}

std::nullopt_t Evaluator::fail(std::string detail) {
  if (m_error.empty()) {
    m_error = std::move(detail);
  }
  return std::nullopt;
}

std::string_view Evaluator::text_of(const Node& node) const {
  return m_source.substr(node.begin, node.end - node.begin);
}

void Evaluator::note_read(std::string_view label, const Value& value, Record record) {
  if (record == Record::none ||
      (record == Record::except_tensors && std::holds_alternative<TensorRef>(value.data))) {
    return;
  }
  std::string entry = cut(std::string(label)) + "=" + cut(repr(value));
  if (std::find(m_reads.begin(), m_reads.end(), entry) == m_reads.end()) {
    m_reads.push_back(std::move(entry));
  }
}

bool Evaluator::defined(const std::string& name) const {
  return m_environment.axes.count(name) != 0 || m_environment.scalars.count(name) != 0 ||
         m_environment.tensors.count(name) != 0 || m_environment.absent.count(name) != 0;
}

std::optional<Value> Evaluator::eval_name(const Node& node, Record record) {
  std::optional<Value> value;
  if (const auto axis = m_environment.axes.find(node.name); axis != m_environment.axes.end()) {
    value = make_int(axis->second);
  } else if (const auto scalar = m_environment.scalars.find(node.name);
             scalar != m_environment.scalars.end()) {
    value = std::visit([](const auto& x) { return Value{x}; }, scalar->second);
  } else if (const auto tensor = m_environment.tensors.find(node.name);
             tensor != m_environment.tensors.end()) {
    value = Value{TensorRef{tensor->first, &tensor->second}};
  } else if (m_environment.absent.count(node.name) != 0) {
    value = Value{};
  } else if (is_supported_function(node.name)) {
    return fail(fmt::format("builtin '{}' used as a value", node.name));
  } else {
    return fail(fmt::format("unknown name '{}'", node.name));
  }
  note_read(node.name, *value, record);
  return value;
}

std::optional<Value> Evaluator::scalar_of(const TensorRef& tensor, std::size_t index) {
  const TensorFacts& facts = *tensor.facts;
  if (!facts.values) {
    return fail(fmt::format("needs the data of tensor '{}'", tensor.name));
  }
  const auto numel = checked_numel(facts.shape);
  if (!numel || facts.values->size() != static_cast<std::size_t>(*numel)) {
    return fail(fmt::format("the data of tensor '{}' has {} values, its shape {} needs {}",
                            tensor.name, facts.values->size(), shape_repr(facts.shape),
                            numel ? fmt::format("{}", *numel) : std::string("more")));
  }
  auto element = known_element(tensor, index);
  if (!element && index >= facts.values->size()) {
    return fail(fmt::format("index {} is out of range for tensor '{}'", index, tensor.name));
  }
  if (!element) {
    return fail(fmt::format("element {} of tensor '{}' is not a 64-bit integer ({})", index,
                            tensor.name, python_float_repr((*facts.values)[index])));
  }
  return element;
}

std::optional<Value> Evaluator::resolve(const Value& value) {
  if (const auto* element = std::get_if<ElementRef>(&value.data)) {
    return scalar_of(element->tensor, element->index);
  }
  return value;
}

std::optional<Value> Evaluator::eval_unary(const Node& node, Record record) {
  auto operand = eval(*node.children[0], record);
  if (!operand) {
    return std::nullopt;
  }
  operand = resolve(*operand);
  if (!operand) {
    return std::nullopt;
  }
  const auto number = as_number(*operand);
  const char* spelling = node.unary == UnaryOp::negate ? "-" : "+";
  if (!number) {
    return fail(fmt::format("bad operand type for unary {}: '{}'", spelling, type_name(*operand)));
  }
  if (node.unary == UnaryOp::plus) {
    return number->is_float ? make_float(number->floating) : make_int(number->integer);
  }
  if (number->is_float) {
    return make_float(-number->floating);
  }
  if (number->integer == std::numeric_limits<std::int64_t>::min()) {
    return fail("integer overflow: the result does not fit in 64 bits");
  }
  return make_int(-number->integer);
}

std::optional<Value> Evaluator::eval_logical(const Node& node, Record record) {
  // Python returns the deciding operand itself, not a bool.
  std::optional<Value> value;
  for (const NodePtr& child : node.children) {
    value = eval(*child, record);
    if (!value) {
      return std::nullopt;
    }
    const auto truth = truthy(*value);
    if (!truth) {
      return std::nullopt;
    }
    if (*truth == (node.logical == LogicalOp::or_op)) {
      return value;
    }
  }
  return value;
}

std::optional<Value> Evaluator::eval_compare(const Node& node, Record record) {
  auto left = eval(*node.children[0], record);
  if (!left) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < node.compares.size(); ++i) {
    auto right = eval(*node.children[i + 1], record);
    if (!right) {
      return std::nullopt;
    }
    const auto result = compare(node.compares[i], *left, *right);
    if (!result) {
      return std::nullopt;
    }
    if (!*result) {
      return make_bool(false); // a < b < c stops at the first false link
    }
    left = std::move(right);
  }
  return make_bool(true);
}

} // namespace fib::constraint_detail
