#include "gpu_state.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <dlfcn.h>
#include <sstream>
#include <string_view>
#include <utility>

namespace fib::detail {
namespace {

// NVML's C interface, as its header declares it (stable across drivers): 0 is NVML_SUCCESS.
using NvmlDevice = void*;
using NvmlInit = int (*)();
using NvmlHandleByIndex = int (*)(unsigned, NvmlDevice*);
using NvmlClockInfo = int (*)(NvmlDevice, int, unsigned*);
using NvmlUnsigned = int (*)(NvmlDevice, unsigned*);
using NvmlTemperature = int (*)(NvmlDevice, int, unsigned*);
using NvmlReasons = int (*)(NvmlDevice, unsigned long long*);
constexpr int k_nvml_clock_sm = 1;
constexpr int k_nvml_clock_memory = 2;
constexpr int k_nvml_temperature_gpu = 0;

// NVML's nvmlClocksThrottleReason* bits.
constexpr std::array<std::pair<std::uint64_t, std::string_view>, 9> k_reasons{{
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
}};

template <typename Function> Function symbol(void* library, const char* name) {
  return reinterpret_cast<Function>(dlsym(library, name));
}

} // namespace

std::vector<std::string> throttle_reason_names(std::uint64_t mask) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : k_reasons) {
    if ((mask & bit) != 0) {
      out.emplace_back(name);
      mask &= ~bit;
    }
  }
  for (std::uint64_t bit = 1; bit != 0; bit <<= 1) {
    if ((mask & bit) != 0) {
      out.push_back(fmt::format("unknown_{:#x}", bit));
    }
  }
  return out;
}

Json to_json(const GpuState& state) {
  return Json{{"sm_clock_mhz", state.sm_clock_mhz},
              {"max_sm_clock_mhz", state.max_sm_clock_mhz},
              {"memory_clock_mhz", state.memory_clock_mhz},
              {"power_w", state.power_w},
              {"power_limit_w", state.power_limit_w},
              {"temperature_c", state.temperature_c},
              {"throttle_reasons", throttle_reason_names(state.throttle_reasons)}};
}

unsigned nvml_index_of(unsigned cuda_index, const std::string& visible_devices) {
  std::vector<unsigned> listed;
  std::stringstream items(visible_devices);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
        item.size() > 4) {
      return cuda_index; // UUIDs or MIG names: NVML's order is not known from here
    }
    listed.push_back(static_cast<unsigned>(std::stoul(item)));
  }
  return cuda_index < listed.size() ? listed[cuda_index] : cuda_index;
}

std::optional<GpuState> read_gpu_state(unsigned nvml_index) {
  // Opened once and kept: NVML stays initialized for fib's whole run.
  static void* const library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return std::nullopt;
  }
  static const bool initialized = [] {
    const auto init = symbol<NvmlInit>(library, "nvmlInit_v2");
    return init != nullptr && init() == 0;
  }();
  const auto by_index = symbol<NvmlHandleByIndex>(library, "nvmlDeviceGetHandleByIndex_v2");
  const auto clock = symbol<NvmlClockInfo>(library, "nvmlDeviceGetClockInfo");
  const auto max_clock = symbol<NvmlClockInfo>(library, "nvmlDeviceGetMaxClockInfo");
  const auto power = symbol<NvmlUnsigned>(library, "nvmlDeviceGetPowerUsage");
  const auto limit = symbol<NvmlUnsigned>(library, "nvmlDeviceGetEnforcedPowerLimit");
  const auto temperature = symbol<NvmlTemperature>(library, "nvmlDeviceGetTemperature");
  const auto reasons = symbol<NvmlReasons>(library, "nvmlDeviceGetCurrentClocksThrottleReasons");
  NvmlDevice device = nullptr;
  if (!initialized || by_index == nullptr || by_index(nvml_index, &device) != 0) {
    return std::nullopt;
  }
  GpuState state;
  unsigned milliwatts = 0;
  unsigned long long mask = 0;
  const bool read = clock != nullptr && clock(device, k_nvml_clock_sm, &state.sm_clock_mhz) == 0 &&
                    clock(device, k_nvml_clock_memory, &state.memory_clock_mhz) == 0 &&
                    max_clock != nullptr &&
                    max_clock(device, k_nvml_clock_sm, &state.max_sm_clock_mhz) == 0 &&
                    reasons != nullptr && reasons(device, &mask) == 0;
  if (!read) {
    return std::nullopt;
  }
  state.throttle_reasons = mask;
  if (power != nullptr && power(device, &milliwatts) == 0) {
    state.power_w = milliwatts / 1000.0;
  }
  if (limit != nullptr && limit(device, &milliwatts) == 0) {
    state.power_limit_w = milliwatts / 1000.0;
  }
  if (temperature != nullptr) {
    temperature(device, k_nvml_temperature_gpu, &state.temperature_c);
  }
  return state;
}

} // namespace fib::detail
