#include <runtime/local_extents.h>

#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>

namespace fuser {

LocalExtents::LocalExtents(const TensorView* tv, ExpressionEvaluator& ee)
    : tv_(tv), ee_(ee) {
  auto evaluate_device_extent = [&](const IterDomain* id) {
    auto extent = ee_.evaluate(id->extent());
    FUSER_CHECK(
        extent.has_value(), "The number of devices of ", id->toString(),
        " in the allocation domain of ", tv_->toString(),
        " is unknown: its extent ", id->extent()->toInlineString(),
        " is not bound. Use a constant factor for device splits.");
    FUSER_CHECK(
        extent->asInt() > 0, "The device-parallel ID ", id->toString(), " of ",
        tv_->toString(), " has extent ", extent->asInt(),
        "; it must be positive.");
    return extent->asInt();
  };
  for (IterDomain* id : tv_->getMaybeAllocationDomain()) {
    device_counts_[id] = id->isDeviceDim() ? evaluate_device_extent(id) : 1;
  }
  const auto exprs =
      getExprsBetween(tv_->getLogicalDomain(), tv_->getMaybeAllocationDomain());
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    if (auto* split = dynamic_cast<Split*>(*it)) {
      device_counts_[split->in()] =
          deviceCount(split->outer()) * deviceCount(split->inner());
      continue;
    }
    auto* merge = (*it)->as<Merge>();
    FUSER_CHECK(
        deviceCount(merge->out()) == 1, "The allocation domain of ",
        tv_->toString(), " shards ", merge->out()->toString(),
        ", which merges ", merge->outer()->toString(), " and ",
        merge->inner()->toString(),
        "; sharding a merged axis is not supported. Split a single logical "
        "axis by the number of devices instead.");
    device_counts_[merge->outer()] = 1;
    device_counts_[merge->inner()] = 1;
  }
  // A logical ID that is device-parallel itself, outside any expr.
  for (IterDomain* id : tv_->getLogicalDomain()) {
    if (id->isDeviceDim() && deviceCount(id) == 1) {
      device_counts_[id] = evaluate_device_extent(id);
    }
  }
}

int64_t LocalExtents::deviceCount(const IterDomain* id) const {
  auto it = device_counts_.find(id);
  return it == device_counts_.end() ? 1 : it->second;
}

int64_t LocalExtents::localExtent(const IterDomain* id) const {
  if (id->isDeviceDim() || id->isBroadcast()) {
    return 1;
  }
  const int64_t extent = ee_.evaluateOrThrow(id->extent()).asInt();
  const int64_t devices = deviceCount(id);
  FUSER_CHECK(
      extent % devices == 0, id->toString(), " of ", tv_->toString(),
      " has extent ", extent, ", which is not divisible by the ", devices,
      " devices it is sharded over. Use an extent divisible by ", devices, ".");
  return extent / devices;
}

std::vector<int64_t> LocalExtents::logicalSizes() const {
  std::vector<int64_t> sizes;
  for (IterDomain* id : TensorDomain::noReductions(tv_->getLogicalDomain())) {
    sizes.push_back(localExtent(id));
  }
  return sizes;
}

std::vector<int64_t> LocalExtents::allocationSizes() const {
  std::vector<int64_t> sizes;
  for (IterDomain* id :
       TensorDomain::noReductions(tv_->getMaybeAllocationDomain())) {
    sizes.push_back(localExtent(id));
  }
  return sizes;
}

} // namespace fuser
