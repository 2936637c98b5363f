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
  // A matrix product maps each operand axis by its role (ir/mma_op.h).
  if (auto* mma = dynamic_cast<MmaOp*>(consumer_->definition())) {
    const std::vector<int64_t> positions = mma->outputPositions(producer_);
    for (size_t p = 0; p < producer_ids.size(); ++p) {
      IterDomain* producer_id = producer_ids[p];
      IterDomain* consumer_id = consumer_ids[static_cast<size_t>(positions[p])];
      if (!map_broadcast_ &&
          producer_id->isBroadcast() != consumer_id->isBroadcast()) {
        continue;
      }
      map[producer_id] = consumer_id;
    }
    return map;
  }
  // An indexing or resizing op maps only the axes it does not index
  // through or resize.
  Expr* def = consumer_->definition();
  if (def->isA<IndexOp>() || def->isA<ResizeOp>()) {
    const auto pairs = def->isA<IndexOp>()
                           ? def->as<IndexOp>()->mappedAxes(producer_)
                           : def->as<ResizeOp>()->mappedAxes(producer_);
    for (auto [p, c] : pairs) {
      IterDomain* producer_id = producer_ids[p];
      IterDomain* consumer_id = consumer_ids[c];
      if (map_broadcast_ ||
          producer_id->isBroadcast() == consumer_id->isBroadcast()) {
        map[producer_id] = consumer_id;
      }
    }
    return map;
  }
  std::vector<bool> new_broadcast(consumer_ids.size(), false);
  if (auto* bop = dynamic_cast<BroadcastOp*>(consumer_->definition())) {
    new_broadcast = bop->getBroadcastDimFlags();
  }
  size_t p = 0;
  for (size_t c = 0; c < consumer_ids.size(); ++c) {
    if (new_broadcast[c]) {
      continue;
    }
    FUSER_INTERNAL_ASSERT(
        p < producer_ids.size(), "rank mismatch between ",
        producer_->toString(), " and ", consumer_->toString());
    IterDomain* producer_id = producer_ids[p++];
    IterDomain* consumer_id = consumer_ids[c];
    if (!map_broadcast_ &&
        producer_id->isBroadcast() != consumer_id->isBroadcast()) {
      continue;
    }
    map[producer_id] = consumer_id;
  }
  FUSER_INTERNAL_ASSERT(
      p == producer_ids.size(), "rank mismatch between ", producer_->toString(),
      " and ", consumer_->toString());
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
