// Propagating a reference tensor's loop schedule over a fusion.
//
// MaxLogicalDomainInfoSpanningTree walks producer/consumer edges from the
// reference, always taking next the edge that keeps the most of the
// reference's logical axes (Prim's algorithm), so a tensor is scheduled from
// the neighbour that shares the most with the reference. A Propagator
// decides what to do along each edge; TransformPropagator replays loop
// domains (TransformReplay, without replay_allocation).
#pragma once

#include <ir/interface_nodes.h>

#include <unordered_set>

namespace fuser {

class MaxLogicalDomainInfoSpanningTree {
 public:
  class Propagator {
   public:
    virtual ~Propagator() = default;
    // `from` is scheduled; schedule its producer `to`.
    virtual void propagateC2P(TensorView* from, TensorView* to) = 0;
    // `from` is scheduled; schedule its consumer `to`.
    virtual void propagateP2C(TensorView* from, TensorView* to) = 0;
  };

  // `selected`, when given, limits the walk to those tensors.
  explicit MaxLogicalDomainInfoSpanningTree(
      TensorView* reference,
      const std::unordered_set<TensorView*>* selected = nullptr);

  void traverse(Propagator* propagator);

 private:
  TensorView* reference_;
  std::unordered_set<TensorView*> selected_;
  bool has_selection_ = false;
};

class TransformPropagator
    : public MaxLogicalDomainInfoSpanningTree::Propagator {
 public:
  // The reference only roots the spanning tree; each edge replays from
  // its already scheduled end.
  explicit TransformPropagator(TensorView* reference) {
    (void)reference;
  }
  void propagateC2P(TensorView* from, TensorView* to) override;
  void propagateP2C(TensorView* from, TensorView* to) override;
};

} // namespace fuser
