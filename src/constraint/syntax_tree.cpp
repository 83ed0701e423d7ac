#include "constraint/syntax_tree.hpp"

namespace fib::constraint_detail {

std::string_view symbol(BinaryOp op) {
  switch (op) {
  case BinaryOp::add:
    return "+";
  case BinaryOp::subtract:
    return "-";
  case BinaryOp::multiply:
    return "*";
  case BinaryOp::divide:
    return "/";
  case BinaryOp::floor_divide:
    return "//";
  case BinaryOp::modulo:
    return "%";
  case BinaryOp::power:
    return "**";
  }
  return "?";
}

std::string_view symbol(CompareOp op) {
  switch (op) {
  case CompareOp::eq:
    return "==";
  case CompareOp::ne:
    return "!=";
  case CompareOp::lt:
    return "<";
  case CompareOp::le:
    return "<=";
  case CompareOp::gt:
    return ">";
  case CompareOp::ge:
    return ">=";
  case CompareOp::in:
    return "in";
  case CompareOp::not_in:
    return "not in";
  case CompareOp::is:
    return "is";
  case CompareOp::is_not:
    return "is not";
  }
  return "?";
}

} // namespace fib::constraint_detail
