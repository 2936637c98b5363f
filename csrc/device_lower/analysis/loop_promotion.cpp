#include <device_lower/analysis/loop_promotion.h>

#include <fusion.h>
#include <ir/all_nodes.h>

#include <algorithm>

namespace fuser {

namespace {

// How many non-broadcast root IDs `id` is derived from.
int64_t concreteness(IterDomain* id) {
  if (id->definition() == nullptr) {
    return id->isBroadcast() ? 0 : 1;
  }
  int64_t count = 0;
  for (Val* in : id->definition()->inputs()) {
    count += concreteness(in->as<IterDomain>());
  }
  return count;
}

bool sameConstantExtent(IterDomain* a, IterDomain* b) {
  return a->extent()->isConstInt() && b->extent()->isConstInt() &&
         a->extent()->constIntValue() == b->extent()->constIntValue();
}

} // namespace

LoopPromotion::LoopPromotion(Fusion* fusion, IdModel& id_model)
    : id_model_(id_model) {
  for (TensorView* tv : fusion->allTvs()) {
    if (tv->isFusionInput()) {
      continue;
    }
    for (IterDomain* id : tv->getLoopDomain()) {
      IterDomain*& best = promotion_[id_model.loopGroup(id)];
      if (best == nullptr || concreteness(id) > concreteness(best)) {
        best = id;
      }
    }
  }
}

size_t LoopPromotion::sharePosition(const TensorView* tv) {
  return static_cast<size_t>(std::max(
      tv->getMaxProducerPosition(),
      tv->uses().empty() ? int64_t{0} : tv->getComputeAtPosition()));
}

IterDomain* LoopPromotion::loopId(const TensorView* tv, size_t pos) const {
  const auto& loop = tv->getLoopDomain();
  const size_t share_pos = sharePosition(tv);
  bool promoted_outer = false;
  IterDomain* id = nullptr;
  for (size_t i = 0; i <= pos; ++i) {
    id = loop[i];
    auto it = promotion_.find(id_model_.loopGroup(id));
    IterDomain* best = it == promotion_.end() ? id : it->second;
    // Past the shared loops a broadcast axis keeps its own loop of one
    // iteration: the tensor holds one value along it, computed once (a
    // row's statistic under the loops of the row's elements).
    if (best != id && (i < share_pos || (promoted_outer && !id->isBroadcast() &&
                                         sameConstantExtent(id, best)))) {
      id = best;
      promoted_outer = true;
    }
  }
  return id;
}

} // namespace fuser
