#include "timed_calls.hpp"

#include "evaluation_steps.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/safetensors.hpp>
#include <fib/util/sha256.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sys/random.h>

namespace fib::detail {
namespace {

std::optional<std::array<char, 16>> key_bytes(const std::string& hex) {
  if (hex.size() != 32) {
    return std::nullopt;
  }
  std::array<char, 16> out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    unsigned value = 0;
    for (char c : {hex[2 * i], hex[2 * i + 1]}) {
      value <<= 4U;
      if (c >= '0' && c <= '9') {
        value |= static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        value |= static_cast<unsigned>(c - 'a' + 10);
      } else {
        return std::nullopt;
      }
    }
    out[i] = static_cast<char>(value);
  }
  return out;
}

std::string little_endian(std::uint64_t value) {
  std::string out(8, '\0');
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<char>((value >> (8 * i)) & 0xffU);
  }
  return out;
}

// Bytes from the kernel's random source, which nothing in a worker can predict from what it
// saw before (unlike a seeded generator's later outputs).
void secret_bytes(void* out, std::size_t size) {
  auto* bytes = static_cast<unsigned char*>(out);
  while (size > 0) {
    const ssize_t n = ::getrandom(bytes, size, 0);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      std::abort(); // getrandom(2) cannot fail otherwise on Linux >= 3.17
    }
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
}

} // namespace

std::uint64_t secret_seed() {
  std::uint32_t value = 0;
  secret_bytes(&value, sizeof value);
  return value;
}

std::string secret_key_hex() {
  std::array<unsigned char, 16> key{};
  secret_bytes(key.data(), key.size());
  std::string out;
  for (unsigned char byte : key) {
    out += fmt::format("{:02x}", byte);
  }
  return out;
}

