#include <multidevice/resharding.h>

#include <id_model/logical_domain_map.h>
#include <ir/all_nodes.h>
#include <multidevice/communication.h>
#include <multidevice/sharding.h>
#include <ops/arith.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace fuser {

namespace {

// The consumer's reduction axis that a producer's split axis maps to: the
// axis summed over the devices.
IterDomain* summedDeviceAxis(Expr* expr, TensorView* consumer) {
  for (Val* in : expr->inputs()) {
    auto* producer = dynamic_cast<TensorView*>(in);
    IterDomain* id =
        producer == nullptr ? nullptr : splitAxisInConsumer(producer, consumer);
    if (id != nullptr && id->isReduction()) {
      return id;
    }
  }
  return nullptr;
}

// How `producer` must be spread for `expr` (defining `consumer`) to run on
// each device's shards: split on the axis that maps to the consumer's split
// axis (to the axis it sums over the devices, for a partial consumer),
// partial sums into a linear op that keeps them, whole otherwise.
Sharding requiredSharding(
    Expr* expr, TensorView* producer, TensorView* consumer) {
  const Sharding out = shardingOf(consumer);
  Sharding required{out.mesh};
  IterDomain* out_id = nullptr;
  if (out.partial) {
    out_id = summedDeviceAxis(expr, consumer);
    if (out_id == nullptr) {
      // Partial sums kept by a cast, copy or negation.
      required.partial = true;
      return required;
    }
  } else if (out.isSplit()) {
    out_id = consumer->getLogicalDomain().at(static_cast<size_t>(out.axis));
  } else {
    return required;
  }
  const IdMap map = PairwiseLogicalDomainMap(producer, consumer)
                        .mapBroadcast(false)
                        .mapConsumerToProducer();
  auto it = map.find(out_id);
  if (it != map.end() && !it->second->isBroadcast()) {
    required.axis = logicalPosition(producer, it->second);
  }
  return required;
}

// `required`, given in `from`'s logical positions, for `to = set(from)`
// (which drops from's reduction axes).
Sharding translated(Sharding required, TensorView* from, TensorView* to) {
  if (!required.isSplit()) {
    return required;
  }
  IterDomain* id =
      from->getLogicalDomain().at(static_cast<size_t>(required.axis));
  const IdMap map = PairwiseLogicalDomainMap(from, to).mapProducerToConsumer();
  required.axis = logicalPosition(to, map.at(id));
  return required;
}

} // namespace

void insertReshardings(Fusion* fusion) {
  FusionGuard fg(fusion);
  // (tensor, mesh devices, axis) -> the respread tensor.
  std::map<std::tuple<TensorView*, std::vector<int64_t>, int64_t>, TensorView*>
      respread;
  for (Expr* expr : fusion->exprs()) {
    if (isResharding(expr)) {
      continue;
    }
    TensorView* consumer = nullptr;
    for (Val* out : expr->outputs()) {
      if (auto* tv = dynamic_cast<TensorView*>(out)) {
        consumer = tv;
        break;
      }
    }
    if (consumer == nullptr || !consumer->hasDeviceMesh()) {
      continue;
    }
    std::vector<TensorView*> producers;
    for (Val* in : expr->inputs()) {
      auto* tv = dynamic_cast<TensorView*>(in);
      if (tv != nullptr && std::find(producers.begin(), producers.end(), tv) ==
                               producers.end()) {
        producers.push_back(tv);
      }
    }
    for (TensorView* producer : producers) {
      const Sharding have = shardingOf(producer);
      const Sharding need = requiredSharding(expr, producer, consumer);
      if (have == need) {
        continue;
      }
      auto key = std::make_tuple(
          producer, need.mesh.vector(), need.partial ? -2 : need.axis);
      auto it = respread.find(key);
      if (it == respread.end()) {
        TensorView* copy = set(producer);
        shard(copy, translated(need, producer, copy));
        it = respread.emplace(key, copy).first;
      }
      fusion->replaceInput(expr, producer, it->second);
    }
  }
  // The user gets complete values: a partial sum returned is summed first.
  for (Val* out : std::vector<Val*>(fusion->outputs())) {
    auto* tv = dynamic_cast<TensorView*>(out);
    if (tv != nullptr && tv->isPartialSum()) {
      TensorView* whole = set(tv);
      shard(whole, Sharding{tv->getDeviceMesh()});
      fusion->replaceOutput(tv, whole);
    }
  }
}

} // namespace fuser
