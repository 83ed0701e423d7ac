// The GPU state fib records beside a CUDA trace (src/exec/gpu_state.hpp): NVML's throttle
// reasons named, CUDA_VISIBLE_DEVICES followed to NVML's index, and no state (no crash) where
// there is no driver.

#include "exec/gpu_state.hpp"

#include <gtest/gtest.h>

#include <dlfcn.h>

namespace fib {
namespace {

TEST(GpuState, ThrottleReasonBitsAreNamedAndUnknownOnesKept) {
  EXPECT_TRUE(detail::throttle_reason_names(0).empty());
  EXPECT_EQ(detail::throttle_reason_names(0x4 | 0x40),
            (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_EQ(detail::throttle_reason_names(0x1 | 0x1000),
            (std::vector<std::string>{"gpu_idle", "unknown_0x1000"}));
}

TEST(GpuState, TheStateIsWrittenWithItsUnitsInItsKeys) {
  detail::GpuState state;
  state.sm_clock_mhz = 1755;
  state.max_sm_clock_mhz = 1980;
  state.memory_clock_mhz = 2619;
  state.power_w = 412.5;
  state.power_limit_w = 700.0;
  state.temperature_c = 61;
  state.throttle_reasons = 0x4;
  EXPECT_EQ(detail::to_json(state), (Json{{"sm_clock_mhz", 1755},
                                          {"max_sm_clock_mhz", 1980},
                                          {"memory_clock_mhz", 2619},
                                          {"power_w", 412.5},
                                          {"power_limit_w", 700.0},
                                          {"temperature_c", 61},
                                          {"throttle_reasons", Json::array({"sw_power_cap"})}}));
}

TEST(GpuState, VisibleDevicesMapCudaIndicesToNvmlOnes) {
  EXPECT_EQ(detail::nvml_index_of(0, ""), 0U);
  EXPECT_EQ(detail::nvml_index_of(1, "3,5"), 5U);
  EXPECT_EQ(detail::nvml_index_of(0, "3,5"), 3U);
  EXPECT_EQ(detail::nvml_index_of(2, "3,5"), 2U);        // past the list: as given
  EXPECT_EQ(detail::nvml_index_of(0, "GPU-8c1f2e"), 0U); // UUIDs: NVML's order is unknown
}

TEST(GpuState, NoDriverMeansNoStateNotACrash) {
  if (void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(nvml);
    GTEST_SKIP() << "an NVIDIA driver is here; the GPU check script reads a real state";
  }
  EXPECT_FALSE(detail::read_gpu_state(0).has_value());
}

} // namespace
} // namespace fib
