#pragma once
// Judging a solution's outputs against the reference's, in fib itself: both come from sandboxed
// processes as safetensors files (the solution's cannot reach the reference's, nor this code), and
// fib reads them with its own reader (io/safetensors.hpp) and compares the values here. Nothing
// the solution's process says about correctness is believed.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

enum class ToleranceTable { off, on };

// When a value counts as close: |got - expected| <= atol + rtol * |expected| (NaN is never close,
// an infinity only to the same infinity), and the share of close values that passes.
struct Tolerance {
  double atol = 1e-2;
  double rtol = 1e-2;
  double required_ratio = 1.0; // 1.0: every value
};

// The tolerance for an output of safetensors dtype `dtype` ("F32", "BF16", ...): the given
// atol/rtol, or with ToleranceTable::on the old tool's per-dtype table (F32 1e-5/1e-5, F16
// 1e-3/1e-3, BF16 8e-3/1e-2, F8_E4M3 and F8_E5M2 1e-1/2e-1 with 85% of the values; other dtypes
// keep the given ones).
Tolerance tolerance_for(std::string_view dtype, double atol, double rtol, ToleranceTable table);

// The torch spelling of a safetensors dtype ("F32" -> "torch.float32"); the code itself when
// unknown.
std::string torch_dtype_name(std::string_view dtype);

struct OutputComparison {
  // "" when every output has the count, shape, dtype and values expected; else INCORRECT_SHAPE,
  // INCORRECT_DTYPE or INCORRECT_NUMERICAL (then with the errors below).
  std::string status;
  std::string log; // what differs, one line per output
  double max_absolute_error = 0.0;
  double max_relative_error = 0.0; // |got - expected| / max(|expected|, 1e-12)
  // An error that is neither (a file fib cannot read): nullopt when none.
  std::optional<std::string> unreadable;
};

// Compares the solution's outputs with the reference's. `expected`: the reference's outputs,
// one tensor per name of `output_names` in that order. `got`: the solution's, under the keys "0",
// "1", ... for the positions where it returned a tensor; `kinds` says what it returned at each
// position ("tensor", or a Python type name). The tolerance of each output follows its expected
// dtype (tolerance_for); integer and boolean outputs must be equal (exact up to 2^53, as the
// values are read as doubles).
OutputComparison compare_outputs(const std::filesystem::path& expected,
                                 const std::vector<std::string>& output_names,
                                 const std::filesystem::path& got,
                                 const std::vector<std::string>& kinds, double atol, double rtol,
                                 ToleranceTable table);

// The most elements fib compares in one output (each side is read as doubles: 1 GiB apiece).
inline constexpr std::size_t k_max_compared_elements = std::size_t{1} << 27;

} // namespace fib
