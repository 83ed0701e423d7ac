#include <fib/util/cache_root.hpp>

#include <cstdlib>
#include <string_view>

namespace fib {
namespace {

std::string_view environment_variable(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string_view() : std::string_view(value);
}

} // namespace

std::optional<std::filesystem::path> default_cache_directory() {
  for (const char* name : {"FIB_CACHE_DIR", "FIB_CACHE_PATH"}) {
    if (const auto configured = environment_variable(name); !configured.empty()) {
      return std::filesystem::path(configured);
    }
  }
  if (const auto xdg = environment_variable("XDG_CACHE_HOME");
      !xdg.empty() && std::filesystem::path(xdg).is_absolute()) {
    return std::filesystem::path(xdg) / "fib";
  }
  if (const auto home = environment_variable("HOME"); !home.empty()) {
    return std::filesystem::path(home) / ".cache" / "fib";
  }
  return std::nullopt;
}

} // namespace fib
