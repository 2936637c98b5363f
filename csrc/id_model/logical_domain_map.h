// Which IterDomains of a producer and a consumer of one expr describe the
// same axis: producer logical IDs (without reductions) against consumer
// root IDs (its logical IDs when it has no root). Broadcast axes that an
// expr inserts have no producer counterpart.
#pragma once

#include <ir/interface_nodes.h>

#include <unordered_map>

namespace fuser {

using IdMap = std::unordered_map<IterDomain*, IterDomain*>;

class PairwiseLogicalDomainMap {
 public:
  // `consumer` must be defined by an expr that reads `producer`; otherwise
  // a user error names both tensors.
  PairwiseLogicalDomainMap(TensorView* producer, TensorView* consumer);

  // Whether a producer broadcast ID maps to a consumer iteration ID (true by
  // default; an exact map sets false).
  PairwiseLogicalDomainMap& mapBroadcast(bool map) {
    map_broadcast_ = map;
    return *this;
  }

  IdMap mapProducerToConsumer() const;
  IdMap mapConsumerToProducer() const;

 private:
  TensorView* producer_;
  TensorView* consumer_;
  bool map_broadcast_ = true;
};

} // namespace fuser
