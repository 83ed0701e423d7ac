#include "constraint/evaluator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <variant>

namespace fib::constraint_detail {

namespace {

// Whether `node` is a chain of attributes, subscripts and method calls on a name.
bool rooted_at_name(const Node& node) {
  const Node* current = &node;
  while (true) {
    if (current->kind == NodeKind::name) {
      return true;
    }
    if (current->kind == NodeKind::attribute || current->kind == NodeKind::subscript) {
      current = current->children[0].get();
    } else if (current->kind == NodeKind::call &&
               current->children[0]->kind == NodeKind::attribute) {
      current = current->children[0]->children[0].get();
    } else {
      return false;
    }
  }
}

Value shape_value(const std::vector<std::int64_t>& shape) {
  Sequence tuple{SequenceKind::tuple, {}};
  for (const std::int64_t dim : shape) {
    tuple.items.push_back(make_int(dim));
  }
  return Value{std::move(tuple)};
}

// Shape of a tensor or of a 0-d tensor element; nullptr otherwise.
const std::vector<std::int64_t>* shape_of(const Value& value) {
  static const std::vector<std::int64_t> k_scalar_shape;
  if (const auto* tensor = std::get_if<TensorRef>(&value.data)) {
    return &tensor->facts->shape;
  }
  if (std::holds_alternative<ElementRef>(value.data)) {
    return &k_scalar_shape;
  }
  return nullptr;
}

} // namespace

std::optional<std::int64_t> Evaluator::integer_argument(const Value& value, std::string_view what) {
  if (const auto* i = std::get_if<std::int64_t>(&value.data)) {
    return *i;
  }
  if (const auto* b = std::get_if<bool>(&value.data)) {
    return *b ? 1 : 0;
  }
  fail(fmt::format("{} must be an integer, not '{}'", what, type_name(value)));
  return std::nullopt;
}

std::optional<std::size_t> Evaluator::normalise_index(std::int64_t index, std::size_t length,
                                                      std::string_view what) {
  const auto signed_length = static_cast<std::int64_t>(length);
  const std::int64_t adjusted = index < 0 ? index + signed_length : index;
  if (adjusted < 0 || adjusted >= signed_length) {
    fail(fmt::format("index {} is out of range for {} of length {}", index, what, length));
    return std::nullopt;
  }
  return static_cast<std::size_t>(adjusted);
}

std::optional<Value> Evaluator::eval_chain(const Node& node, Record record) {
  std::optional<Value> result;
  if (node.kind == NodeKind::attribute) {
    result = eval_attribute(node);
  } else if (node.kind == NodeKind::subscript) {
    result = eval_subscript(node, record);
  } else {
    result = eval_method(node, record);
  }
  if (result && rooted_at_name(node)) {
    note_read(text_of(node), *result, record);
  }
  return result;
}

std::optional<Value> Evaluator::eval_attribute(const Node& node) {
  if (!is_supported_attribute(node.name)) {
    return fail(fmt::format("unsupported attribute '{}'", node.name));
  }
  const auto object = eval(*node.children[0], Record::none);
  if (!object) {
    return std::nullopt;
  }
  const auto* shape = shape_of(*object);
  if (shape == nullptr) {
    return fail(fmt::format("'{}' object has no attribute '{}'", type_name(*object), node.name));
  }
  if (node.name == "shape") {
    return shape_value(*shape);
  }
  return make_int(static_cast<std::int64_t>(shape->size()));
}

std::optional<Value> Evaluator::eval_subscript(const Node& node, Record record) {
  const auto object = eval(*node.children[0], Record::none);
  if (!object) {
    return std::nullopt;
  }
  const auto index_value = eval(*node.children[1], record);
  if (!index_value) {
    return std::nullopt;
  }
  if (const auto* sequence = std::get_if<Sequence>(&object->data)) {
    const auto index = integer_argument(*index_value, "an index");
    if (!index) {
      return std::nullopt;
    }
    const auto position =
        normalise_index(*index, sequence->items.size(),
                        sequence->kind == SequenceKind::tuple ? "a tuple" : "a list");
    if (!position) {
      return std::nullopt;
    }
    return sequence->items[*position];
  }
  if (const auto* tensor = std::get_if<TensorRef>(&object->data)) {
    const auto rank = tensor->facts->shape.size();
    if (rank != 1) {
      return fail(
          fmt::format("indexing tensor '{}' of rank {} is not supported", tensor->name, rank));
    }
    const auto* index = std::get_if<std::int64_t>(&index_value->data);
    if (index == nullptr) {
      return fail(fmt::format("indexing tensor '{}' with a '{}' is not supported", tensor->name,
                              type_name(*index_value)));
    }
    const auto length = tensor->facts->shape[0];
    const auto position =
        normalise_index(*index, static_cast<std::size_t>(std::max<std::int64_t>(length, 0)),
                        fmt::format("tensor '{}'", tensor->name));
    if (!position) {
      return std::nullopt;
    }
    return Value{ElementRef{*tensor, *position}};
  }
  if (std::holds_alternative<ElementRef>(object->data)) {
    return fail("a 0-d tensor cannot be indexed");
  }
  return fail(fmt::format("indexing a '{}' is not supported", type_name(*object)));
}

std::optional<Value> Evaluator::eval_call(const Node& node, Record record) {
  const Node& callee = *node.children[0];
  if (callee.kind == NodeKind::attribute) {
    return eval_chain(node, record);
  }
  if (callee.kind != NodeKind::name) {
    return fail("unsupported call");
  }
  if (defined(callee.name)) {
    return fail(fmt::format("'{}' is not callable", callee.name));
  }
  if (!is_supported_function(callee.name)) {
    return fail(fmt::format("unsupported function '{}'", callee.name));
  }
  std::vector<Value> arguments;
  bool tensor_argument = false;
  for (std::size_t i = 1; i < node.children.size(); ++i) {
    auto argument =
        eval(*node.children[i], record == Record::none ? Record::none : Record::except_tensors);
    if (!argument) {
      return std::nullopt;
    }
    tensor_argument = tensor_argument || std::holds_alternative<TensorRef>(argument->data);
    arguments.push_back(std::move(*argument));
  }
  auto result = call_builtin(callee.name, arguments);
  if (result && tensor_argument) {
    note_read(text_of(node), *result, record);
  }
  return result;
}

std::optional<Value> Evaluator::call_builtin(const std::string& name,
                                             const std::vector<Value>& arguments) {
  if (name == "abs" || name == "len") {
    if (arguments.size() != 1) {
      return fail(
          fmt::format("{}() takes exactly one argument ({} given)", name, arguments.size()));
    }
    return name == "abs" ? builtin_abs(arguments[0]) : builtin_len(arguments[0]);
  }
  return builtin_min_max(name, arguments);
}

std::optional<Value> Evaluator::builtin_min_max(const std::string& name,
                                                const std::vector<Value>& arguments) {
  std::vector<Value> candidates;
  if (arguments.size() == 1) {
    const auto* sequence = std::get_if<Sequence>(&arguments[0].data);
    if (sequence == nullptr) {
      return fail(fmt::format("{}() of a '{}' is not supported", name, type_name(arguments[0])));
    }
    candidates = sequence->items;
  } else {
    candidates = arguments;
  }
  if (candidates.empty()) {
    return fail(fmt::format("{}() arg is an empty sequence", name));
  }
  // Python keeps the first of equal extremes.
  const CompareOp better = name == "min" ? CompareOp::lt : CompareOp::gt;
  std::size_t best = 0;
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    const auto improves = order(better, candidates[i], candidates[best]);
    if (!improves) {
      return std::nullopt;
    }
    if (*improves) {
      best = i;
    }
  }
  return candidates[best];
}

