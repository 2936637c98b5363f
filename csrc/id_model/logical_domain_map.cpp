#include <id_model/logical_domain_map.h>

#include <ir/all_nodes.h>

#include <algorithm>

namespace fuser {

PairwiseLogicalDomainMap::PairwiseLogicalDomainMap(
    TensorView* producer, TensorView* consumer)
    : producer_(producer), consumer_(consumer) {
  FUSER_CHECK(
      producer != nullptr && consumer != nullptr,
      "Domain map between null tensors.");
  Expr* def = consumer->definition();
  FUSER_CHECK(
      def != nullptr &&
          std::find(def->inputs().begin(), def->inputs().end(), producer) !=
              def->inputs().end(),
      "No domain map between ", producer->toString(), " and ",
      consumer->toString(), ": ", consumer->toString(),
      " is not computed from ", producer->toString(), ".");
}

IdMap PairwiseLogicalDomainMap::mapProducerToConsumer() const {
  IdMap map;
  const auto producer_ids =
      TensorDomain::noReductions(producer_->getLogicalDomain());
  const auto& consumer_ids = consumer_->getMaybeRootDomain();
  // Which axes an op carries over is the op's own knowledge.
  for (auto [p, c] : consumer_->definition()->mappedAxes(producer_)) {
    IterDomain* producer_id = producer_ids.at(p);
    IterDomain* consumer_id = consumer_ids.at(c);
    if (map_broadcast_ ||
        producer_id->isBroadcast() == consumer_id->isBroadcast()) {
      map[producer_id] = consumer_id;
    }
  }
  return map;
}

IdMap PairwiseLogicalDomainMap::mapConsumerToProducer() const {
  IdMap map;
  for (auto [producer_id, consumer_id] : mapProducerToConsumer()) {
    map[consumer_id] = producer_id;
  }
  return map;
}

} // namespace fuser
