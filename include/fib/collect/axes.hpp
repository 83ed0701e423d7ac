#pragma once
// The axes of a workload from the tensors one dumped call bound to a definition's inputs: every
// var axis read off the shapes, every const axis checked against them (docs/collect.md,
// "Axes").

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>
#include <fib/model/definition.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

// The shape a call gave one definition input (after any slicing the binding applied, such as an
// index buffer cut to the length its indptr says is used).
struct BoundShape {
  std::string input;
  std::vector<std::int64_t> shape;
};

// The value of every var axis of `definition` (by name; Definition::var_axes gives their
// declared order), from `bound` (inputs not bound are skipped; so are bound names that are not
// tensor inputs). Every occurrence counts, not only the first: a call is refused
// (`collect.axis-mismatch`, pointer "/axes/<axis>" of the definition) when a bound input's rank is
// not its declared one, when a dimension differs from a const axis (a capture of another model's
// shapes, or a TP rank of another size), or when two occurrences of one var axis disagree (a sign
// the binding took the wrong tensor). A var axis no bound input has is `collect.axis-unbound`: the
// workload would lack it. The message names the axis, the values and the inputs.
Expected<std::map<std::string, std::int64_t>> infer_axes(const Definition& definition,
                                                         const std::vector<BoundShape>& bound);

} // namespace fib
