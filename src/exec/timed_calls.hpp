#pragma once
// fib's judging of a job's timed calls (internal to the exec layer; docs/execution.md, "Trust
// model"). The worker that made them is the untrusted code's process, harness included, so
// nothing here takes its word: a call counts only when the commitment it sent with "done" matches
// the outputs it kept, and its latency is fib's interval less what fib itself knows the
// commitment costs, plus whatever the call's preparation took beyond the reference's.

#include "worker_process.hpp"

#include <fib/base/expected.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fib::detail {

// A secret seed for one timed call's fresh input values, from the kernel's random source (which
// nothing in a worker can predict from what it saw before); below 2^32, since torch's CPU
// generator keeps only the low 32 bits of a seed.
std::uint64_t secret_seed();

// A secret 128-bit key for one timed call's commitment, as 32 lowercase hexadecimal digits.
std::string secret_key_hex();

// Whether `value` is a commitment as a worker sends it: 64 lowercase hexadecimal digits.
bool is_commitment(const Json& value);

// The size of the pieces a commitment hashes one by one (the worker hashes them on several
// threads where it has the cores).
inline constexpr std::size_t k_commit_piece = std::size_t{1} << 20;

// The commitment to the tensors `keys` (in that order) of the safetensors file `file` under
// `key_hex` (32 hexadecimal digits). With head = the key's 16 bytes then the fold (the sum
// modulo 2^64 of every tensor's little-endian 64-bit words, each tensor's last word padded with
// zero bytes, as 8 little-endian bytes): SHA-256 of head, then for each tensor its byte length
// (8 bytes, little endian) and SHA-256(head, piece) of each of its k_commit_piece pieces. The
// fold needs every byte and every piece's hash needs the fold, so a worker can compute no part
// of it before the outputs are complete: it cannot hide the hashing inside its call, which
// matters because fib subtracts the commitment's cost. What the worker's "done" must carry for
// the call whose outputs the file holds; `bytes`, when given, receives the tensors' total size.
// Errors: the file's own (unreadable, malformed, a key missing).
Expected<std::string> commitment_of(const std::filesystem::path& file,
                                    const std::vector<std::string>& keys,
                                    const std::string& key_hex, std::uint64_t* bytes = nullptr);

// Why a kept call's commitment does not hold, or nullopt: its file (from the worker's job
// directory, copied by fib) and the keys of its tensors in order.
std::optional<std::string> commitment_problem(const TimedCalls& timing, std::size_t call,
                                              const std::filesystem::path& file,
                                              const std::vector<std::string>& keys,
                                              std::uint64_t& bytes);

// The latencies fib records for a job's timed calls, in milliseconds.
struct CallLatencies {
  std::vector<double> ms;    // per call: see call_latencies
  double overhead_ms = 0.0;  // median of what fib's interval had beyond the call and commitment
  double prep_excess_ms = 0; // the preparation time added, summed over the calls
  std::size_t charged_calls = 0;
};

// What the worker's commitment to `bytes` of outputs costs, in seconds, by its greeting's table
// (WorkerInfo::commit_cost, measured before any untrusted code ran): linear between the measured
// sizes, the first size's figure below it, the last two sizes' line beyond them; 0 when nothing
// was measured.
using CommitmentCost = std::vector<std::pair<std::uint64_t, double>>;
double commitment_seconds(const CommitmentCost& cost, std::uint64_t bytes);
CommitmentCost commitment_cost_of(const std::optional<WorkerInfo>& info);

// Per call: fib's interval, less the commitment's cost (commitment_seconds for the call's output
// bytes, never more than fib's interval beyond what the worker reported for the call alone),
// plus, when `reference_prep_ms` is given (the reference's preparations of the same calls: the same
// seeds, the same inputs), the time the call's preparation took beyond 1.5 times the reference's +
// 0.25 ms: work done before fib's "go" on inputs already known. `output_bytes` has one entry per
// call.
CallLatencies call_latencies(const TimedCalls& timing,
                             const std::vector<std::uint64_t>& output_bytes,
                             const CommitmentCost& cost,
                             const std::vector<double>* reference_prep_ms);

// The plausibility floor of a call that moves `bytes` (reads and writes at least once): the time
// this device takes to copy that much at the bandwidth its worker measured for the smallest size
// that holds it (the largest measured size beyond that), divided by k_plausibility_headroom (a
// kernel may beat torch's copy: wider stores, more threads). 0 when nothing was measured.
inline constexpr double k_plausibility_headroom = 2.0;
double plausibility_floor_ms(std::uint64_t bytes,
                             const std::vector<std::pair<std::uint64_t, double>>& copy_bandwidth);

// The quartiles of `values` (not empty), linearly interpolated: {min, q1, median, q3, max}.
std::array<double, 5> quartiles(std::vector<double> values);

// A solution with a setup() (`setup_ms` has one entry per call of `latencies`): latency_ms is
// end to end (setup and run, what flashinfer-bench's split timing calls e2e), and the run alone
// is its kernel time. Adds "kernel_latency_ms" (the median of each call's latency less its
// setup) and "setup_latency_ms" to `extra`; nothing otherwise.
void add_split_timing(Json& extra, const std::vector<double>& latencies,
                      const std::vector<double>& setup_ms);

// The adaptive stop (--stop-at-ci): whether the timed calls so far (`ms`, fib's intervals) pin
// their median down well enough to stop. True from k_min_calls_before_stop calls on, once the
// half-width of the median's 95% confidence interval, estimated as 1.57 × IQR / √n (the notch of
// a box plot, McGill, Tukey and Larsen 1978), is at most `relative` × the median.
inline constexpr std::size_t k_min_calls_before_stop = 5;
double median_ci_relative(const std::vector<double>& ms);
bool should_stop(const std::vector<double>& ms, double relative);

// A PASSED evaluation's performance.extra: the timed calls' count and quartiles (from
// quartiles()) and the plausibility floor when there is one, with "implausible": true when the
// median is under it.
Json performance_extra(const std::array<double, 5>& quartiles, std::size_t calls, double floor_ms);

} // namespace fib::detail
