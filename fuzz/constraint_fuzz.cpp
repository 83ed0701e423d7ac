// libFuzzer target: the constraint interpreter (constraint/constraint.hpp) on arbitrary
// expressions, against a small environment of axes. Property: never crashes, hangs or throws.
#include <fib/constraint/constraint.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view expression(reinterpret_cast<const char*>(data), size);
  fib::ConstraintEnvironment environment;
  environment.axes = {{"batch_size", 4}, {"num_pages", 16}, {"page_size", 8}, {"n", 0}};
  (void)fib::evaluate_constraint(expression, environment);
  (void)fib::evaluate_integer(expression, environment);
  return 0;
}
