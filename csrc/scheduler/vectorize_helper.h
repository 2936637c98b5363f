// Which tensors of a pointwise fusion a vector access can cover, and how
// far: the innermost allocation axes of a tensor that are contiguous and
// follow the loop order (csrc/layout/vectorization.h holds the rules a vector
// access must meet; doc/indexing.md §4-5).
#pragma once

#include <ir/interface_nodes.h>
#include <layout/vectorization.h>
#include <scheduler/runtime_info.h>

#include <optional>
#include <utility>
#include <vector>

namespace fuser {

// The logical positions (reductions left out) of `tv` from the outermost to
// the innermost axis of its allocation, following each allocation ID back
// to the logical axis it comes from (a merged allocation axis gives its
// inputs in order). nullopt when an allocation ID mixes logical axes in
// another way.
std::optional<std::vector<int64_t>> allocationOrderOfLogical(
    const TensorView* tv);

// What a loop whose axes, outermost first, are `tv`'s logical IDs
// `loop_ids` (nullptr where `tv` has no such axis, e.g. one a BroadcastOp
// adds later; loop axes of one position left out) may read or write of
// `tv` with vector accesses.
struct InnerRun {
  // The elements that lie contiguously in memory at the innermost end of
  // the loop (1: no vector access possible; 0: `tv` is broadcast along the
  // innermost loop axis, so a vector of it makes no sense).
  int64_t elements = 1;
  // The axes outside that run, with their sizes and strides (empty for a
  // tensor without run-time info: an output the runtime allocates densely,
  // whose other strides are multiples of the run).
  StridedAxes between_runs;
};
InnerRun contiguousInnerRun(
    const TensorView* tv, const std::vector<IterDomain*>& loop_ids,
    RuntimeInfo& runtime_info);

// The widest power of two up to `widest` that divides `inner_extent` (the
// extent of the innermost loop axis) and that every tensor of `runs` may be
// accessed with, by the rules of layout/vectorization.h and its run-time
// alignment; 1 when none.
int64_t widestVectorWidth(
    int64_t widest, int64_t inner_extent,
    const std::vector<std::pair<TensorView*, InnerRun>>& runs,
    RuntimeInfo& runtime_info);

} // namespace fuser