bool is_commitment(const Json& value) {
  if (!value.is_string()) {
    return false;
  }
  const auto& text = value.get_ref<const std::string&>();
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

Expected<std::string> commitment_of(const std::filesystem::path& file,
                                    const std::vector<std::string>& keys,
                                    const std::string& key_hex, std::uint64_t* bytes) {
  const auto key = key_bytes(key_hex);
  if (!key) {
    return unexpected(make_diagnostic(codes::k_worker_protocol, "a commitment key is malformed"));
  }
  FIB_TRY_ASSIGN(SafetensorsHeader header, read_safetensors_header(file));
  std::vector<std::string> tensors;
  std::uint64_t fold = 0;
  std::uint64_t total = 0;
  for (const std::string& name : keys) {
    FIB_TRY_ASSIGN(std::string data,
                   read_tensor_bytes(file, header, name, std::nullopt, std::uint64_t{16} << 30));
    for (std::size_t at = 0; at < data.size(); at += 8) {
      std::uint64_t word = 0;
      for (std::size_t i = 0; i < 8 && at + i < data.size(); ++i) {
        word |= std::uint64_t{static_cast<unsigned char>(data[at + i])} << (8 * i);
      }
      fold += word; // modulo 2^64
    }
    total += data.size();
    tensors.push_back(std::move(data));
  }
  std::string head(key->data(), key->size());
  head += little_endian(fold);
  Sha256 digest;
  digest.update(head);
  for (const std::string& data : tensors) {
    digest.update(little_endian(data.size()));
    for (std::size_t at = 0; at < data.size(); at += k_commit_piece) {
      Sha256 piece;
      piece.update(head).update(std::string_view(data).substr(at, k_commit_piece));
      const Sha256Digest leaf = piece.finish();
      digest.update(std::string_view(reinterpret_cast<const char*>(leaf.data()), leaf.size()));
    }
  }
  if (bytes != nullptr) {
    *bytes = total;
  }
  return to_hex(digest.finish());
}

std::optional<std::string> commitment_problem(const TimedCalls& timing, std::size_t call,
                                              const std::filesystem::path& file,
                                              const std::vector<std::string>& keys,
                                              std::uint64_t& bytes) {
  if (call >= timing.commits.size() || call >= timing.keys.size()) {
    return fmt::format("timed call {} has no commitment", call);
  }
  auto commitment = commitment_of(file, keys, timing.keys[call], &bytes);
  if (!commitment) {
    return fmt::format("the outputs kept of timed call {} cannot be read: {}", call,
                       commitment.error().message);
  }
  if (*commitment != timing.commits[call]) {
    return fmt::format("timed call {} said \"done\" with a commitment that does not match the "
                       "outputs it kept: they were not complete when fib's clock stopped",
                       call);
  }
  return std::nullopt;
}

double commitment_seconds(const CommitmentCost& cost, std::uint64_t bytes) {
  if (cost.empty()) {
    return 0.0;
  }
  if (bytes <= cost.front().first || cost.size() == 1) {
    return cost.front().second;
  }
  std::size_t upper = 1;
  while (upper + 1 < cost.size() && cost[upper].first < bytes) {
    ++upper;
  }
  const auto [low_bytes, low_seconds] = cost[upper - 1];
  const auto [high_bytes, high_seconds] = cost[upper];
  const double slope = (high_seconds - low_seconds) / static_cast<double>(high_bytes - low_bytes);
  return std::max(low_seconds + slope * static_cast<double>(bytes - low_bytes), 0.0);
}

CommitmentCost commitment_cost_of(const std::optional<WorkerInfo>& info) {
  return info ? info->commit_cost : CommitmentCost{};
}

CallLatencies call_latencies(const TimedCalls& timing,
                             const std::vector<std::uint64_t>& output_bytes,
                             const CommitmentCost& commitment,
                             const std::vector<double>* reference_prep_ms) {
  CallLatencies out;
  std::vector<double> overheads;
  for (std::size_t i = 0; i < timing.fib_ms.size(); ++i) {
    const double fib = timing.fib_ms[i];
    const double beyond_call = std::max(fib - timing.reported_ms[i], 0.0);
    const double cost =
        1e3 * commitment_seconds(commitment, i < output_bytes.size() ? output_bytes[i] : 0);
    const double subtracted = std::min(cost, beyond_call);
    double excess = 0.0;
    if (reference_prep_ms != nullptr && i < reference_prep_ms->size() &&
        i < timing.prep_ms.size()) {
      excess = std::max(timing.prep_ms[i] - (1.5 * (*reference_prep_ms)[i] + 0.25), 0.0);
    }
    if (excess > 0) {
      out.prep_excess_ms += excess;
      ++out.charged_calls;
    }
    out.ms.push_back(fib - subtracted + excess);
    overheads.push_back(beyond_call - subtracted);
  }
  out.overhead_ms = overheads.empty() ? 0.0 : median(std::move(overheads));
  return out;
}

double plausibility_floor_ms(std::uint64_t bytes,
                             const std::vector<std::pair<std::uint64_t, double>>& copy_bandwidth) {
  if (copy_bandwidth.empty() || bytes == 0) {
    return 0.0;
  }
  double bytes_per_second = copy_bandwidth.back().second;
  for (const auto& [size, rate] : copy_bandwidth) {
    if (2 * size >= bytes) { // a copy of `size` moves twice that
      bytes_per_second = rate;
      break;
    }
  }
  return 1000.0 * static_cast<double>(bytes) / bytes_per_second / k_plausibility_headroom;
}

std::array<double, 5> quartiles(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const auto at = [&](double q) {
    const double position = q * static_cast<double>(values.size() - 1);
    const auto below = static_cast<std::size_t>(position);
    const std::size_t above = std::min(below + 1, values.size() - 1);
    return values[below] +
           (values[above] - values[below]) * (position - static_cast<double>(below));
  };
  return {values.front(), at(0.25), at(0.5), at(0.75), values.back()};
}

Json performance_extra(const std::array<double, 5>& quartiles, std::size_t calls, double floor_ms) {
  Json extra{{"timed_calls", calls},
             {"latency_min_ms", quartiles[0]},
             {"latency_q1_ms", quartiles[1]},
             {"latency_q3_ms", quartiles[3]},
             {"latency_max_ms", quartiles[4]}};
  if (floor_ms > 0) {
    extra["plausibility_floor_ms"] = floor_ms;
    if (quartiles[2] < floor_ms) {
      extra["implausible"] = true;
    }
  }
  return extra;
}

double median_ci_relative(const std::vector<double>& ms) {
  if (ms.empty()) {
    return std::numeric_limits<double>::infinity();
  }
  const std::array<double, 5> q = quartiles(ms);
  if (q[2] <= 0) {
    return std::numeric_limits<double>::infinity();
  }
  return 1.57 * (q[3] - q[1]) / std::sqrt(static_cast<double>(ms.size())) / q[2];
}

bool should_stop(const std::vector<double>& ms, double relative) {
  return ms.size() >= k_min_calls_before_stop && median_ci_relative(ms) <= relative;
}

void add_split_timing(Json& extra, const std::vector<double>& latencies,
                      const std::vector<double>& setup_ms) {
  if (setup_ms.empty() || setup_ms.size() != latencies.size()) {
    return;
  }
  std::vector<double> kernel;
  for (std::size_t i = 0; i < latencies.size(); ++i) {
    kernel.push_back(std::max(0.0, latencies[i] - setup_ms[i]));
  }
  extra["kernel_latency_ms"] = median(std::move(kernel));
  extra["setup_latency_ms"] = median(setup_ms);
}

// --- WorkerProcess's side of the timed calls (the protocol's rounds, worker_process.hpp) ---

using Clock = std::chrono::steady_clock;

// A timing message of the worker during a job. Each call goes "prepare" (answered with its seed;
// the preparation's clock starts), "ready" (answered with "go" and a fresh key; fib's clock
// starts), "done" with the worker's own measurement and the commitment to the outputs (fib's
// clock stops; answered with "keep"), with "setup" between "go" and "done" where the solution has
// a setup() (not answered). A protocol error outcome when a message is out of order,
// malformed, beyond the job's `max_calls`, or comes while fib's answer is still unread.
std::optional<ReferenceOutcome> WorkerProcess::answer_timing(const Json& message, std::uint64_t id,
                                                             TimingRound& round, TimedCalls& timing,
                                                             CallState& call) {
  const std::string step = string_field(message, "timing");
  const Json iteration = field(message, "iteration");
  const Json reported = field(message, "ms");
  // In turn: this call's, within the job's calls, and (but for "setup", which fib does not
  // answer) with nothing more already sent behind it while fib's answer is due.
  const bool this_call = iteration.is_number_integer() && iteration.get<std::int64_t>() >= 0 &&
                         iteration.get<std::uint64_t>() == timing.fib_ms.size() &&
                         timing.fib_ms.size() < round.max_calls;
  const bool in_order = this_call && m_buffer.empty();
  const std::size_t index = timing.fib_ms.size();
  if (step == "prepare" && in_order && call.phase == CallPhase::none) {
    call = {CallPhase::preparing, Clock::now(), std::nullopt};
    const std::optional<std::uint64_t> seed =
        index < round.seeds.size() ? round.seeds[index] : std::nullopt;
    timing.seeds.push_back(seed);
    Json answer{{"id", id}, {"seed", seed ? Json(*seed) : Json()}};
    return send_timing_answer(answer, round.deadline);
  }
  if (step == "ready" && in_order && call.phase == CallPhase::preparing) {
    timing.prep_ms.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - call.since).count());
    timing.keys.push_back(secret_key_hex());
    Json answer{{"go", iteration}, {"id", id}, {"key", timing.keys.back()}};
    call = {CallPhase::timing, Clock::now(), std::nullopt};
    return send_timing_answer(answer, round.deadline);
  }
  if (step == "setup" && this_call && call.phase == CallPhase::timing && !call.setup_done &&
      timing.setup_ms.size() == index) {
    call.setup_done = Clock::now(); // said, not answered: the call goes on
    return std::nullopt;
  }
  if (step == "done" && in_order && call.phase == CallPhase::timing && reported.is_number() &&
      reported.get<double>() >= 0.0 && is_commitment(field(message, "commit"))) {
    const auto elapsed = Clock::now() - call.since;
    timing.fib_ms.push_back(std::chrono::duration<double, std::milli>(elapsed).count());
    if (call.setup_done) {
      timing.setup_ms.push_back(
          std::chrono::duration<double, std::milli>(*call.setup_done - call.since).count());
    }
    timing.reported_ms.push_back(reported.get<double>());
    timing.commits.push_back(field(message, "commit").get<std::string>());
    call = {};
    Json answer{{"id", id}, {"keep", true}};
    if (round.stop_at_ci && should_stop(timing.fib_ms, *round.stop_at_ci)) {
      // No call past this one: a "prepare" after it is out of order.
      answer["stop"] = true;
      timing.stopped = true;
      round.max_calls = timing.fib_ms.size();
    }
    return send_timing_answer(answer, round.deadline);
  }
  kill_tree();
  return failure(codes::k_worker_protocol,
                 role() + " sent an unexpected timing message: " + text_excerpt(message.dump()));
}

