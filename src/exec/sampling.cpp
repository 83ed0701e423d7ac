#include "fib/exec/sampling.hpp"

#include "smoke_inputs.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/safetensors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace fib {
namespace {

Diagnostic unfit(const Definition& definition, std::string why) {
  return make_diagnostic(
      codes::k_run_evaluator_unfit,
      fmt::format("the sampling evaluator cannot judge '{}': {}", definition.name, std::move(why)));
}

std::optional<std::string> input_named(const Definition& definition, std::string_view name) {
  if (find_entry(definition.inputs, name) != nullptr) {
    return std::string(name);
  }
  return std::nullopt;
}

// A filter's value for each row: a scalar input's value, or a tensor's values (one, or one per
// row).
Expected<std::vector<double>> filter_values(const std::string& name,
                                            const std::filesystem::path& inputs,
                                            const SafetensorsHeader& header, const Json& scalars,
                                            std::size_t rows) {
  if (scalars.is_object() && scalars.contains(name)) {
    const Json& value = scalars[name];
    if (value.is_number() || value.is_boolean()) {
      return std::vector<double>(rows, value.is_boolean() ? (value.get<bool>() ? 1.0 : 0.0)
                                                          : value.get<double>());
    }
    return unexpected(make_diagnostic(
        codes::k_blob_malformed,
        fmt::format("the sampling filter '{}' is {}, not a number", name, value.dump())));
  }
  FIB_TRY_ASSIGN(std::vector<double> values,
                 read_tensor_values(inputs, header, name, k_max_compared_elements));
  if (values.size() == 1) {
    return std::vector<double>(rows, values.front());
  }
  if (values.size() != rows) {
    return unexpected(make_diagnostic(
        codes::k_blob_malformed, fmt::format("the sampling filter '{}' has {} values for {} rows",
                                             name, values.size(), rows)));
  }
  return values;
}

// One row's probabilities (logits through a softmax), non-negative and summing to 1; a row
// without mass is uniform.
void normalize_row(double* row, std::size_t vocab, SamplingSource source) {
  if (source == SamplingSource::logits) {
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < vocab; ++j) {
      if (!std::isnan(row[j])) {
        top = std::max(top, row[j]);
      }
    }
    for (std::size_t j = 0; j < vocab; ++j) {
      row[j] = std::isnan(row[j]) || !std::isfinite(top) ? 0.0 : std::exp(row[j] - top);
    }
  }
  double total = 0.0;
  for (std::size_t j = 0; j < vocab; ++j) {
    row[j] = std::isfinite(row[j]) && row[j] > 0 ? row[j] : 0.0;
    total += row[j];
  }
  for (std::size_t j = 0; j < vocab; ++j) {
    row[j] = total > 0 ? row[j] / total : 1.0 / static_cast<double>(vocab);
  }
}

// Per token, in a row: how many tokens are more likely, and their mass (ties share the values of
// the first of their group, so that equal probabilities are treated alike).
struct Ranks {
  std::vector<std::size_t> greater_count;
  std::vector<double> greater_mass;
  double top = 0.0;
};

Ranks ranks_of(const double* row, std::size_t vocab) {
  std::vector<std::size_t> order(vocab);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return row[a] > row[b]; });
  Ranks out;
  out.greater_count.resize(vocab);
  out.greater_mass.resize(vocab);
  out.top = vocab == 0 ? 0.0 : row[order.front()];
  double mass = 0.0;
  std::size_t group_start = 0;
  double group_mass = 0.0;
  for (std::size_t i = 0; i < vocab; ++i) {
    if (i > 0 && row[order[i]] != row[order[i - 1]]) {
      group_start = i;
      group_mass = mass;
    }
    out.greater_count[order[i]] = group_start;
    out.greater_mass[order[i]] = group_mass;
    mass += row[order[i]];
  }
  return out;
}

struct RowFilters {
  std::optional<double> top_k;
  std::optional<double> top_p;
  std::optional<double> min_p;
};

