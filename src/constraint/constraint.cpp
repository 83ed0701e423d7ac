#include "fib/constraint/constraint.hpp"

#include "constraint/evaluator.hpp"
#include "constraint/parser.hpp"
#include "constraint/tokenizer.hpp"
#include "constraint/value.hpp"

#include <fmt/format.h>

#include <exception>
#include <utility>
#include <variant>

namespace fib {

namespace {

using namespace constraint_detail;

ConstraintResult not_evaluable(std::string detail) {
  return ConstraintResult{ConstraintOutcome::not_evaluable, std::move(detail)};
}

// The syntax tree of `expression` in the supported subset, or why there is none.
struct Parsed {
  NodePtr root;
  std::string error;
};

Parsed parse(std::string_view expression) {
  if (expression.size() > k_constraint_max_length) {
    return {nullptr, fmt::format("expression longer than {} characters", k_constraint_max_length)};
  }
  std::vector<Token> tokens;
  Tokenizer tokenizer(expression);
  if (!tokenizer.run(tokens)) {
    return {nullptr, tokenizer.error()};
  }
  Parser parser(expression, tokens);
  NodePtr root = parser.parse();
  if (!root) {
    return {nullptr, parser.error()};
  }
  if (auto unsupported = find_unsupported(*root)) {
    return {nullptr, std::move(*unsupported)};
  }
  return {std::move(root), {}};
}

// "<expression> is false with a=1, b=2": the trimmed expression, how it failed, and what it read.
std::string violation_detail(std::string_view expression, const Value& value,
                             const std::vector<std::string>& reads) {
  const std::size_t first = expression.find_first_not_of(" \t\r\n\f");
  const std::size_t last = expression.find_last_not_of(" \t\r\n\f");
  std::string detail = cut(std::string(expression.substr(first, last - first + 1)));
  if (std::holds_alternative<bool>(value.data)) {
    detail += " is false";
  } else {
    detail += " is falsy (" + cut(repr(value)) + ")";
  }
  for (std::size_t i = 0; i < reads.size(); ++i) {
    detail += (i == 0 ? " with " : ", ") + reads[i];
  }
  return detail;
}

ConstraintResult evaluate_parsed(std::string_view expression, const Parsed& parsed,
                                 const ConstraintEnvironment& environment) {
  if (!parsed.root) {
    return not_evaluable(parsed.error);
  }
  Evaluator evaluator(expression, environment);
  const auto value = evaluator.eval(*parsed.root, Record::all);
  if (!value) {
    return not_evaluable(evaluator.error());
  }
  const auto truth = evaluator.truthy(*value);
  if (!truth) {
    return not_evaluable(evaluator.error());
  }
  if (*truth) {
    return ConstraintResult{ConstraintOutcome::satisfied, {}};
  }
  return ConstraintResult{ConstraintOutcome::violated,
                          violation_detail(expression, *value, evaluator.reads())};
}

ConstraintResult evaluate(std::string_view expression, const ConstraintEnvironment& environment) {
  return evaluate_parsed(expression, parse(expression), environment);
}

std::optional<std::int64_t> integer_value(std::string_view expression,
                                          const ConstraintEnvironment& environment) {
  const Parsed parsed = parse(expression);
  if (!parsed.root) {
    return std::nullopt;
  }
  Evaluator evaluator(expression, environment);
  const auto value = evaluator.eval(*parsed.root, Record::all);
  if (!value || !std::holds_alternative<std::int64_t>(value->data)) {
    return std::nullopt;
  }
  return std::get<std::int64_t>(value->data);
}

} // namespace

std::optional<std::int64_t> evaluate_integer(std::string_view expression,
                                             const ConstraintEnvironment& environment) {
  try {
    return integer_value(expression, environment);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

struct CompiledConstraint::State {
  std::string expression;
  Parsed parsed;
  std::string failure; // an exception of the parse (std::bad_alloc and the like), as a detail
};

CompiledConstraint::CompiledConstraint(std::string expression) {
  auto state = std::make_shared<State>();
  state->expression = std::move(expression);
  try {
    state->parsed = parse(state->expression);
  } catch (const std::exception& error) {
    state->failure = fmt::format("evaluation failed: {}", error.what());
  }
  m_state = std::move(state);
}

ConstraintResult CompiledConstraint::evaluate(const ConstraintEnvironment& environment) const {
  if (!m_state->failure.empty()) {
    return not_evaluable(m_state->failure);
  }
  try {
    return evaluate_parsed(m_state->expression, m_state->parsed, environment);
  } catch (const std::exception& error) {
    // As evaluate_constraint: only the standard library can throw here.
    return not_evaluable(fmt::format("evaluation failed: {}", error.what()));
  }
}

const std::string& CompiledConstraint::expression() const {
  return m_state->expression;
}

std::string_view to_string(ConstraintOutcome outcome) {
  switch (outcome) {
  case ConstraintOutcome::satisfied:
    return "satisfied";
  case ConstraintOutcome::violated:
    return "violated";
  case ConstraintOutcome::not_evaluable:
    return "not evaluable";
  }
  return "not evaluable";
}

ConstraintResult evaluate_constraint(std::string_view expression,
                                     const ConstraintEnvironment& environment) {
  try {
    return evaluate(expression, environment);
  } catch (const std::exception& error) {
    // Only the standard library can throw here (std::bad_alloc and the like); the evaluator
    // promises a result for every input.
    return not_evaluable(fmt::format("evaluation failed: {}", error.what()));
  }
}

} // namespace fib
