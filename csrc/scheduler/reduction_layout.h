// How a reduction's axes lie in memory, shared by the schedulers that
// reduce (reduction.h, normalization_inner.h; doc/reduction.md §5 steps 1
// and 2): the kept and the reduced logical axes in the memory order of the
// largest input, whether the innermost one is reduced, and the vector
// width along the innermost merged axis.
#pragma once

#include <fusion.h>
#include <ir/interface_nodes.h>
#include <scheduler/runtime_info.h>

#include <vector>

namespace fuser {

struct ReductionLayout {
  // Logical positions of the reduction's output (reductions included), in
  // memory order: the kept ones and the reduced ones.
  std::vector<int64_t> kept_axes;
  std::vector<int64_t> reduced_axes;
  int64_t kept_elements = 1;
  int64_t reduced_elements = 1;
  // Whether the innermost axis in memory with more than one element is
  // reduced.
  bool inner = true;
  // Elements per vector access along the innermost merged axis.
  int64_t vectorize = 1;
  // The widest element, in bytes, of the tensors accessed in vectors.
  int64_t max_bytes = 1;
  // The registers one element of every input of the reduction's rank
  // takes once loaded and widened to at least 4 bytes: each step of the
  // reduced loop reads all of them.
  int64_t registers_per_loaded_element = 1;
};

// The layout of the reduction into `reduced` (a reduction's output). The
// vector width is the widest every input of the reduction's rank allows,
// and every tensor of `also_vectorized`: outputs written along the same
// axes, or tensors of a lower rank read in vectors along the axes they
// share with the reduction (a weight, broadcast along the kept axes).
ReductionLayout reductionLayout(
    Fusion* fusion, TensorView* reduced, RuntimeInfo& runtime_info,
    const std::vector<TensorView*>& also_vectorized = {});

// The layout of a persistent schedule's row reduction into `reduced`: the
// outputs of the reduction's rank and the inputs below it (weights) are
// also read or written in vectors.
ReductionLayout persistentRowLayout(
    Fusion* fusion, TensorView* reduced, RuntimeInfo& runtime_info);

// Reorders `reference` (a reduction's output, unscheduled) to `first`
// then `second` (logical positions) and merges each group into one axis:
// [kept, reduced] for an inner reduction, [reduced, kept] for an outer one
// (an empty group gives no axis).
void mergeReductionAxes(
    TensorView* reference, const std::vector<int64_t>& first,
    const std::vector<int64_t>& second);

} // namespace fuser