// Fills one row's expected distribution and accepted tokens from its probabilities `q`.
void filter_row(const double* q, std::size_t vocab, const RowFilters& filters, double* expected,
                std::uint8_t* allowed) {
  const Ranks ranks = ranks_of(q, vocab);
  const auto v = static_cast<double>(vocab);
  double kept_mass = 0.0;
  for (std::size_t j = 0; j < vocab; ++j) {
    bool keep = true;
    if (filters.top_k && *filters.top_k > 0 && *filters.top_k < v) {
      keep = static_cast<double>(ranks.greater_count[j]) < *filters.top_k;
    }
    allowed[j] = keep ? 1 : 0;
    expected[j] = keep ? q[j] : 0.0;
    kept_mass += expected[j];
  }
  for (std::size_t j = 0; j < vocab; ++j) {
    if (filters.top_p && *filters.top_p < 1.0) {
      const double p = *filters.top_p;
      // The reference keeps a token when the mass before it, after top-k's renormalization, is
      // at most p (p <= 0: only the most likely); the tolerance is on the mass before top-k,
      // which is never larger, so every token kept is accepted.
      const double renormalized = kept_mass > 0 ? ranks.greater_mass[j] / kept_mass : 0.0;
      if (p <= 0 ? ranks.greater_count[j] != 0 : renormalized > p) {
        expected[j] = 0.0;
      }
      if (ranks.greater_mass[j] > std::max(p, 0.0) + k_sampling_edge_tolerance) {
        allowed[j] = 0;
      }
    }
    if (filters.min_p && *filters.min_p > 0) {
      if (q[j] < *filters.min_p * ranks.top) {
        expected[j] = 0.0;
      }
      if (q[j] < (1.0 - k_sampling_edge_tolerance) * *filters.min_p * ranks.top) {
        allowed[j] = 0;
      }
    }
  }
  const double total = std::accumulate(expected, expected + vocab, 0.0);
  for (std::size_t j = 0; j < vocab; ++j) {
    expected[j] = total > 0 ? expected[j] / total : 0.0;
    if (expected[j] > 0) {
      allowed[j] = 1; // the exact support is always accepted
    }
  }
}

// The values and the shape of tensor `key` of the solution's samples file.
struct SampleTensor {
  std::vector<double> values;
  std::vector<std::int64_t> shape;
};

Expected<SampleTensor> read_samples(const std::filesystem::path& file, const std::string& key) {
  FIB_TRY_ASSIGN(SafetensorsHeader header, read_safetensors_header(file));
  FIB_TRY_ASSIGN(std::vector<double> values,
                 read_tensor_values(file, header, key, k_max_compared_elements));
  return SampleTensor{std::move(values), header.tensors.at(key).shape};
}

// log C(n, k) for 0 <= k <= n.
double log_choose(double n, double k) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
}

} // namespace

Expected<SamplingLayout> sampling_layout(const Definition& definition) {
  SamplingLayout out;
  if (auto probs = input_named(definition, "probs")) {
    out.distribution = *probs;
  } else if (auto logits = input_named(definition, "logits")) {
    out.distribution = *logits;
    out.source = SamplingSource::logits;
  } else {
    return unexpected(unfit(definition, "it has no input named 'probs' or 'logits'"));
  }
  if (input_named(definition, "indices")) {
    return unexpected(unfit(definition, "it has an 'indices' input (rows chosen by index)"));
  }
  const TensorSpec& source = *find_entry(definition.inputs, out.distribution);
  if (!source.shape || source.shape->empty() || source.shape->size() > 2) {
    return unexpected(unfit(definition, fmt::format("'{}' must have one or two dimensions "
                                                    "([vocab] or [batch, vocab])",
                                                    out.distribution)));
  }
  if (definition.outputs.empty()) {
    return unexpected(unfit(definition, "it has no outputs"));
  }
  const auto& [samples_name, samples] = *definition.outputs.begin();
  if (!detail::is_integer_dtype(samples.dtype) || !samples.shape) {
    return unexpected(
        unfit(definition, fmt::format("its first output '{}' is not a tensor of integer token ids",
                                      samples_name)));
  }
  if (source.shape->size() == 2) {
    out.batch_axis = source.shape->front();
    if (samples.shape->empty() || samples.shape->front() != *out.batch_axis) {
      return unexpected(unfit(
          definition, fmt::format("its first output '{}' does not have the batch axis '{}' first",
                                  samples_name, *out.batch_axis)));
    }
    const Axis* axis = find_entry(definition.axes, *out.batch_axis);
    out.padding = axis != nullptr && axis->kind == AxisKind::var_axis ? BatchPadding::repeat
                                                                      : BatchPadding::none;
    for (const auto& [name, spec] : definition.inputs) {
      if (spec.shape && !spec.shape->empty() && spec.shape->front() == *out.batch_axis) {
        out.batched_inputs.push_back(name);
      }
    }
  }
  out.top_k = input_named(definition, "top_k");
  out.top_p = input_named(definition, "top_p");
  out.min_p = input_named(definition, "min_p");
  return out;
}

