#include <scheduler/vectorize_helper.h>

#include <ir/all_nodes.h>

#include <algorithm>

namespace fuser {

namespace {

// The logical ID `id` derives from, or nullptr when it mixes several.
IterDomain* logicalAncestor(
    IterDomain* id, const std::vector<IterDomain*>& logical) {
  while (std::find(logical.begin(), logical.end(), id) == logical.end()) {
    Expr* def = id->definition();
    if (def == nullptr || def->inputs().size() != 1) {
      return nullptr;
    }
    id = def->input(0)->as<IterDomain>();
  }
  return id;
}

struct FoldedAxis {
  IterDomain* id;
  std::optional<bool> contiguous;
};

// Contiguous (outer, inner) pairs of one split read as the split input.
// Only declared contiguity counts: the kernel indexes an axis declared
// non-contiguous with its run-time stride, so lanes along it are not known
// to be consecutive.
std::vector<FoldedAxis> foldedAllocation(const TensorView* tv) {
  std::vector<FoldedAxis> axes;
  const auto& allocation = tv->getMaybeAllocationDomain();
  const auto& contiguity = tv->getContiguity();
  for (size_t i = 0; i < allocation.size(); ++i) {
    if (!allocation[i]->isReduction()) {
      axes.push_back({allocation[i], contiguity[i]});
    }
  }
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t k = 0; k + 1 < axes.size(); ++k) {
      auto* split = dynamic_cast<Split*>(axes[k].id->definition());
      if (split != nullptr && split->outer() == axes[k].id &&
          split->inner() == axes[k + 1].id && axes[k].contiguous == true &&
          !axes[k].id->isDeviceDim()) {
        axes[k] = {split->in(), axes[k + 1].contiguous};
        axes.erase(axes.begin() + static_cast<int64_t>(k) + 1);
        changed = true;
        break;
      }
    }
  }
  return axes;
}

} // namespace

std::optional<std::vector<int64_t>> allocationOrderOfLogical(
    const TensorView* tv) {
  const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
  std::vector<int64_t> order;
  for (IterDomain* id : tv->getMaybeAllocationDomain()) {
    if (id->isReduction()) {
      continue;
    }
    IterDomain* ancestor = logicalAncestor(id, logical);
    if (ancestor == nullptr) {
      return std::nullopt;
    }
    auto pos = static_cast<int64_t>(
        std::find(logical.begin(), logical.end(), ancestor) - logical.begin());
    if (std::find(order.begin(), order.end(), pos) == order.end()) {
      order.push_back(pos);
    }
  }
  return order;
}

int64_t contiguousInnerExtent(
    const TensorView* tv, const std::vector<IterDomain*>& loop_ids,
    RuntimeInfo& runtime_info) {
  if (loop_ids.empty() || loop_ids.back() == nullptr ||
      loop_ids.back()->isBroadcast()) {
    return 0;
  }
  std::vector<FoldedAxis> axes = foldedAllocation(tv);
  // Walk the loop and the allocation from the innermost end together.
  int64_t extent = 1;
  auto axis = axes.rbegin();
  for (auto pos = loop_ids.rbegin(); pos != loop_ids.rend(); ++pos) {
    IterDomain* expected = *pos;
    if (expected == nullptr || expected->isBroadcast()) {
      // Takes no memory; skip it on both sides.
      if (axis != axes.rend() && axis->id == expected) {
        ++axis;
      }
      continue;
    }
    while (axis != axes.rend() && axis->id->isBroadcast()) {
      ++axis;
    }
    if (axis == axes.rend() || axis->id != expected ||
        axis->contiguous != true) {
      break;
    }
    extent *= runtime_info.extent(expected);
    ++axis;
  }
  return extent;
}

} // namespace fuser
