// The ID-graph indexer (DESIGN §5, doc/indexing.md). For one tensor expr in
// its loop nest it computes the memory offset of every tensor it touches
// and the predicate that guards it.
#pragma once

#include <device_lower/kernel_ir.h>
#include <simplify_expr.h>

#include <unordered_map>
#include <vector>

namespace fuser {

class Indexer {
 public:
  // `loops`: the loops enclosing the expr, outermost first. With
  // `vectorized_copy` the innermost (vectorized) loop contributes index 0:
  // the access covers the whole vector from its first lane.
  Indexer(const std::vector<kir::ForLoop*>& loops, bool vectorized_copy);

  // Offset of the element of `tv` at the current loop point: from the
  // allocation domain for global tensors (doc/indexing.md §4), from the
  // loop axes right of the inline position for local and shared buffers.
  Val* index(TensorView* tv);

  // `consumer`'s logical indices are in range, plus inputs of splits on
  // its loop path that may overrun (doc/indexing.md §5).
  // Reduction axes are left out for a reduction's initialization, which
  // runs outside the reduction loops.
  Val* predicate(TensorView* consumer, bool include_reduction_axes = true);

  const ValueRanges& ranges() const {
    return ranges_;
  }

 private:
  Val* globalIndex(TensorView* tv);
  Val* bufferIndex(TensorView* tv);
  // The index of `id`'s exact group, found by propagating along the ID graph
  // from the loop indices (doc/indexing.md §2-3); nullptr if unreachable.
  Val* indexOf(IterDomain* id);
  bool propagateOnce();
  Val* known(IterDomain* id);
  void setKnown(IterDomain* id, Val* index);

  std::vector<kir::ForLoop*> loops_;
  std::unordered_map<IterDomain*, Val*> known_; // exact group -> index
  ValueRanges ranges_;
};

// Whether a vectorized loop holds a single copy that is emitted as one
// vector access.
bool isVectorizedCopyLoop(const kir::ForLoop* loop);

// Whether consecutive indices of the loop ID `id` (the lanes of a vector
// access starting at lane 0) are consecutive elements of `tv` in memory:
// `id`, or the input of the inner split that made it, is the row-major
// linearization (a chain of merges) of the innermost contiguous allocation
// axes of a global `tv`, or the innermost axis of a buffer
// (doc/indexing.md §5). Needs a lowering in progress.
bool isConsecutiveInMemory(TensorView* tv, IterDomain* id);

} // namespace fuser
