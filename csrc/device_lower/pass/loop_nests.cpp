// Loop nests from loop domains (DESIGN §5). Each tensor expr runs inside one
// loop per loop ID of its output. Its outer loops, up to its produce
// position, are the ones its inlined producers opened: an open loop at
// depth i is shared when an expr that ran in it is inlined deeper than i
// and the loop maps to the output's loop ID in the IdModel loop map. A shared loop
// takes the most concrete of the IDs that share it (a loop an inlined
// broadcast opened iterates the consumer's full extent).
#include <device_lower/passes.h>

#include <device_lower/lower.h>

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

Val* loopIndexFor(IterDomain* id, Val* extent) {
  if (id->isThread()) {
    return kir::parallelIndex(id->getParallelType());
  }
  if (id->isDeviceDim() || id->isBroadcast() ||
      (extent->isConstInt() && extent->constIntValue() == 1)) {
    return FusionGuard::getCurFusion()->zeroVal();
  }
  return IrBuilder::create<Val>(DataType::Index);
}

kir::ForLoop* makeLoop(IterDomain* id) {
  GpuLower* lower = GpuLower::current();
  Val* extent = lower->loopExtent(id);
  return IrBuilder::create<kir::ForLoop>(
      id, loopIndexFor(id, extent), FusionGuard::getCurFusion()->zeroVal(),
      extent);
}

TensorView* outputTv(Expr* expr) {
  for (Val* out : expr->outputs()) {
    if (auto* tv = dynamic_cast<TensorView*>(out)) {
      return tv;
    }
  }
  FUSER_ERROR("tensor expr without tensor output: ", expr->toString());
}

} // namespace

std::vector<Expr*> generateLoopNests(const std::vector<Expr*>& exprs) {
  GpuLower* lower = GpuLower::current();
  IdModel& id_model = lower->idModel();
  std::vector<Expr*> top_level;
  std::vector<kir::ForLoop*> open;
  // Whether open[i] may be shared (an expr in it is inlined past depth i).
  std::vector<bool> shareable;
  for (Expr* expr : exprs) {
    TensorView* out = outputTv(expr);
    for (IterDomain* id : out->getLoopDomain()) {
      FUSER_CHECK(
          !(id->isReduction() && id->isThread()), "Reduction axis ",
          id->toString(), " of ", out->toString(), " is parallelized with ",
          id->getParallelType(),
          "; block and grid reductions are not supported by this code "
          "generator yet. Keep reduction axes serial.");
    }
    const auto& loop = out->getLoopDomain();
    const auto produce_pos =
        static_cast<size_t>(out->getMaxProducerPosition());
    size_t reuse = 0;
    while (reuse < open.size() && reuse < produce_pos && reuse < loop.size() &&
           shareable[reuse] &&
           id_model.loopMapped(open[reuse]->iterDomain(), loop[reuse])) {
      ++reuse;
    }
    open.resize(reuse);
    shareable.resize(reuse);
    for (size_t i = 0; i < reuse; ++i) {
      kir::ForLoop* shared = open[i];
      if (concreteness(loop[i]) > concreteness(shared->iterDomain())) {
        shared->setIterDomain(loop[i]);
        Val* extent = lower->loopExtent(loop[i]);
        shared->setStop(extent);
        shared->setIndex(loopIndexFor(loop[i], extent));
      }
    }
    for (size_t i = reuse; i < loop.size(); ++i) {
      kir::ForLoop* new_loop = makeLoop(loop[i]);
      if (open.empty()) {
        top_level.push_back(new_loop);
      } else {
        open.back()->body().push_back(new_loop);
      }
      open.push_back(new_loop);
      shareable.push_back(false);
    }
    for (size_t i = 0;
         i < static_cast<size_t>(out->getComputeAtPosition()); ++i) {
      shareable[i] = true;
    }
    if (open.empty()) {
      top_level.push_back(expr);
    } else {
      open.back()->body().push_back(expr);
    }
  }
  return top_level;
}

} // namespace fuser
