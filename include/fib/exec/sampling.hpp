#pragma once
// The sampling evaluator's judging (docs/run.md, "Sampling kernels"), in fib itself: a sampling
// kernel draws tokens at random, so its outputs cannot be compared value by value with the
// reference's. fib derives, from the inputs of a call, the distribution each row is sampled from
// (the probabilities after the kernel's top-k, top-p and min-p filters) and the tokens a sample
// may take (that support with a tolerance at the filters' edges), then judges the samples the
// solution drew: every one inside its row's support, and their frequencies within a total
// variation distance of the expected distribution, beyond the distance that sampling noise alone
// gives.

#include <fib/base/expected.hpp>
#include <fib/exec/compare.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/definition.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// What the distribution input holds: probabilities (rows summing to 1) or logits (softmax gives
// the probabilities).
enum class SamplingSource { probabilities, logits };

// Whether the solution is called on a larger batch (the workload's rows repeated) to draw many
// samples per call: only when the batch axis is a var axis.
enum class BatchPadding { none, repeat };

// How a sampling definition's tensors are laid out, from the definition alone.
struct SamplingLayout {
  std::string distribution; // the input "probs" or "logits": [vocab] or [batch, vocab]
  SamplingSource source = SamplingSource::probabilities;
  std::size_t samples_output = 0;          // the first output: integer token ids
  std::optional<std::string> batch_axis;   // the distribution's first axis when it has two
  std::vector<std::string> batched_inputs; // tensor inputs whose first axis is the batch axis
  BatchPadding padding = BatchPadding::none;
  // The filters, by the inputs the definition has: top_k (keep the k most likely tokens; k <= 0
  // or k >= vocab keeps all), top_p (then the smallest set of the most likely whose mass reaches
  // p, on the probabilities renormalized after top-k; p <= 0 keeps the most likely token, p >= 1
  // all) and min_p (then the tokens at least min_p times as likely as the most likely).
  std::optional<std::string> top_k;
  std::optional<std::string> top_p;
  std::optional<std::string> min_p;
};

// The layout of `definition`, or why the sampling evaluator cannot judge it
// (`run.evaluator-unfit`): no input named "probs" or "logits" of one or two dimensions, a first
// output that is not an integer tensor with the distribution's batch axis first, or an `indices`
// input (rows chosen by index, which fib does not model).
Expected<SamplingLayout> sampling_layout(const Definition& definition);

// Whether the automatic evaluator choice takes the sampling evaluator: op_type "sampling" and a
// layout (renorm, mask and softmax kernels of that op_type are judged value by value).
bool is_sampler(const Definition& definition);

// The tolerance at the filters' edges, as the old tool has it: a sample is accepted when the mass
// of the tokens more likely than it is at most top_p + 0.05 (on the probabilities before top-k),
// or when it is at least (1 - 0.05) * min_p times as likely as the most likely token.
inline constexpr double k_sampling_edge_tolerance = 5e-2;

// The rows of one call's inputs, as fib derives them: rows × vocab values each, row-major.
struct SamplingRows {
  std::size_t rows = 0;
  std::size_t vocab = 0;
  std::vector<double> expected;      // the distribution after the filters (sums to 1 per row)
  std::vector<std::uint8_t> allowed; // 1 where a sample is accepted (the support, with tolerance)
};

// The rows of the call whose tensor inputs are in the safetensors file `inputs` (by input name)
// and whose scalar inputs are `scalars` ({name: value}). A filter's value is a scalar, or a
// tensor of one value or of one per row. Errors (`blob.*`, `io.too-large` above
// k_max_compared_elements values): the file or a tensor cannot be read, a filter has another
// number of values, the distribution input is missing.
Expected<SamplingRows> sampling_rows(const SamplingLayout& layout,
                                     const std::filesystem::path& inputs, const Json& scalars);

