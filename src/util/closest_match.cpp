#include "fib/util/closest_match.hpp"

#include "util/strings.hpp"

#include <algorithm>

namespace fib {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the table: two back (for swaps), the previous one and the current one.
  std::vector<std::size_t> before(b.size() + 1);
  std::vector<std::size_t> previous(b.size() + 1);
  std::vector<std::size_t> current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    previous[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string lowered = detail::ascii_lower(word);
  const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  const std::string* best = nullptr;
  std::size_t best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    if (candidate == word) {
      return "";
    }
    const std::size_t distance = edit_distance(lowered, detail::ascii_lower(candidate));
    if (distance < best_distance) {
      best_distance = distance;
      best = &candidate;
    }
  }
  return best != nullptr ? *best : "";
}

} // namespace fib
