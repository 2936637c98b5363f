#include <allocation_folding.h>

#include <ir/all_nodes.h>

namespace fuser {

std::vector<FoldedAllocationAxis> foldedAllocationAxes(const TensorView* tv) {
  const auto& allocation = tv->getMaybeAllocationDomain();
  const auto& contiguity = tv->getContiguity();
  std::vector<FoldedAllocationAxis> axes;
  size_t position = 0;
  for (size_t i = 0; i < allocation.size(); ++i) {
    if (!allocation[i]->isReduction()) {
      axes.push_back({allocation[i], contiguity[i], position++});
    }
  }
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t k = 0; k + 1 < axes.size(); ++k) {
      auto* split = dynamic_cast<Split*>(axes[k].id->definition());
      if (split == nullptr || split->outer() != axes[k].id ||
          split->inner() != axes[k + 1].id || axes[k].contiguous != true ||
          axes[k].id->isDeviceDim() || axes[k + 1].id->isDeviceDim()) {
        continue;
      }
      axes[k] = {
          split->in(), axes[k + 1].contiguous, axes[k + 1].stride_position};
      axes.erase(axes.begin() + static_cast<int64_t>(k) + 1);
      changed = true;
      break;
    }
  }
  return axes;
}

} // namespace fuser
