#include <layout/device_counts.h>

#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>

#include <algorithm>

namespace fuser {

DeviceCounts::DeviceCounts(const TensorView* tv, ExpressionEvaluator& ee) {
  auto evaluate_device_extent = [&](const IterDomain* id) {
    auto extent = ee.evaluate(id->extent());
    FUSER_CHECK(
        extent.has_value(), "The number of devices of ", id->toString(),
        " in the allocation domain of ", tv->toString(),
        " is unknown: its extent ", id->extent()->toInlineString(),
        " is not bound. Use a constant factor for device splits.");
    FUSER_CHECK(
        extent->asInt() > 0, "The device-parallel ID ", id->toString(), " of ",
        tv->toString(), " has extent ", extent->asInt(),
        "; it must be positive.");
    return extent->asInt();
  };
  for (IterDomain* id : tv->getMaybeAllocationDomain()) {
    counts_[id] = id->isDeviceDim() ? evaluate_device_extent(id) : 1;
  }
  const auto exprs =
      getExprsBetween(tv->getLogicalDomain(), tv->getMaybeAllocationDomain());
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    if (auto* split = dynamic_cast<Split*>(*it)) {
      counts_[split->in()] = of(split->outer()) * of(split->inner());
      continue;
    }
    auto* merge = (*it)->as<Merge>();
    FUSER_CHECK(
        of(merge->out()) == 1, "The allocation domain of ", tv->toString(),
        " shards ", merge->out()->toString(), ", which merges ",
        merge->outer()->toString(), " and ", merge->inner()->toString(),
        "; sharding a merged axis is not supported. Split a single logical "
        "axis by the number of devices instead.");
    counts_[merge->outer()] = 1;
    counts_[merge->inner()] = 1;
  }
  // A logical ID that is device-parallel itself, outside any expr.
  for (IterDomain* id : tv->getLogicalDomain()) {
    if (id->isDeviceDim() && of(id) == 1) {
      counts_[id] = evaluate_device_extent(id);
    }
  }
}

int64_t DeviceCounts::of(const IterDomain* id) const {
  auto it = counts_.find(id);
  return it == counts_.end() ? 1 : it->second;
}

bool isSharded(const TensorView* tv) {
  const auto& allocation = tv->getMaybeAllocationDomain();
  return std::any_of(allocation.begin(), allocation.end(), [](IterDomain* id) {
    return id->isDeviceDim();
  });
}

} // namespace fuser
