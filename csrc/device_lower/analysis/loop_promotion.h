// Loop promotion (doc/indexing.md §1): which IterDomain each loop of a
// tensor's expr runs over. A loop shared by several exprs iterates the most
// concrete ID of its loop group (a loop an inlined broadcast opens iterates
// the consumer's full extent); past the shared loops, an ID of constant
// extent (a vector or unroll axis) is promoted too once an outer loop was,
// so the indices of one nest follow one chain of IDs. The loop keeps the
// parallel type of the expr's own ID.
#pragma once

#include <id_model/id_model.h>
#include <ir/interface_nodes.h>

#include <unordered_map>

namespace fuser {

class LoopPromotion {
 public:
  LoopPromotion(Fusion* fusion, IdModel& id_model);

  // The ID the loop at position `pos` of `tv`'s loop domain runs over.
  IterDomain* loopId(const TensorView* tv, size_t pos) const;

  // How many loops of `tv`'s expr may be ones opened before it: its produce
  // position or, when something reads it, its compute-at position
  // (whichever is larger).
  static size_t sharePosition(const TensorView* tv);

 private:
  IdModel& id_model_;
  // Loop group -> its most concrete ID over all computed tensors.
  std::unordered_map<IterDomain*, IterDomain*> promotion_;
};

} // namespace fuser
