// Contiguity folding of an allocation domain (doc/indexing.md §4): two
// allocation axes that are the (outer, inner) outputs of one split, with the
// outer contiguous, lie in memory exactly as the split's input does, so they
// are read as that one axis; a merged allocation axis lies as its two
// inputs do, the outer contiguous, so it is read as those two. The indexer uses
// it to print `[i/2, 2]` as `i`, the pointwise scheduler to see how far a
// vector access may reach.
#pragma once

#include <ir/interface_nodes.h>

#include <cstddef>
#include <optional>
#include <vector>

namespace fuser {

struct FoldedAllocationAxis {
  IterDomain* id;
  std::optional<bool> contiguous;
  // Position among the allocation axes without reductions of the innermost
  // axis folded into this one: where a kernel argument keeps its stride.
  size_t stride_position;
};

// `tv`'s allocation axes without reductions, merges unfolded into their
// inputs (the outer one contiguous) and contiguous split pairs folded.
// Device-parallel axes are never folded: a shard holds only its part.
// With `within_logical`, folding stops at the logical domain: a segment's
// input cut from a reshape keeps the reshape's root, and its memory axes,
// matched against loops over the logical domain, must not be the root's
// (the index math may fold through it; vectorization may not).
std::vector<FoldedAllocationAxis> foldedAllocationAxes(
    const TensorView* tv, bool within_logical = false);

} // namespace fuser
