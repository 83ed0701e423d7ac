#include "fib/util/text_diff.hpp"

#include "util/strings.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fib {
namespace {

// Signed, because diagonals (x - y) are negative as often as not.
using Index = std::ptrdiff_t;

// The lines of `text`, each with its '\n' (only the last one may lack it). "" has no lines.
// Replaces each line by a number, equal numbers for equal lines, so that comparisons are cheap.
class LineNumbering {
public:
  std::vector<std::size_t> number(const std::vector<std::string_view>& lines) {
    std::vector<std::size_t> ids;
    ids.reserve(lines.size());
    for (const std::string_view line : lines) {
      ids.push_back(m_ids.emplace(line, m_ids.size()).first->second);
    }
    return ids;
  }

private:
  std::unordered_map<std::string_view, std::size_t> m_ids;
};

// Where a region of the edit graph is cut in two: the first part ends at (before_end, after_end),
// the second starts at (before_resume, after_resume); the lines in between match.
struct Split {
  Index before_end;
  Index after_end;
  Index before_resume;
  Index after_resume;
};

// Finds which lines of `before` are removed and which lines of `after` are added by a shortest
// edit script (Myers' O(ND) algorithm, linear-space "middle snake" variant). When a search costs
// more than `m_cost_limit` steps, it cuts at the furthest point reached instead of the middle
// snake: still a valid script, only possibly longer than the shortest.
class EditScript {
public:
  EditScript(const std::vector<std::size_t>& before, const std::vector<std::size_t>& after)
      : m_before(before), m_after(after), m_removed(before.size(), 0), m_added(after.size(), 0),
        m_forward(before.size() + after.size() + 1, 0),
        m_backward(before.size() + after.size() + 1, 0) {
    const auto root = static_cast<Index>(std::sqrt(static_cast<double>(m_forward.size())));
    m_cost_limit = std::max<Index>(1024, root);
    compare(0, size(m_before), 0, size(m_after));
  }

  bool removed(Index line) const { return m_removed[static_cast<std::size_t>(line)] != 0; }
  bool added(Index line) const { return m_added[static_cast<std::size_t>(line)] != 0; }

private:
  static Index size(const std::vector<std::size_t>& lines) {
    return static_cast<Index>(lines.size());
  }
  std::size_t before_at(Index line) const { return m_before[static_cast<std::size_t>(line)]; }
  std::size_t after_at(Index line) const { return m_after[static_cast<std::size_t>(line)]; }
  // Furthest x (forward) or u (backward) on diagonal k; k ranges over [-m, n] of the region.
  Index& forward(Index k, Index m) { return m_forward[static_cast<std::size_t>(k + m)]; }
  Index& backward(Index k, Index m) { return m_backward[static_cast<std::size_t>(k + m)]; }

  // Marks the edits of before[before_begin, before_end) -> after[after_begin, after_end).
  void compare(Index before_begin, Index before_end, Index after_begin, Index after_end) {
    // The larger part of each split is handled by this loop and only the smaller one by
    // recursion, so the stack stays shallow however the regions are cut.
    while (true) {
      while (before_begin < before_end && after_begin < after_end &&
             before_at(before_begin) == after_at(after_begin)) {
        ++before_begin;
        ++after_begin;
      }
      while (before_begin < before_end && after_begin < after_end &&
             before_at(before_end - 1) == after_at(after_end - 1)) {
        --before_end;
        --after_end;
      }
      if (before_begin == before_end || after_begin == after_end) {
        mark_all(before_begin, before_end, after_begin, after_end);
        return;
      }
      const Split split = find_split(before_begin, before_end, after_begin, after_end);
      const bool first_is_whole = split.before_end == before_end && split.after_end == after_end;
      const bool second_is_whole =
          split.before_resume == before_begin && split.after_resume == after_begin;
      if (first_is_whole || second_is_whole) {
        // Cannot happen for a correct split; stay correct (and finite) regardless.
        mark_all(before_begin, before_end, after_begin, after_end);
        return;
      }
      const Index first_size = (split.before_end - before_begin) + (split.after_end - after_begin);
      const Index second_size =
          (before_end - split.before_resume) + (after_end - split.after_resume);
      if (first_size <= second_size) {
        compare(before_begin, split.before_end, after_begin, split.after_end);
        before_begin = split.before_resume;
        after_begin = split.after_resume;
      } else {
        compare(split.before_resume, before_end, split.after_resume, after_end);
        before_end = split.before_end;
        after_end = split.after_end;
      }
    }
  }

  void mark_all(Index before_begin, Index before_end, Index after_begin, Index after_end) {
    for (Index line = before_begin; line < before_end; ++line) {
      m_removed[static_cast<std::size_t>(line)] = 1;
    }
    for (Index line = after_begin; line < after_end; ++line) {
      m_added[static_cast<std::size_t>(line)] = 1;
    }
  }

