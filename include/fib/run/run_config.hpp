#pragma once
// `fib run --config FILE`: evaluation settings per op_type and per definition (docs/run.md,
// "Settings per definition"), in JSON or TOML, in the layout of the old tool's eval_config.yaml:
//
//   num_trials = 3                      # the whole file
//   [op_type_config.moe]
//   required_matched_ratio = 0.95
//   [definition_config.gemm_n_6144_k_4096]
//   atol = 1e-3
//
// Settings resolve, lowest first: fib's defaults, the file's top level, op_type_config of the
// definition's op_type, definition_config of its name, then the flags given on the command line.

#include <fib/base/diagnostic.hpp>
#include <fib/base/enum_names.hpp>
#include <fib/exec/compare.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/model/definition.hpp>

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

// How the evaluator of a definition is chosen: automatic from the definition (evaluator_for), or
// the one named.
enum class EvaluatorChoice { automatic, standard, low_bit, sampling };

template <> struct EnumNames<EvaluatorChoice> {
  static constexpr std::array k_table = std::to_array<EnumName<EvaluatorChoice>>({
      {EvaluatorChoice::automatic, "auto"},
      {EvaluatorChoice::standard, "standard"},
      {EvaluatorChoice::low_bit, "low-bit"},
      {EvaluatorChoice::sampling, "sampling"},
  });
};

// One layer of settings: what it leaves empty, the layer below decides.
struct EvaluationOverrides {
  std::optional<int> warmup;                    // file key warmup_runs, 0..100000
  std::optional<int> iterations;                // 1..100000
  std::optional<int> trials;                    // file key num_trials, 1..1000
  std::optional<double> atol;                   // >= 0
  std::optional<double> rtol;                   // >= 0
  std::optional<double> required_matched_ratio; // in (0, 1]
  std::optional<ToleranceTable> tolerance;      // file key tolerance: "fixed" or "per-dtype"
  std::optional<EvaluatorChoice> evaluator;     // "auto", "standard", "low-bit" or "sampling"
  std::optional<ColdCache> cold_cache;          // file key cold_cache: a boolean
  std::optional<double> stop_at_ci;             // in (0, 1)
  // The sampling evaluator's settings, under the file's `extra` as the old tool has them.
  std::optional<int> sampling_validation_trials; // 1..100000
  std::optional<double> sampling_tvd_threshold;  // in [0, 1]
  std::optional<std::int64_t> sampling_samples;  // samples per row, 1..100000000
};

// A settings file as read.
struct RunConfig {
  std::filesystem::path file; // empty: no file
  // Top level only: the bytes each worker may write into its scratch (what --scratch-limit sets,
  // which wins over it), at least 1 MiB.
  std::optional<std::uint64_t> scratch_limit;
  EvaluationOverrides all;
  std::map<std::string, EvaluationOverrides> op_types;    // op_type_config
  std::map<std::string, EvaluationOverrides> definitions; // definition_config
};

// Reads a settings file: TOML when its name ends in ".toml", else JSON (at most 4 MiB; a ".yaml"
// or ".yml" name, the old tool's format, is refused with a message saying so). Every
// problem is reported to `sink` as `run.config-invalid` with the file and the JSON pointer of the
// value (TOML's tables as objects): unreadable text, an unknown key (with the closest known one),
// a value of the wrong type or out of range. The old tool's run options (timeout_seconds,
// definitions, solutions, ...) are errors that name the flag to use instead. `extra` holds the
// sampling evaluator's settings (sampling_validation_trials, sampling_tvd_threshold, and fib's
// sampling_samples). `scratch_limit` (bytes) is read at the top level only. nullopt when some
// error was reported.
std::optional<RunConfig> load_run_config(const std::filesystem::path& file, DiagnosticSink& sink);

// The evaluator of a definition when none is named: sampling for samplers (is_sampler: op_type
// "sampling" with a probs or logits input and integer samples), low_bit for quantized kernels
// (op_type "moe", a tag starting with "quant:" or "quantization:", or an input or output of a
// float8 or float4 dtype), standard for the others.
Evaluator evaluator_for(const Definition& definition);

// The settings of `definition`: `base` with each layer of `config` applied in order, then
// `command_line`. The evaluator is evaluator_for(definition) unless a layer names one; low_bit
// without a required matched ratio gets k_default_low_bit_matched_ratio.
EvaluateOptions evaluation_for(const EvaluateOptions& base, const RunConfig& config,
                               const EvaluationOverrides& command_line,
                               const Definition& definition);

} // namespace fib
