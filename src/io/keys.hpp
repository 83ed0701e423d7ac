#pragma once
// JSON key names, shared by the parsers, the pointers they build and the messages.

#include <string_view>

namespace fib::detail {

inline constexpr std::string_view k_key_name = "name";
inline constexpr std::string_view k_key_op_type = "op_type";
inline constexpr std::string_view k_key_axes = "axes";
inline constexpr std::string_view k_key_inputs = "inputs";
inline constexpr std::string_view k_key_outputs = "outputs";
inline constexpr std::string_view k_key_reference = "reference";
inline constexpr std::string_view k_key_tags = "tags";
inline constexpr std::string_view k_key_description = "description";
inline constexpr std::string_view k_key_constraints = "constraints";
inline constexpr std::string_view k_key_type = "type";
inline constexpr std::string_view k_key_value = "value";
inline constexpr std::string_view k_key_shape = "shape";
inline constexpr std::string_view k_key_dtype = "dtype";
inline constexpr std::string_view k_key_uuid = "uuid";
inline constexpr std::string_view k_key_path = "path";
inline constexpr std::string_view k_key_tensor_key = "tensor_key";
inline constexpr std::string_view k_key_definition = "definition";
inline constexpr std::string_view k_key_workload = "workload";
inline constexpr std::string_view k_key_solution = "solution";
inline constexpr std::string_view k_key_evaluation = "evaluation";
inline constexpr std::string_view k_key_status = "status";
inline constexpr std::string_view k_key_environment = "environment";
inline constexpr std::string_view k_key_timestamp = "timestamp";
inline constexpr std::string_view k_key_log = "log";
inline constexpr std::string_view k_key_correctness = "correctness";
inline constexpr std::string_view k_key_performance = "performance";
inline constexpr std::string_view k_key_settings = "settings";
inline constexpr std::string_view k_key_max_relative_error = "max_relative_error";
inline constexpr std::string_view k_key_max_absolute_error = "max_absolute_error";
inline constexpr std::string_view k_key_extra = "extra";
inline constexpr std::string_view k_key_latency_ms = "latency_ms";
inline constexpr std::string_view k_key_reference_latency_ms = "reference_latency_ms";
inline constexpr std::string_view k_key_speedup_factor = "speedup_factor";
inline constexpr std::string_view k_key_hardware = "hardware";
inline constexpr std::string_view k_key_libs = "libs";
inline constexpr std::string_view k_key_device_state = "device_state";
inline constexpr std::string_view k_key_author = "author";
inline constexpr std::string_view k_key_spec = "spec";
inline constexpr std::string_view k_key_sources = "sources";
inline constexpr std::string_view k_key_language = "language";
inline constexpr std::string_view k_key_target_hardware = "target_hardware";
inline constexpr std::string_view k_key_entry_point = "entry_point";
inline constexpr std::string_view k_key_dependencies = "dependencies";
inline constexpr std::string_view k_key_destination_passing_style = "destination_passing_style";
inline constexpr std::string_view k_key_binding = "binding";
inline constexpr std::string_view k_key_content = "content";

} // namespace fib::detail