bool is_sampler(const Definition& definition) {
  return definition.op_type == "sampling" && sampling_layout(definition).has_value();
}

std::string filter_name(const SamplingLayout& layout) {
  std::vector<std::string_view> parts;
  for (const auto& [name, present] :
       {std::pair{"top_k", layout.top_k.has_value()}, std::pair{"top_p", layout.top_p.has_value()},
        std::pair{"min_p", layout.min_p.has_value()}}) {
    if (present) {
      parts.emplace_back(name);
    }
  }
  return parts.empty() ? std::string("none") : fmt::format("{}", fmt::join(parts, "_"));
}

Expected<SamplingRows> sampling_rows(const SamplingLayout& layout,
                                     const std::filesystem::path& inputs, const Json& scalars) {
  FIB_TRY_ASSIGN(SafetensorsHeader header, read_safetensors_header(inputs));
  const auto entry = header.tensors.find(layout.distribution);
  if (entry == header.tensors.end() || entry->second.shape.empty() ||
      entry->second.shape.size() > 2) {
    return unexpected(
        make_diagnostic(codes::k_blob_malformed,
                        fmt::format("the call's inputs have no '{}' of one or two dimensions",
                                    layout.distribution)));
  }
  const auto& shape = entry->second.shape;
  SamplingRows out;
  out.vocab = static_cast<std::size_t>(shape.back());
  out.rows = shape.size() == 2 ? static_cast<std::size_t>(shape.front()) : 1;
  FIB_TRY_ASSIGN(out.expected,
                 read_tensor_values(inputs, header, layout.distribution, k_max_compared_elements));
  out.allowed.assign(out.expected.size(), 0);
  std::vector<std::vector<double>> values(3);
  const std::optional<std::string>* names[] = {&layout.top_k, &layout.top_p, &layout.min_p};
  for (std::size_t f = 0; f < 3; ++f) {
    if (names[f]->has_value()) {
      FIB_TRY_ASSIGN(values[f], filter_values(**names[f], inputs, header, scalars, out.rows));
    }
  }
  std::vector<double> q(out.vocab);
  for (std::size_t r = 0; r < out.rows; ++r) {
    double* row = out.expected.data() + r * out.vocab;
    normalize_row(row, out.vocab, layout.source);
    std::copy(row, row + out.vocab, q.begin());
    RowFilters filters;
    if (!values[0].empty()) {
      filters.top_k = values[0][r];
    }
    if (!values[1].empty()) {
      filters.top_p = values[1][r];
    }
    if (!values[2].empty()) {
      filters.min_p = values[2][r];
    }
    filter_row(q.data(), out.vocab, filters, row, out.allowed.data() + r * out.vocab);
  }
  return out;
}

