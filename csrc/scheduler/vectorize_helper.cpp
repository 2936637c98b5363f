#include <scheduler/vectorize_helper.h>

#include <allocation_folding.h>
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
  std::vector<FoldedAllocationAxis> axes = foldedAllocationAxes(tv);
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
