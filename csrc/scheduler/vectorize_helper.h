// Which tensors of a pointwise fusion a vector access can cover, and how
// far: the innermost axes of a tensor's allocation that are contiguous and
// follow the loop order (doc/indexing.md §4 for contiguity folding).
#pragma once

#include <ir/interface_nodes.h>
#include <scheduler/runtime_info.h>

#include <optional>
#include <vector>

namespace fuser {

// The logical positions (reductions left out) of `tv` from the outermost to
// the innermost axis of its allocation, following each allocation ID back
// to the logical axis it comes from. nullopt when an allocation ID mixes
// logical axes (a merge of two).
std::optional<std::vector<int64_t>> allocationOrderOfLogical(
    const TensorView* tv);

// For a loop whose axes, outermost first, are `tv`'s logical IDs `loop_ids`
// (nullptr where `tv` has no such axis, e.g. one a BroadcastOp adds later):
// the number of elements of `tv` that lie contiguously in memory at the
// innermost end of that loop, or 0 when `tv` is broadcast along the
// innermost loop axis (a vector of it makes no sense). 1 means no vector
// access is possible.
int64_t contiguousInnerExtent(
    const TensorView* tv, const std::vector<IterDomain*>& loop_ids,
    RuntimeInfo& runtime_info);

} // namespace fuser