OutputComparison check_samples(const SamplingRows& rows, const std::filesystem::path& samples,
                               const std::string& key, std::string_view filters,
                               SampleCalls calls) {
  OutputComparison out;
  auto read = read_samples(samples, key);
  if (!read) {
    out.unreadable = "the solution's samples: " + read.error().message;
    return out;
  }
  const std::vector<double>* values = &read->values;
  const std::vector<std::int64_t>& shape = read->shape;
  if (rows.rows == 0 || values->size() % rows.rows != 0) {
    out.unreadable =
        fmt::format("the solution's samples: {} values for {} rows", values->size(), rows.rows);
    return out;
  }
  const auto vocab = static_cast<double>(rows.vocab);
  std::vector<std::int64_t> out_of_range;
  for (double value : *values) {
    if (!(value >= 0 && value < vocab) && out_of_range.size() < 16) {
      out_of_range.push_back(std::isfinite(value) ? static_cast<std::int64_t>(value) : -1);
    }
  }
  if (!out_of_range.empty()) {
    out.status = "INCORRECT_NUMERICAL";
    out.log = fmt::format("Samples [{}] out of vocabulary range [0, {})",
                          fmt::join(out_of_range, ", "), rows.vocab);
    return out;
  }
  // The tensor is [rows, ...] or [calls, rows, ...] (no rows dimension for a single row): the row
  // of a value is its position within the call divided by the values per row.
  const std::size_t first = calls == SampleCalls::stacked ? 1 : 0;
  std::size_t per_row = 1;
  if (rows.rows > 1) {
    if (shape.size() <= first || shape[first] != static_cast<std::int64_t>(rows.rows)) {
      out.unreadable = fmt::format("the solution's samples: shape [{}] does not have the {} rows",
                                   fmt::join(shape, ", "), rows.rows);
      return out;
    }
    for (std::size_t d = first + 1; d < shape.size(); ++d) {
      per_row *= static_cast<std::size_t>(shape[d]);
    }
  }
  for (std::size_t i = 0; i < values->size(); ++i) {
    const std::size_t row = rows.rows > 1 ? (i / per_row) % rows.rows : 0;
    const auto token = static_cast<std::size_t>((*values)[i]);
    if (rows.allowed[row * rows.vocab + token] == 0) {
      out.status = "INCORRECT_NUMERICAL";
      out.log = fmt::format("Sample {} is outside valid {} mask for batch {}", token, filters, row);
      return out;
    }
  }
  return out;
}

double log_chance_of_repeats(const SamplingRows& rows, std::uint64_t draws, std::uint64_t per_row) {
  double total = 0.0;
  for (std::size_t r = 0; r < rows.rows; ++r) {
    double chance = 0.0;
    for (std::size_t j = 0; j < rows.vocab; ++j) {
      chance += std::pow(rows.expected[r * rows.vocab + j], static_cast<double>(draws));
    }
    total += chance > 0 ? std::log(std::min(chance, 1.0)) : 0.0;
  }
  return static_cast<double>(per_row) * total;
}

OutputComparison check_repeats(const SamplingRows& rows, const std::filesystem::path& samples,
                               const std::string& key) {
  OutputComparison out;
  auto read = read_samples(samples, key);
  if (!read) {
    out.unreadable = "the solution's samples: " + read.error().message;
    return out;
  }
  const std::vector<double>* values = &read->values;
  const std::vector<std::int64_t>& shape = read->shape;
  const std::size_t calls = shape.empty() ? 0 : static_cast<std::size_t>(shape.front());
  if (calls < 2 || values->empty() || rows.rows == 0) {
    return out;
  }
  const std::size_t per_call = values->size() / calls;
  for (std::size_t i = per_call; i < values->size(); ++i) {
    if ((*values)[i] != (*values)[i % per_call]) {
      return out;
    }
  }
  const std::uint64_t per_row = std::max<std::uint64_t>(per_call / rows.rows, 1);
  const double chance = log_chance_of_repeats(rows, calls, per_row);
  if (chance < k_log_chance_of_reuse) {
    out.status = "INCORRECT_NUMERICAL";
    out.log = fmt::format("the {} calls on the same inputs returned the same samples every time, "
                          "which a sampler of these distributions does with a chance of 1 in "
                          "e^{:.0f}: samples reused across calls",
                          calls, -chance);
  }
  return out;
}

double expected_noise_distance(const double* distribution, std::size_t vocab,
                               std::uint64_t samples) {
  if (samples == 0) {
    return 0.0;
  }
  const auto n = static_cast<double>(samples);
  double total = 0.0;
  for (std::size_t j = 0; j < vocab; ++j) {
    const double p = distribution[j];
    if (!(p > 0 && p < 1)) {
      continue;
    }
    // de Moivre: E|X − np| = 2 k C(n, k) p^k (1 − p)^(n − k + 1), k = ⌊np⌋ + 1.
    const double k = std::floor(n * p) + 1;
    if (k > n) {
      continue;
    }
    const double log_mad =
        std::log(2.0 * k) + log_choose(n, k) + k * std::log(p) + (n - k + 1) * std::log1p(-p);
    total += std::exp(log_mad);
  }
  return 0.5 * total / n;
}