// The timed calls a job asks for: their number (its `iterations`), the seed of each (the
// request's `timed_seeds`, else a secret one per call where it varies inputs) and fib's adaptive
// stop (`stop_at_ci`); both keys are taken out of the request, so the worker never sees them.
WorkerProcess::TimingRound WorkerProcess::timing_round(Json& request, Clock::time_point deadline) {
  const Json iterations = field(request, "iterations");
  TimingRound round;
  round.deadline = deadline;
  round.max_calls =
      iterations.is_number_integer()
          ? static_cast<std::size_t>(std::max<std::int64_t>(iterations.get<std::int64_t>(), 1))
          : 0;
  const Json given_seeds = field(request, "timed_seeds");
  const Json fresh = field(request, "fresh_inputs");
  for (std::size_t i = 0; i < round.max_calls; ++i) {
    if (given_seeds.is_array()) {
      const bool usable = i < given_seeds.size() && given_seeds[i].is_number_unsigned();
      round.seeds.push_back(usable ? std::optional(given_seeds[i].get<std::uint64_t>())
                                   : std::nullopt);
    } else if (fresh.is_object() && !fresh.empty()) {
      round.seeds.push_back(secret_seed());
    } else {
      round.seeds.push_back(std::nullopt);
    }
  }
  request.erase("timed_seeds");
  if (const Json stop = field(request, "stop_at_ci"); stop.is_number()) {
    round.stop_at_ci = stop.get<double>(); // fib's to decide: the worker only hears "stop"
  }
  request.erase("stop_at_ci");
  return round;
}

} // namespace fib::detail
