// The ID-graph indexer (doc/design.md §5, doc/indexing.md). For one tensor expr
// in its loop nest it computes the memory offset of every tensor it touches and
// the predicate that guards it.
#pragma once

#include <device_lower/kernel_ir.h>
#include <expr/simplifier.h>

#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace fuser {

class GpuLower;

class Indexer {
 public:
  // `loops`: the loops enclosing the expr, outermost first. With
  // `vectorized_copy` the innermost (vectorized) loop contributes index 0:
  // the access covers the whole vector from its first lane. The ID graph,
  // extents and launch sizes are `lower`'s.
  Indexer(
      GpuLower& lower, const std::vector<kir::ForLoop*>& loops,
      bool vectorized_copy);

  // Offset of the element of `tv` at the current loop point: from the
  // allocation domain for global tensors (doc/indexing.md §4), from the
  // loop axes right of the inline position for local and shared buffers.
  Val* index(TensorView* tv);

  // Offset of the element of the global `tv` whose logical axes `shifted`
  // are at the positions given and the others at the current loop point:
  // a slice, pad or cat reads its input at its output position shifted
  // along the resized axes (doc/ops.md, "Slicing, padding and
  // concatenation"). The tensor may be read in place too.
  Val* shiftedIndex(
      TensorView* tv, const std::vector<std::pair<IterDomain*, Val*>>& shifted);

  // `consumer`'s logical indices are in range, plus inputs of splits on
  // its loop path that may overrun (doc/indexing.md §5).
  // Reduction axes are left out for a reduction's initialization, which
  // runs outside the reduction loops.
  Val* predicate(TensorView* consumer, bool include_reduction_axes = true);

  const ValueRanges& ranges() const {
    return ranges_;
  }

  // The index of `id`'s exact group, found by propagating along the ID graph
  // from the loop indices (doc/indexing.md §2-3); nullptr if unreachable.
  Val* indexOf(IterDomain* id);

 private:
  Val* globalIndex(TensorView* tv);
  Val* bufferIndex(TensorView* tv);
  bool propagateOnce();
  // The loops' IDs, for messages.
  std::string loopsToString() const;
  Val* known(IterDomain* id);
  void setKnown(IterDomain* id, Val* index);

  // The index of the enclosing loop (innermost first among those not yet
  // `used`) that is loop-mapped to `id` and runs over the same extent;
  // nullptr when there is none.
  Val* enclosingLoopIndex(IterDomain* id, std::vector<bool>& used);

  GpuLower& lower_;
  std::vector<kir::ForLoop*> loops_;
  // The index each loop contributes (0 for the lane of a vectorized copy).
  std::vector<Val*> loop_indices_;
  std::unordered_map<IterDomain*, Val*> known_; // exact group -> index
  // What the loops alone give, the start of a shifted read.
  std::unordered_map<IterDomain*, Val*> loop_known_;
  // The groups a shifted read overrides (empty outside shiftedIndex).
  std::unordered_set<IterDomain*> shifted_groups_;
  ValueRanges ranges_;
};

} // namespace fuser