std::optional<Value> Evaluator::builtin_abs(const Value& argument) {
  const auto value = resolve(argument);
  if (!value) {
    return std::nullopt;
  }
  const auto number = as_number(*value);
  if (!number) {
    return fail(fmt::format("bad operand type for abs(): '{}'", type_name(*value)));
  }
  if (number->is_float) {
    return make_float(std::fabs(number->floating));
  }
  if (number->integer == std::numeric_limits<std::int64_t>::min()) {
    return integer_overflow();
  }
  return make_int(number->integer < 0 ? -number->integer : number->integer);
}

std::optional<Value> Evaluator::builtin_len(const Value& argument) {
  if (const auto* sequence = std::get_if<Sequence>(&argument.data)) {
    return make_int(static_cast<std::int64_t>(sequence->items.size()));
  }
  if (const auto* text = std::get_if<std::string>(&argument.data)) {
    return make_int(static_cast<std::int64_t>(code_points(*text)));
  }
  if (const auto* tensor = std::get_if<TensorRef>(&argument.data)) {
    if (tensor->facts->shape.empty()) {
      return fail(fmt::format("len() of 0-d tensor '{}'", tensor->name));
    }
    return make_int(tensor->facts->shape[0]);
  }
  if (std::holds_alternative<ElementRef>(argument.data)) {
    return fail("len() of a 0-d tensor");
  }
  return fail(fmt::format("object of type '{}' has no len()", type_name(argument)));
}

std::optional<Value> Evaluator::eval_method(const Node& node, Record record) {
  const Node& attribute = *node.children[0];
  const std::string& method = attribute.name;
  if (!is_supported_method(method)) {
    return fail(fmt::format("unsupported method '{}'", method));
  }
  const auto object = eval(*attribute.children[0], Record::none);
  if (!object) {
    return std::nullopt;
  }
  std::vector<Value> arguments;
  for (std::size_t i = 1; i < node.children.size(); ++i) {
    auto argument = eval(*node.children[i], record);
    if (!argument) {
      return std::nullopt;
    }
    arguments.push_back(std::move(*argument));
  }
  const auto* shape = shape_of(*object);
  if (shape == nullptr) {
    return fail(fmt::format("'{}' object has no attribute '{}'", type_name(*object), method));
  }
  const std::size_t max_arguments = method == "size" ? 1 : 0;
  if (arguments.size() > max_arguments) {
    return fail(fmt::format("{}() takes {} given {}", method,
                            max_arguments == 0 ? "no arguments," : "at most one argument,",
                            arguments.size()));
  }
  if (method == "dim") {
    return make_int(static_cast<std::int64_t>(shape->size()));
  }
  if (method == "size") {
    if (arguments.empty()) {
      return shape_value(*shape);
    }
    const auto dim = integer_argument(arguments[0], "the dimension");
    if (!dim) {
      return std::nullopt;
    }
    const auto position = normalise_index(*dim, shape->size(), "the dimensions");
    if (!position) {
      return std::nullopt;
    }
    return make_int((*shape)[*position]);
  }
  const auto numel = checked_numel(*shape);
  if (method == "numel") {
    if (!numel) {
      return fail("the number of elements does not fit in 64 bits");
    }
    return make_int(*numel);
  }
  // item()
  if (const auto* element = std::get_if<ElementRef>(&object->data)) {
    return scalar_of(element->tensor, element->index);
  }
  const auto& tensor = std::get<TensorRef>(object->data);
  if (!numel || *numel != 1) {
    return fail(fmt::format(
        "item() of tensor '{}' with {} elements: only one element can become a Python scalar",
        tensor.name, numel ? fmt::format("{}", *numel) : std::string("too many")));
  }
  return scalar_of(tensor, 0);
}

} // namespace fib::constraint_detail
