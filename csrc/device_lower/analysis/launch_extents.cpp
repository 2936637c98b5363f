#include <device_lower/analysis/launch_extents.h>

#include <device_lower/lower.h>
#include <ir/all_nodes.h>

#include <vector>

namespace fuser {

std::map<ParallelType, Val*> computeLaunchExtents(
    GpuLower& lower, Fusion* fusion, const LoopPromotion& promotion) {
  std::map<ParallelType, std::vector<Val*>> extents;
  for (TensorView* tv : fusion->allTvs()) {
    if (tv->definition() == nullptr) {
      continue; // an input: no loops
    }
    const auto& loop = tv->getLoopDomain();
    for (size_t i = 0; i < loop.size(); ++i) {
      if (!loop[i]->isThread()) {
        continue;
      }
      Val* extent = lower.loopExtent(promotion.loopId(tv, i));
      if (const int64_t multiple = loop[i]->paddedMultiple(); multiple > 1) {
        Val* m = IrBuilder::create<Val>(multiple, DataType::Index);
        extent = IrBuilder::mulExpr(IrBuilder::ceilDivExpr(extent, m), m);
      }
      auto& list = extents[loop[i]->getParallelType()];
      bool seen = false;
      for (Val* e : list) {
        seen |= e->sameAs(extent);
      }
      if (!seen) {
        list.push_back(extent);
      }
    }
  }
  std::map<ParallelType, Val*> result;
  for (auto& [pt, list] : extents) {
    Val* extent = list.front();
    for (size_t i = 1; i < list.size(); ++i) {
      extent = IrBuilder::binaryExpr(BinaryOpType::Max, extent, list[i]);
    }
    result[pt] = extent;
  }
  return result;
}

std::map<ParallelType, int64_t> computeLaunchBounds(Fusion* fusion) {
  std::map<ParallelType, int64_t> bounds;
  std::map<ParallelType, bool> unknown;
  for (TensorView* tv : fusion->allTvs()) {
    if (tv->definition() == nullptr) {
      continue;
    }
    for (IterDomain* id : tv->getLoopDomain()) {
      if (!id->isThreadDim()) {
        continue;
      }
      const ParallelType pt = id->getParallelType();
      int64_t bound = id->extentBound();
      if (id->extent()->isConstInt()) {
        bound = id->extent()->constIntValue();
        // A padded axis launches its extent rounded up (as
        // computeLaunchExtents above): a bound below the launch would
        // make the launch fail.
        if (const int64_t multiple = id->paddedMultiple(); multiple > 1) {
          bound = (bound + multiple - 1) / multiple * multiple;
        }
      }
      if (bound == 0) {
        unknown[pt] = true;
      }
      bounds[pt] = std::max(bounds[pt], bound);
    }
  }
  for (auto& [pt, bound] : bounds) {
    if (unknown[pt]) {
      bound = 0;
    }
  }
  return bounds;
}

} // namespace fuser
