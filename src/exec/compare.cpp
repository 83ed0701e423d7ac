#include "fib/exec/compare.hpp"

#include <fib/io/safetensors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cmath>

namespace fib {
namespace {

struct TableRow {
  std::string_view dtype;
  Tolerance tolerance;
};

constexpr std::array<TableRow, 5> k_tolerance_table{{
    {"F32", {1e-5, 1e-5, 1.0}},
    {"F16", {1e-3, 1e-3, 1.0}},
    {"BF16", {8e-3, 1e-2, 1.0}},
    {"F8_E4M3", {1e-1, 2e-1, 0.85}},
    {"F8_E5M2", {1e-1, 2e-1, 0.85}},
}};

constexpr std::array<std::pair<std::string_view, std::string_view>, 14> k_torch_names{{
    {"F64", "torch.float64"},
    {"F32", "torch.float32"},
    {"F16", "torch.float16"},
    {"BF16", "torch.bfloat16"},
    {"F8_E4M3", "torch.float8_e4m3fn"},
    {"F8_E5M2", "torch.float8_e5m2"},
    {"I64", "torch.int64"},
    {"I32", "torch.int32"},
    {"I16", "torch.int16"},
    {"I8", "torch.int8"},
    {"U8", "torch.uint8"},
    {"BOOL", "torch.bool"},
    {"U16", "torch.uint16"},
    {"U32", "torch.uint32"},
}};

// Python's repr of a shape tuple: "()", "(4,)", "(4, 2)".
std::string tuple_text(const std::vector<std::int64_t>& shape) {
  if (shape.size() == 1) {
    return fmt::format("({},)", shape[0]);
  }
  return fmt::format("({})", fmt::join(shape, ", "));
}

struct ValueErrors {
  double worst_absolute = 0.0;
  double worst_relative = 0.0;
  std::size_t close = 0;
};

// Integer and boolean dtypes compare exactly, whatever the tolerance.
bool is_exact_dtype(std::string_view dtype) {
  return dtype == "BOOL" || dtype.starts_with("I") || dtype.starts_with("U");
}

ValueErrors measure(const std::vector<double>& got, const std::vector<double>& expected,
                    const Tolerance& tolerance) {
  ValueErrors out;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double a = got[i];
    const double b = expected[i];
    if (std::isnan(a) || std::isnan(b)) {
      continue; // never close, and no error size
    }
    if (std::isinf(a) || std::isinf(b)) {
      out.close += a == b ? 1 : 0;
      continue;
    }
    const double difference = std::fabs(a - b);
    out.worst_absolute = std::max(out.worst_absolute, difference);
    out.worst_relative = std::max(out.worst_relative, difference / std::max(std::fabs(b), 1e-12));
    out.close += difference <= tolerance.atol + tolerance.rtol * std::fabs(b) ? 1 : 0;
  }
  return out;
}

} // namespace

Tolerance tolerance_for(std::string_view dtype, double atol, double rtol, ToleranceTable table) {
  if (table == ToleranceTable::on) {
    for (const TableRow& row : k_tolerance_table) {
      if (row.dtype == dtype) {
        return row.tolerance;
      }
    }
  }
  return Tolerance{atol, rtol, 1.0};
}

std::string torch_dtype_name(std::string_view dtype) {
  for (const auto& [code, name] : k_torch_names) {
    if (code == dtype) {
      return std::string(name);
    }
  }
  return std::string(dtype);
}

OutputComparison compare_outputs(const std::filesystem::path& expected,
                                 const std::vector<std::string>& output_names,
                                 const std::filesystem::path& got,
                                 const std::vector<std::string>& kinds,
                                 const ComparePolicy& policy) {
  OutputComparison out;
  if (kinds.size() != output_names.size()) {
    out.status = "INCORRECT_SHAPE";
    out.log = fmt::format("returned {} outputs, expected {}", kinds.size(), output_names.size());
    return out;
  }
  auto expected_header = read_safetensors_header(expected);
  if (!expected_header) {
    out.unreadable = "the reference's outputs: " + expected_header.error().message;
    return out;
  }
  auto got_header = read_safetensors_header(got);
  if (!got_header) {
    out.unreadable = "the solution's outputs: " + got_header.error().message;
    return out;
  }
  std::vector<std::string> numerical;
  for (std::size_t i = 0; i < output_names.size(); ++i) {
    const auto want = expected_header->tensors.find(output_names[i]);
    if (want == expected_header->tensors.end()) {
      out.unreadable = fmt::format("the reference's outputs have no '{}'", output_names[i]);
      return out;
    }
    const auto have = got_header->tensors.find(std::to_string(i));
    if (kinds[i] != "tensor" || have == got_header->tensors.end() ||
        have->second.shape != want->second.shape) {
      out.status = "INCORRECT_SHAPE";
      out.log = fmt::format("output {}: shape {}, expected {}", i,
                            kinds[i] == "tensor" && have != got_header->tensors.end()
                                ? tuple_text(have->second.shape)
                                : std::string("()"),
                            tuple_text(want->second.shape));
      return out;
    }
    if (have->second.dtype != want->second.dtype) {
      out.status = "INCORRECT_DTYPE";
      out.log =
          fmt::format("output {}: dtype {}, expected {}", i, torch_dtype_name(have->second.dtype),
                      torch_dtype_name(want->second.dtype));
      return out;
    }
    if (policy.values == CompareValues::no) {
      continue;
    }
    auto expected_values =
        read_tensor_values(expected, *expected_header, want->first, k_max_compared_elements);
    auto got_values = read_tensor_values(got, *got_header, have->first, k_max_compared_elements);
    if (!expected_values || !got_values) {
      out.unreadable = (!expected_values ? expected_values.error() : got_values.error()).message;
      return out;
    }
    const bool exact = is_exact_dtype(want->second.dtype);
    Tolerance tolerance =
        exact ? Tolerance{0.0, 0.0, 1.0}
              : tolerance_for(want->second.dtype, policy.atol, policy.rtol, policy.table);
    if (!exact && policy.required_matched_ratio) {
      tolerance.required_ratio = *policy.required_matched_ratio;
    }
    const ValueErrors errors = measure(*got_values, *expected_values, tolerance);
    out.max_absolute_error = std::max(out.max_absolute_error, errors.worst_absolute);
    out.max_relative_error = std::max(out.max_relative_error, errors.worst_relative);
    const std::size_t count = got_values->size();
    const double hit =
        count == 0 ? 1.0 : static_cast<double>(errors.close) / static_cast<double>(count);
    if (!exact) {
      out.matched_ratio = std::min(out.matched_ratio, hit);
    }
    if (hit < tolerance.required_ratio ||
        (tolerance.required_ratio == 1.0 && errors.close != count)) {
      numerical.push_back(
          fmt::format("output {}: {:.1f}% of the values within atol={:g}, rtol={:g}", i,
                      100.0 * hit, tolerance.atol, tolerance.rtol));
    }
  }
  if (!numerical.empty()) {
    out.status = "INCORRECT_NUMERICAL";
    out.log = fmt::format("{}", fmt::join(numerical, "\n"));
  }
  return out;
}

} // namespace fib
