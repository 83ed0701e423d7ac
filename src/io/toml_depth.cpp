// The guard against toml++'s unbounded recursion on dotted keys (include/fib/io/toml_depth.hpp).

#include <fib/io/toml_depth.hpp>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>

namespace fib {

std::optional<std::size_t> toml_key_too_deep(std::string_view text) {
  std::size_t line = 1;
  std::size_t dots = 0;
  std::size_t i = 0;
  const auto skip_to = [&](std::string_view end) {
    const std::size_t found = text.find(end, i);
    const std::size_t stop = found == std::string_view::npos ? text.size() : found + end.size();
    line += static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(i),
                                                text.begin() + static_cast<std::ptrdiff_t>(stop),
                                                '\n'));
    i = stop;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (text.substr(i, 3) == "\"\"\"" || text.substr(i, 3) == "'''") {
      const std::string end(text.substr(i, 3));
      i += 3;
      skip_to(end);
      dots = 0;
    } else if (c == '"' || c == '\'') {
      ++i;
      while (i < text.size() && text[i] != c && text[i] != '\n') {
        i += (c == '"' && text[i] == '\\') ? 2 : 1;
      }
      ++i;
    } else if (c == '#') {
      skip_to("\n");
      dots = 0;
    } else if (c == '.') {
      if (++dots > k_max_toml_key_parts) {
        return line;
      }
      ++i;
    } else {
      const bool in_key = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' ||
                          c == '-' || c == ' ' || c == '\t';
      if (!in_key) {
        dots = 0;
      }
      if (c == '\n') {
        ++line;
      }
      ++i;
    }
  }
  return std::nullopt;
}

} // namespace fib