  // The region has lines on both sides and differs in its first and its last lines. Coordinates
  // below are relative: x in [0, n] for `before`, y in [0, m] for `after`, diagonal k = x - y.
  // The backward search runs the same way from the far corner, on u = n - x, w = m - y.
  Split find_split(Index before_begin, Index before_end, Index after_begin, Index after_end) {
    const Index n = before_end - before_begin;
    const Index m = after_end - after_begin;
    const auto before_line = [&](Index x) { return before_at(before_begin + x); };
    const auto after_line = [&](Index y) { return after_at(after_begin + y); };
    const auto before_line_back = [&](Index u) { return before_at(before_end - 1 - u); };
    const auto after_line_back = [&](Index w) { return after_at(after_end - 1 - w); };
    const auto absolute = [&](Index x, Index y, Index resume_x, Index resume_y) {
      return Split{before_begin + x, after_begin + y, before_begin + resume_x,
                   after_begin + resume_y};
    };

    const Index delta = n - m; // the backward diagonal k' is the forward diagonal delta - k'
    const bool overlap_in_forward = delta % 2 != 0;
    forward(0, m) = 0;
    backward(0, m) = 0;
    // Diagonals computed by the last step of each search.
    Index forward_low = 0;
    Index forward_high = 0;
    Index backward_low = 0;
    Index backward_high = 0;

    // The diagonals of step d: parity of d, within [-d, d] and within the region [-m, n].
    const auto step_low = [&](Index d) {
      const Index low = std::max(-d, -m);
      return (low + d) % 2 == 0 ? low : low + 1;
    };
    const auto step_high = [&](Index d) {
      const Index high = std::min(d, n);
      return (high + d) % 2 == 0 ? high : high - 1;
    };

    for (Index d = 1;; ++d) {
      const Index low = step_low(d);
      const Index high = step_high(d);

      for (Index k = low; k <= high; k += 2) {
        // The furthest point on k from the neighbours' furthest points of step d - 1: one line
        // added (from k + 1) or one removed (from k - 1), clamped to the region's edges.
        Index x = -1;
        if (k + 1 >= forward_low && k + 1 <= forward_high) {
          x = std::min(forward(k + 1, m), m + k);
        }
        if (k - 1 >= forward_low && k - 1 <= forward_high) {
          x = std::max(x, std::min(forward(k - 1, m) + 1, n));
        }
        const Index start_x = x;
        while (x < n && x - k < m && before_line(x) == after_line(x - k)) {
          ++x;
        }
        forward(k, m) = x;
        const Index mirrored = delta - k;
        if (overlap_in_forward && mirrored >= backward_low && mirrored <= backward_high &&
            x + backward(mirrored, m) >= n) {
          return absolute(start_x, start_x - k, x, x - k);
        }
      }
      forward_low = low;
      forward_high = high;

      for (Index k = low; k <= high; k += 2) {
        Index u = -1;
        if (k + 1 >= backward_low && k + 1 <= backward_high) {
          u = std::min(backward(k + 1, m), m + k);
        }
        if (k - 1 >= backward_low && k - 1 <= backward_high) {
          u = std::max(u, std::min(backward(k - 1, m) + 1, n));
        }
        const Index start_u = u;
        while (u < n && u - k < m && before_line_back(u) == after_line_back(u - k)) {
          ++u;
        }
        backward(k, m) = u;
        const Index mirrored = delta - k;
        if (!overlap_in_forward && mirrored >= forward_low && mirrored <= forward_high &&
            forward(mirrored, m) + u >= n) {
          return absolute(n - u, m - (u - k), n - start_u, m - (start_u - k));
        }
      }
      backward_low = low;
      backward_high = high;

      if (d >= m_cost_limit) {
        return cut_at_furthest(forward_low, forward_high, n, m, absolute);
      }
    }
  }

  // Too expensive: cut where either search got furthest from its corner (x + y, or u + w).
  template <typename Absolute>
  Split cut_at_furthest(Index low, Index high, Index n, Index m, const Absolute& absolute) {
    Index best_forward = low;
    Index best_backward = low;
    for (Index k = low; k <= high; k += 2) {
      if (2 * forward(k, m) - k > 2 * forward(best_forward, m) - best_forward) {
        best_forward = k;
      }
      if (2 * backward(k, m) - k > 2 * backward(best_backward, m) - best_backward) {
        best_backward = k;
      }
    }
    const Index x = forward(best_forward, m);
    const Index u = backward(best_backward, m);
    if (2 * x - best_forward >= 2 * u - best_backward) {
      return absolute(x, x - best_forward, x, x - best_forward);
    }
    return absolute(n - u, m - (u - best_backward), n - u, m - (u - best_backward));
  }

