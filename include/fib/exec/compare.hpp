#pragma once
// Judging a solution's outputs against the reference's, in fib itself: both come from sandboxed
// processes as safetensors files (the solution's cannot reach the reference's, nor this code), and
// fib reads them with its own reader (io/safetensors.hpp) and compares the values here. Nothing
// the solution's process says about correctness is believed.

#include <fib/base/enum_names.hpp>

#include <array>
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

// How a family of kernels is judged (docs/run.md, "Evaluators"):
//   standard: every value within the tolerance (integer and boolean outputs exactly);
//   low_bit:  quantized kernels (op_type "moe", a `quant:`/`quantization:` tag, or a float8 or
//             float4 input or output): a share of the floating-point values may be off, at least
//             the required matched ratio (0.95 unless set); the share is recorded;
//   sampling: sampling kernels (op_type "sampling" with a probs or logits input and integer
//             samples, exec/sampling.hpp): outputs checked for count, shape and dtype only, every
//             sample inside its row's support, and the samples of many calls within a total
//             variation distance of the expected distribution.
enum class Evaluator { standard, low_bit, sampling };

template <> struct EnumNames<Evaluator> {
  static constexpr std::array k_table = std::to_array<EnumName<Evaluator>>({
      {Evaluator::standard, "standard"},
      {Evaluator::low_bit, "low-bit"},
      {Evaluator::sampling, "sampling"},
  });
};

inline constexpr double k_default_low_bit_matched_ratio = 0.95;

// no: compare_outputs checks the count, shapes and dtypes of the outputs, not their values (the
// sampling evaluator judges those itself).
enum class CompareValues { no, yes };

// What compare_outputs holds the values to.
struct ComparePolicy {
  double atol = 1e-2;
  double rtol = 1e-2;
  ToleranceTable table = ToleranceTable::off;
  // The share of each floating-point output's values that must be close, overriding the one of
  // the tolerance (tolerance_for); nullopt keeps it. Integer and boolean outputs stay exact.
  std::optional<double> required_matched_ratio;
  CompareValues values = CompareValues::yes;
};

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
  // The lowest share of close values over the floating-point outputs (1.0 when none).
  double matched_ratio = 1.0;
  // An error that is neither (a file fib cannot read): nullopt when none.
  std::optional<std::string> unreadable;
};

// Compares the solution's outputs with the reference's. `expected`: the reference's outputs,
// one tensor per name of `output_names` in that order. `got`: the solution's, under the keys "0",
// "1", ... for the positions where it returned a tensor; `kinds` says what it returned at each
// position ("tensor", or a Python type name). The tolerance of each output follows its expected
// dtype (tolerance_for, then the policy's required matched ratio); integer and boolean outputs
// must be equal (exact up to 2^53, as the values are read as doubles).
OutputComparison compare_outputs(const std::filesystem::path& expected,
                                 const std::vector<std::string>& output_names,
                                 const std::filesystem::path& got,
                                 const std::vector<std::string>& kinds,
                                 const ComparePolicy& policy);

// The most elements fib compares in one output (each side is read as doubles: 1 GiB apiece).
inline constexpr std::size_t k_max_compared_elements = std::size_t{1} << 27;

} // namespace fib