Expected<SamplingDistance> sampling_distance(const SamplingRows& rows,
                                             const std::filesystem::path& counts) {
  const auto malformed = [&](std::string what) {
    return unexpected(
        make_diagnostic(codes::k_blob_malformed, "the sample counts: " + std::move(what)));
  };
  FIB_TRY_ASSIGN(SafetensorsHeader header, read_safetensors_header(counts));
  for (const auto& [key, size] :
       {std::pair{"counts", rows.rows * rows.vocab}, std::pair{"out_of_range", rows.rows},
        std::pair{"drawn", std::size_t{1}}, std::pair{"repeated_calls", std::size_t{1}}}) {
    const auto entry = header.tensors.find(key);
    if (entry == header.tensors.end() || entry->second.element_count() != size) {
      return malformed(fmt::format("no '{}' of {} values", key, size));
    }
  }
  FIB_TRY_ASSIGN(std::vector<double> count,
                 read_tensor_values(counts, header, "counts", k_max_compared_elements));
  FIB_TRY_ASSIGN(std::vector<double> out_of_range,
                 read_tensor_values(counts, header, "out_of_range", rows.rows));
  FIB_TRY_ASSIGN(std::vector<double> drawn, read_tensor_values(counts, header, "drawn", 1));
  FIB_TRY_ASSIGN(std::vector<double> repeated,
                 read_tensor_values(counts, header, "repeated_calls", 1));
  if (!(drawn.front() >= 1 && drawn.front() < 9.0e15)) {
    return malformed(fmt::format("{:g} samples drawn per row", drawn.front()));
  }
  SamplingDistance out;
  out.samples_per_row = static_cast<std::uint64_t>(drawn.front());
  out.repeated_calls = repeated.front() > 0 ? static_cast<std::uint64_t>(repeated.front()) : 0;
  const double n = drawn.front();
  for (std::size_t r = 0; r < rows.rows; ++r) {
    const double* c = count.data() + r * rows.vocab;
    const double* e = rows.expected.data() + r * rows.vocab;
    const std::uint8_t* a = rows.allowed.data() + r * rows.vocab;
    double total = out_of_range[r];
    double distance = 0.0;
    for (std::size_t j = 0; j < rows.vocab; ++j) {
      if (!(c[j] >= 0)) {
        return malformed(fmt::format("a negative count in row {}", r));
      }
      total += c[j];
      const double difference = std::fabs(c[j] / n - e[j]);
      distance += difference;
      out.max_absolute_error = std::max(out.max_absolute_error, difference);
      out.max_relative_error = std::max(out.max_relative_error, difference / (e[j] + 1e-8));
      if (c[j] > 0 && a[j] == 0) {
        if (out.first_outside.empty()) {
          out.first_outside = fmt::format("token {} of row {}", j, r);
        }
        out.outside += static_cast<std::uint64_t>(c[j]);
      }
    }
    if (out_of_range[r] > 0) {
      if (out.first_outside.empty()) {
        out.first_outside = fmt::format("a token out of the vocabulary in row {}", r);
      }
      out.outside += static_cast<std::uint64_t>(out_of_range[r]);
      distance += out_of_range[r] / n;
    }
    if (total != n) {
      return malformed(fmt::format("row {} has {:g} samples, not the {:g} drawn", r, total, n));
    }
    out.distance.push_back(0.5 * distance);
    out.noise_floor.push_back(expected_noise_distance(e, rows.vocab, out.samples_per_row));
  }
  return out;
}

DistanceExcess worst_excess(const SamplingDistance& distance) {
  DistanceExcess out{-std::numeric_limits<double>::infinity(), 0};
  for (std::size_t r = 0; r < distance.distance.size(); ++r) {
    const double excess = distance.distance[r] - distance.noise_floor[r];
    if (excess > out.excess) {
      out = DistanceExcess{excess, r};
    }
  }
  return distance.distance.empty() ? DistanceExcess{} : out;
}

} // namespace fib
