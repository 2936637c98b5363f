// Disjoint sets of IterDomains across a fusion (doc/design.md §5): producer
// logical IDs join the consumer root IDs they map to, and Split/Merge exprs
// with mapped inputs and equal parameters join their outputs.
//
// Two views: the exact map joins only axes of equal extent (a broadcast
// never joins an iteration axis); the loop map also joins a producer
// broadcast with the consumer axis it is broadcast to and lets a merge with
// a broadcast stand for its other input, which is what inlining and
// parallel-type propagation need.
#pragma once

#include <fusion.h>
#include <ir/interface_nodes.h>

#include <unordered_map>
#include <vector>

namespace fuser {

class DisjointIdSets {
 public:
  IterDomain* find(IterDomain* id);
  // Returns true if the sets were distinct.
  bool join(IterDomain* a, IterDomain* b);
  bool same(IterDomain* a, IterDomain* b) {
    return find(a) == find(b);
  }

 private:
  std::unordered_map<IterDomain*, IterDomain*> parent_;
};

class IdModel {
 public:
  explicit IdModel(Fusion* fusion);

  bool exactMapped(IterDomain* a, IterDomain* b) {
    return exact_.same(a, b);
  }
  bool loopMapped(IterDomain* a, IterDomain* b) {
    return loop_.same(a, b);
  }
  // Representative of `id`'s loop set.
  IterDomain* loopGroup(IterDomain* id) {
    return loop_.find(id);
  }
  // Representative of `id`'s exact set.
  IterDomain* exactGroup(IterDomain* id) {
    return exact_.find(id);
  }
  // Every Split/Merge between the domains of the fusion's tensors.
  const std::vector<Expr*>& idExprs() const {
    return id_exprs_;
  }

 private:
  void build(Fusion* fusion, DisjointIdSets& sets, bool permissive);

  std::vector<Expr*> id_exprs_;
  DisjointIdSets exact_;
  DisjointIdSets loop_;
};

} // namespace fuser
