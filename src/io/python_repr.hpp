#pragma once
// Python repr() of the few value shapes that appear in the old tool's messages.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fib::detail {

// repr(str): single quotes unless the text holds a single quote and no double quote.
std::string py_str_repr(std::string_view text);

// repr(list of str), e.g. "['a', 'b']".
std::string py_list_repr(const std::vector<std::string>& items);

// repr(tuple of int), e.g. "(8, 4)", "(8,)", "()".
std::string py_tuple_repr(const std::vector<std::int64_t>& items);

} // namespace fib::detail