  const std::vector<std::size_t>& m_before;
  const std::vector<std::size_t>& m_after;
  std::vector<char> m_removed;
  std::vector<char> m_added;
  std::vector<Index> m_forward;
  std::vector<Index> m_backward;
  Index m_cost_limit = 0;
};

// A run of removed lines before[before_begin, before_end) replaced by after[after_begin,
// after_end); either run may be empty.
struct Change {
  Index before_begin;
  Index before_end;
  Index after_begin;
  Index after_end;
};

std::vector<Change> collect_changes(const EditScript& script, Index before_size, Index after_size) {
  std::vector<Change> changes;
  Index before = 0;
  Index after = 0;
  while (before < before_size || after < after_size) {
    const bool changed = (before < before_size && script.removed(before)) ||
                         (after < after_size && script.added(after));
    if (!changed) {
      // Unchanged lines pair up in order.
      ++before;
      ++after;
      continue;
    }
    Change change{before, before, after, after};
    while (change.before_end < before_size && script.removed(change.before_end)) {
      ++change.before_end;
    }
    while (change.after_end < after_size && script.added(change.after_end)) {
      ++change.after_end;
    }
    changes.push_back(change);
    before = change.before_end;
    after = change.after_end;
  }
  return changes;
}

// GNU diff's unified range: "start,count", "start" for one line, and for no lines the number of
// the line before the empty range (0 at the top) with count 0.
std::string format_range(Index begin, Index count) {
  if (count == 0) {
    return std::to_string(begin) + ",0";
  }
  if (count == 1) {
    return std::to_string(begin + 1);
  }
  return std::to_string(begin + 1) + "," + std::to_string(count);
}

void append_line(std::string& out, char prefix, std::string_view line) {
  out += prefix;
  out += line;
  if (line.empty() || line.back() != '\n') {
    out += "\n\\ No newline at end of file\n";
  }
}

} // namespace

std::string unified_diff(std::string_view before, std::string_view after,
                         std::string_view before_label, std::string_view after_label,
                         int context_lines) {
  if (before == after) {
    return "";
  }
  const std::vector<std::string_view> before_lines = detail::split_lines_keeping_ends(before);
  const std::vector<std::string_view> after_lines = detail::split_lines_keeping_ends(after);
  LineNumbering numbering;
  const std::vector<std::size_t> before_ids = numbering.number(before_lines);
  const std::vector<std::size_t> after_ids = numbering.number(after_lines);
  const EditScript script(before_ids, after_ids);
  const auto before_size = static_cast<Index>(before_lines.size());
  const auto after_size = static_cast<Index>(after_lines.size());
  const std::vector<Change> changes = collect_changes(script, before_size, after_size);
  const auto line_of = [](const std::vector<std::string_view>& lines, Index index) {
    return lines[static_cast<std::size_t>(index)];
  };

  const Index context = std::max(context_lines, 0);
  std::string out;
  out += "--- ";
  out += before_label;
  out += "\n+++ ";
  out += after_label;
  out += '\n';
  std::size_t first = 0;
  while (first < changes.size()) {
    std::size_t last = first;
    while (last + 1 < changes.size() &&
           changes[last + 1].before_begin - changes[last].before_end <= 2 * context) {
      ++last;
    }
    // Unchanged lines around the group: as many in `before` as in `after`.
    const Index lead = std::min(context, changes[first].before_begin);
    const Index trail = std::min(context, before_size - changes[last].before_end);
    const Index hunk_before_begin = changes[first].before_begin - lead;
    const Index hunk_before_end = changes[last].before_end + trail;
    const Index hunk_after_begin = changes[first].after_begin - lead;
    const Index hunk_after_end = changes[last].after_end + trail;
    out += "@@ -" + format_range(hunk_before_begin, hunk_before_end - hunk_before_begin) + " +" +
           format_range(hunk_after_begin, hunk_after_end - hunk_after_begin) + " @@\n";
    Index line = hunk_before_begin;
    for (std::size_t index = first; index <= last; ++index) {
      const Change& change = changes[index];
      for (; line < change.before_begin; ++line) {
        append_line(out, ' ', line_of(before_lines, line));
      }
      for (; line < change.before_end; ++line) {
        append_line(out, '-', line_of(before_lines, line));
      }
      for (Index added = change.after_begin; added < change.after_end; ++added) {
        append_line(out, '+', line_of(after_lines, added));
      }
    }
    for (; line < hunk_before_end; ++line) {
      append_line(out, ' ', line_of(before_lines, line));
    }
    first = last + 1;
  }
  return out;
}

} // namespace fib
