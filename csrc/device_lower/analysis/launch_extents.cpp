#include <device_lower/analysis/launch_extents.h>

#include <device_lower/lower.h>
#include <ir/all_nodes.h>

#include <vector>

namespace fuser {

std::map<ParallelType, Val*> computeLaunchExtents(
    Fusion* fusion, const LoopPromotion& promotion) {
  GpuLower* lower = GpuLower::current();
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
      Val* extent = lower->loopExtent(promotion.loopId(tv, i));
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

} // namespace fuser
