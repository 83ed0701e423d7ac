#pragma once
// Choosing which candidates become workloads: duplicates dropped (against each other and against
// the workloads the dataset already has), a cap per identical axes, then a spread over the axes
// (docs/collect.md, "Which calls become workloads").

#include <fib/collect/candidate.hpp>
#include <fib/model/definition.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

inline constexpr std::size_t k_default_max_workloads = 20;
inline constexpr std::size_t k_default_max_per_axes = 2;

struct SelectionPolicy {
  std::size_t max_workloads = k_default_max_workloads; // new workloads per definition
  std::size_t max_per_axes = k_default_max_per_axes;   // workloads with identical axes, old + new
};

// A workload the dataset has: its axes (by name) and its workload_fingerprint.
struct ExistingWorkload {
  OrderedMap<std::int64_t> axes;
  std::string fingerprint;
};

struct Selection {
  std::vector<std::size_t> selected; // indices into the candidates, in pick order
  std::size_t duplicates = 0;   // same fingerprint as an existing workload or an earlier candidate
  std::size_t axes_capped = 0;  // their axes already had max_per_axes workloads
  std::size_t not_selected = 0; // beyond max_workloads
};

// The candidates to write, in this order:
// 1. candidates are taken in dump order; one whose fingerprint equals an existing workload's or
//    an earlier candidate's is a duplicate; one whose axes already have `max_per_axes` workloads
//    (existing ones count) is capped;
// 2. when more than `max_workloads` remain, they are spread over the axes: each var axis value is
//    scaled by the larger of the two magnitudes compared (and 1), the distance of two workloads is
//    the Euclidean distance of the scaled values, and a candidate's score is its distance to the
//    nearest workload already chosen or existing (infinite when there is none). First, when the
//    first var axis has at most `max_workloads` distinct values, the best-scoring candidate of
//    each value (ascending) is picked, so that every batch size seen gets a workload; then the
//    best-scoring remaining candidate is added until there are `max_workloads`. Ties go to the
//    earlier candidate. A definition without var axes takes the first `max_workloads`.
Selection select_workloads(const Definition& definition, const std::vector<Candidate>& candidates,
                           const std::vector<ExistingWorkload>& existing,
                           const SelectionPolicy& policy);

} // namespace fib
