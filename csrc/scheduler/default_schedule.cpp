#include <scheduler/default_schedule.h>

#include <inlining.h>
#include <ir/all_nodes.h>
#include <scheduler/utils.h>
#include <transform_propagator.h>

namespace fuser {

namespace {

bool hasScheduledLoops(Fusion* fusion) {
  for (TensorView* tv : fusion->allTvs()) {
    if (!tv->isFusionInput() && tv->getLoopDomain() != tv->getLogicalDomain()) {
      return true;
    }
  }
  return false;
}

} // namespace

bool scheduleDefault(Fusion* fusion) {
  FusionGuard fg(fusion);
  if (hasScheduledLoops(fusion) || fusion->outputs().empty()) {
    return false;
  }
  size_t rank = 0;
  bool first = true;
  for (TensorView* tv : fusion->allTvs()) {
    if (tv->hasReduction()) {
      return false;
    }
  }
  for (Val* out : fusion->outputs()) {
    auto* tv = out->as<TensorView>();
    if (tv->isFusionInput() || tv->definition() == nullptr) {
      return false;
    }
    if (first) {
      rank = tv->getLogicalDomain().size();
      first = false;
    } else if (tv->getLogicalDomain().size() != rank) {
      return false;
    }
  }
  if (rank == 0) {
    return false;
  }
  scheduler_utils::cacheInputs(fusion, /*unroll=*/false);
  scheduler_utils::cacheAndForkOutputs(fusion, /*unroll=*/false);
  auto* reference = fusion->outputs().front()->as<TensorView>();
  while (reference->nDims() > 1) {
    reference->merge(0);
  }
  reference->split(0, 128);
  reference->axis(0)->parallelize(ParallelType::BIDx);
  reference->axis(1)->parallelize(ParallelType::TIDx);
  TransformPropagator propagator(reference);
  MaxLogicalDomainInfoSpanningTree(reference).traverse(&propagator);
  scheduler_utils::parallelizeAllLike(reference);
  inlineMost(fusion);
  return true;
}

} // namespace fuser