// The samples of tensor `key` of the safetensors file `samples` checked against `rows`: the
// tensor holds one or more calls' samples, each call's in the definition's output shape (the
// rows first, or a single row): "" status when every sample is a token of its row's support,
// else INCORRECT_NUMERICAL with the first offence as the old tool words it ("Samples [..] out of
// vocabulary range [0, V)", "Sample t is outside valid top_k_top_p mask for batch b", with
// `filters` the filter_name). The tensor is one call's output, [rows, ...], or with
// SampleCalls::stacked several calls', [calls, rows, ...] (without the rows dimension for a single
// row). `unreadable` when the file or tensor cannot be read, or has another number of rows.
enum class SampleCalls { one, stacked };
OutputComparison check_samples(const SamplingRows& rows, const std::filesystem::path& samples,
                               const std::string& key, std::string_view filters, SampleCalls calls);

// The natural logarithm of the chance that a sampler of `rows` draws the same token `draws` times
// in a row for each of `per_row` samples of every row: per_row × Σ_rows ln Σ_j p_j^draws (0 when
// every row is certain, as after top-k 1).
double log_chance_of_repeats(const SamplingRows& rows, std::uint64_t draws, std::uint64_t per_row);

// Below this chance (one in a billion) samples that repeat are taken for reused ones.
inline constexpr double k_log_chance_of_reuse = -20.7232658369; // ln 1e-9

// The stacked samples of several calls on the same inputs (tensor `key` of `samples`, [calls,
// rows, ...]) checked for reuse: INCORRECT_NUMERICAL when every call returned the very samples of
// the first and a sampler of `rows` does that with a chance below k_log_chance_of_reuse; ""
// status otherwise (fewer than two calls too). `unreadable` as check_samples.
OutputComparison check_repeats(const SamplingRows& rows, const std::filesystem::path& samples,
                               const std::string& key);

// The name of the filters for messages: "top_k_top_p", "top_k", "top_p", "min_p", "none", ...
std::string filter_name(const SamplingLayout& layout);

// The expected total variation distance between `samples` draws from `distribution` (`vocab`
// probabilities summing to 1) and the distribution itself: ½ Σ E|X_j/n − p_j| with X_j binomial
// (exact, by de Moivre's formula for the binomial's mean absolute deviation). What a perfect
// sampler scores by chance; 0 for no samples.
double expected_noise_distance(const double* distribution, std::size_t vocab,
                               std::uint64_t samples);

// How far a solution's sample counts are from the expected distributions.
struct SamplingDistance {
  std::vector<double> distance;    // per row: ½ Σ |frequency − expected|
  std::vector<double> noise_floor; // per row: expected_noise_distance for the samples drawn
  std::uint64_t samples_per_row = 0;
  double max_absolute_error = 0.0; // max |frequency − expected|
  double max_relative_error = 0.0; // max |frequency − expected| / (expected + 1e-8)
  // Samples outside a row's support (allowed == 0) or out of the vocabulary, with an example.
  std::uint64_t outside = 0;
  std::string first_outside; // "token t of row b" for the first one; "" when none
  // The calls that returned exactly the samples of the call before them.
  std::uint64_t repeated_calls = 0;
};

// Reads the counts the solution's worker made of its samples (safetensors: "counts" I64 [rows,
// vocab], "out_of_range" I64 [rows], "drawn" I64 [1], the samples per row, "repeated_calls" I64
// [1], the calls whose samples equal the previous call's) and measures them
// against `rows`. Errors (`blob.*`): unreadable tensors, other shapes, negative counts, or counts
// that do not add up to the samples drawn.
Expected<SamplingDistance> sampling_distance(const SamplingRows& rows,
                                             const std::filesystem::path& counts);

// The largest distance beyond the noise floor over the rows (distance − noise_floor), and its
// row.
struct DistanceExcess {
  double excess = 0.0;
  std::size_t row = 0;
};
DistanceExcess worst_excess(const SamplingDistance& distance);

} // namespace fib
