#include "fib/collect/selection.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace fib {
namespace {

using Point = std::vector<double>;

// The var axes of `axes` in the definition's order (a missing one is 0).
Point point_of(const std::vector<std::string>& var_axes, const OrderedMap<std::int64_t>& axes) {
  Point out;
  out.reserve(var_axes.size());
  for (const std::string& axis : var_axes) {
    const std::int64_t* value = find_entry(axes, axis);
    out.push_back(value != nullptr ? static_cast<double>(*value) : 0.0);
  }
  return out;
}

double distance(const Point& a, const Point& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double scale = std::max({std::abs(a[i]), std::abs(b[i]), 1.0});
    const double d = (a[i] - b[i]) / scale;
    sum += d * d;
  }
  return std::sqrt(sum);
}

// The axes as one comparable key (names and values, in the order given).
std::string axes_key(const std::vector<std::string>& var_axes,
                     const OrderedMap<std::int64_t>& axes) {
  std::string key;
  for (const std::string& axis : var_axes) {
    const std::int64_t* value = find_entry(axes, axis);
    key += axis + "=" + (value != nullptr ? std::to_string(*value) : std::string("-")) + ";";
  }
  return key;
}

class Spreader {
public:
  Spreader(std::vector<Point> pool, const std::vector<Point>& chosen) : m_pool(std::move(pool)) {
    m_score.assign(m_pool.size(), std::numeric_limits<double>::infinity());
    m_taken.assign(m_pool.size(), false);
    for (const Point& p : chosen) {
      note(p);
    }
  }

  // Takes pool entry `i` and updates the scores.
  void take(std::size_t i) {
    m_taken[i] = true;
    m_order.push_back(i);
    note(m_pool[i]);
  }

  // The best-scoring untaken entry among `indices` (the earliest on a tie).
  std::optional<std::size_t> best(const std::vector<std::size_t>& indices) const {
    std::optional<std::size_t> out;
    for (const std::size_t i : indices) {
      if (!m_taken[i] && (!out || m_score[i] > m_score[*out])) {
        out = i;
      }
    }
    return out;
  }

  const std::vector<std::size_t>& order() const { return m_order; }

private:
  void note(const Point& p) {
    for (std::size_t i = 0; i < m_pool.size(); ++i) {
      m_score[i] = std::min(m_score[i], distance(m_pool[i], p));
    }
  }

  std::vector<Point> m_pool;
  std::vector<double> m_score;
  std::vector<bool> m_taken;
  std::vector<std::size_t> m_order;
};

} // namespace

Selection select_workloads(const Definition& definition, const std::vector<Candidate>& candidates,
                           const std::vector<ExistingWorkload>& existing,
                           const SelectionPolicy& policy) {
  const std::vector<std::string> var_axes = definition.var_axes();
  Selection out;
  std::set<std::string> fingerprints;
  std::map<std::string, std::size_t> per_axes;
  for (const ExistingWorkload& workload : existing) {
    fingerprints.insert(workload.fingerprint);
    ++per_axes[axes_key(var_axes, workload.axes)];
  }
  std::vector<std::size_t> pool; // indices into candidates
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& candidate = candidates[i];
    if (!fingerprints.insert(candidate.fingerprint).second) {
      ++out.duplicates;
      continue;
    }
    std::size_t& count = per_axes[axes_key(var_axes, candidate.axes)];
    if (count >= policy.max_per_axes) {
      ++out.axes_capped;
      continue;
    }
    ++count;
    pool.push_back(i);
  }
  if (pool.size() <= policy.max_workloads || var_axes.empty()) {
    const std::size_t n = std::min(pool.size(), policy.max_workloads);
    out.selected.assign(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(n));
    out.not_selected = pool.size() - n;
    return out;
  }
  std::vector<Point> points;
  for (const std::size_t i : pool) {
    points.push_back(point_of(var_axes, candidates[i].axes));
  }
  std::vector<Point> chosen;
  for (const ExistingWorkload& workload : existing) {
    chosen.push_back(point_of(var_axes, workload.axes));
  }
  Spreader spreader(points, chosen);
  std::map<double, std::vector<std::size_t>> groups; // first var axis value → pool positions
  for (std::size_t p = 0; p < points.size(); ++p) {
    groups[points[p].front()].push_back(p);
  }
  if (groups.size() <= policy.max_workloads) {
    for (const auto& [value, members] : groups) {
      if (const auto best = spreader.best(members)) {
        spreader.take(*best);
      }
    }
  }
  std::vector<std::size_t> everything(points.size());
  for (std::size_t p = 0; p < points.size(); ++p) {
    everything[p] = p;
  }
  while (spreader.order().size() < policy.max_workloads) {
    const auto best = spreader.best(everything);
    if (!best) {
      break;
    }
    spreader.take(*best);
  }
  for (const std::size_t p : spreader.order()) {
    out.selected.push_back(pool[p]);
  }
  out.not_selected = pool.size() - out.selected.size();
  return out;
}

} // namespace fib
