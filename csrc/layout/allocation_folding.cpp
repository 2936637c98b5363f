#include <layout/allocation_folding.h>

#include <ir/all_nodes.h>

#include <functional>

#include <algorithm>

namespace fuser {

std::vector<FoldedAllocationAxis> foldedAllocationAxes(
    const TensorView* tv, bool within_logical) {
  const auto& allocation = tv->getMaybeAllocationDomain();
  const auto& logical = tv->getLogicalDomain();
  auto isLogical = [&](IterDomain* id) {
    return within_logical &&
           std::find(logical.begin(), logical.end(), id) != logical.end();
  };
  const auto& contiguity = tv->getContiguity();
  std::vector<FoldedAllocationAxis> axes;
  size_t position = 0;
  // A merge lies in memory as its inputs do, the outer one contiguous
  // with the inner one; device-parallel merges stay whole.
  std::function<void(IterDomain*, std::optional<bool>, size_t)> unfold =
      [&](IterDomain* id, std::optional<bool> contiguous, size_t stride) {
        auto* merge = dynamic_cast<Merge*>(id->definition());
        if (merge == nullptr || isLogical(id) || id->isDeviceDim() ||
            merge->outer()->isDeviceDim() || merge->inner()->isDeviceDim()) {
          axes.push_back({id, contiguous, stride});
          return;
        }
        unfold(merge->outer(), true, stride);
        unfold(merge->inner(), contiguous, stride);
      };
  for (size_t i = 0; i < allocation.size(); ++i) {
    if (!allocation[i]->isReduction()) {
      unfold(allocation[i], contiguity[i], position++);
    }
  }
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t k = 0; k + 1 < axes.size(); ++k) {
      auto* split = dynamic_cast<Split*>(axes[k].id->definition());
      if (split == nullptr || isLogical(axes[k].id) ||
          isLogical(axes[k + 1].id) || split->outer() != axes[k].id ||
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
