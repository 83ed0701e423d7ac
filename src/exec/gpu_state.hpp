#pragma once
// The state of a GPU while it was timed (internal to the exec layer): its clocks, power,
// temperature and the reasons its clocks are held down, read by fib itself through NVML (the
// driver's libnvidia-ml.so.1, opened at run time: nothing to link, absent on machines without an
// NVIDIA driver). A throttled GPU makes every latency on it slower, so the trace says so.

#include <fib/io/json_io.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fib::detail {

struct GpuState {
  unsigned sm_clock_mhz = 0;
  unsigned max_sm_clock_mhz = 0;
  unsigned memory_clock_mhz = 0;
  double power_w = 0.0;
  double power_limit_w = 0.0;
  unsigned temperature_c = 0;
  std::uint64_t throttle_reasons = 0; // NVML's clocks-event (throttle) reason bits
};

// The names of NVML's throttle reason bits in `mask` ("gpu_idle", "sw_power_cap",
// "hw_slowdown", "sw_thermal_slowdown", ...; "unknown_0x…" for a bit NVML has no name for).
std::vector<std::string> throttle_reason_names(std::uint64_t mask);

// {"sm_clock_mhz", "max_sm_clock_mhz", "memory_clock_mhz", "power_w", "power_limit_w",
//  "temperature_c", "throttle_reasons": [names]}: the trace's environment.device_state.
Json to_json(const GpuState& state);

// The NVML index of CUDA device `cuda_index` as this process sees it: its entry in
// CUDA_VISIBLE_DEVICES when that is a list of numbers, else `cuda_index` itself.
unsigned nvml_index_of(unsigned cuda_index, const std::string& visible_devices);

// GPU `nvml_index`'s state now; nullopt where NVML is absent or cannot read it.
std::optional<GpuState> read_gpu_state(unsigned nvml_index);

} // namespace fib::detail
