#include <multidevice/sharding.h>

#include <id_model/logical_domain_map.h>
#include <ir/all_nodes.h>
#include <ir/builder.h>
#include <ir/domain_traversal.h>

#include <algorithm>
#include <sstream>

namespace fuser {

namespace {

IterDomain* deviceId(
    const std::vector<IterDomain*>& ids, const TensorView* tv) {
  for (IterDomain* id : ids) {
    if (!id->isDeviceDim()) {
      continue;
    }
    FUSER_CHECK(
        id->getParallelType() == ParallelType::DIDx, tv->toString(), " uses ",
        id->toString(),
        "; only DIDx (a one-dimensional mesh) is supported. Parallelize the "
        "device axis with DIDx.");
    return id;
  }
  return nullptr;
}

// The split that made `did` from a logical ID of `tv`, or nullptr when
// `did` is a logical ID itself.
Split* deviceSplit(IterDomain* did, const TensorView* tv) {
  const auto& logical = tv->getLogicalDomain();
  if (std::find(logical.begin(), logical.end(), did) != logical.end()) {
    return nullptr;
  }
  auto* split = dynamic_cast<Split*>(did->definition());
  FUSER_CHECK(
      split != nullptr && split->outer() == did && !split->innerSplit() &&
          std::find(logical.begin(), logical.end(), split->in()) !=
              logical.end(),
      tv->toString(), ": the device axis ", did->toString(),
      " must be the outer part of an outer split of a logical axis (",
      idsToString(logical),
      ") by the mesh size, e.g. tv->split(axis, D, /*inner_split=*/false).");
  return split;
}

int64_t position(const std::vector<IterDomain*>& ids, const IterDomain* id) {
  auto it = std::find(ids.begin(), ids.end(), id);
  return it == ids.end() ? -1 : static_cast<int64_t>(it - ids.begin());
}

} // namespace

std::string Sharding::toString() const {
  std::stringstream ss;
  ss << (mesh.empty() ? std::string("no mesh") : mesh.toString());
  if (partial) {
    ss << ", partial sums";
  } else if (axis < 0) {
    ss << ", replicated";
  } else {
    ss << ", split on axis " << axis;
  }
  return ss.str();
}

Sharding shardingOf(const TensorView* tv) {
  Sharding sharding;
  sharding.mesh = tv->getDeviceMesh();
  sharding.partial = tv->isPartialSum();
  IterDomain* did = deviceId(tv->getLoopDomain(), tv);
  if (did == nullptr) {
    did = deviceId(tv->getMaybeAllocationDomain(), tv);
  }
  if (did == nullptr) {
    return sharding;
  }
  FUSER_CHECK(
      !sharding.mesh.empty(), tv->toString(), " has the device axis ",
      did->toString(),
      " but no device mesh: call setDeviceMesh on it (Python: "
      "set_device_mesh).");
  Split* split = deviceSplit(did, tv);
  IterDomain* logical_id = split == nullptr ? did : split->in();
  Val* factor = split == nullptr ? did->extent() : split->factor();
  if (factor->isConstInt()) {
    FUSER_CHECK(
        factor->value().asInt() == sharding.mesh.size(), tv->toString(),
        " splits ", logical_id->toString(), " into ", factor->value().asInt(),
        " parts across ", sharding.mesh.toString(), " of ",
        sharding.mesh.size(), " devices; split by the mesh size.");
  }
  if (logical_id->isReduction()) {
    // A sum over the devices is pending.
    sharding.partial = true;
    return sharding;
  }
  FUSER_CHECK(
      !sharding.partial, tv->toString(),
      " is marked a partial sum and split on ", logical_id->toString(),
      "; a tensor is one or the other.");
  sharding.axis = position(tv->getLogicalDomain(), logical_id);
  return sharding;
}

void shard(TensorView* tv, const Sharding& sharding) {
  tv->setDeviceMesh(sharding.mesh);
  tv->setPartialSum(sharding.partial);
  if (!sharding.isSplit()) {
    return;
  }
  IterDomain* logical_id =
      tv->getLogicalDomain().at(static_cast<size_t>(sharding.axis));
  IterDomain* did = deviceId(tv->getMaybeAllocationDomain(), tv);
  if (did == nullptr) {
    did = deviceId(tv->getLoopDomain(), tv);
  }
  IterDomain* local = nullptr;
  if (did != nullptr) {
    Split* split = deviceSplit(did, tv);
    FUSER_INTERNAL_ASSERT(
        split != nullptr && split->in() == logical_id,
        "shard: ", tv->toString(), " is already sharded on another axis");
    local = split->inner();
  } else {
    std::tie(did, local) = IterDomain::split(
        logical_id,
        IrBuilder::create<Val>(sharding.mesh.size(), DataType::Index),
        /*inner_split=*/false);
    did->parallelize(ParallelType::DIDx);
  }
  auto replaced = [&](std::vector<IterDomain*> ids) {
    const int64_t at = position(ids, logical_id);
    if (at >= 0) {
      ids[static_cast<size_t>(at)] = local;
      ids.insert(ids.begin() + at, did);
    }
    return ids;
  };
  // The allocation says how a rank's shard lies in memory: inputs (bound
  // in global sizes, layout/device_counts.h) and tensors with a layout
  // of their own; the loop domain says it for the rest.
  const bool laid_out = tv->isFusionInput() || tv->hasAllocation();
  if (laid_out && position(tv->getMaybeAllocationDomain(), did) < 0) {
    const auto& ids = tv->getMaybeAllocationDomain();
    Contiguity contiguity = tv->getContiguity();
    const int64_t at = position(ids, logical_id);
    FUSER_CHECK(
        at >= 0, "Cannot shard ", tv->toString(), " on ",
        logical_id->toString(),
        ": its allocation domain transforms that axis; shard it in the "
        "allocation domain (an outer split by the mesh size, DIDx).");
    contiguity.insert(contiguity.begin() + at, true);
    tv->setAllocationDomain(replaced(ids), contiguity);
  }
  if (position(tv->getLoopDomain(), did) < 0) {
    tv->setLoopDomain(replaced(tv->getLoopDomain()));
  }
}

void unshard(TensorView* tv) {
  tv->setDeviceMesh(DeviceMesh());
  tv->setPartialSum(false);
  const auto& allocation = tv->getMaybeAllocationDomain();
  IterDomain* did = deviceId(allocation, tv);
  if (did != nullptr) {
    Split* split = deviceSplit(did, tv);
    std::vector<IterDomain*> ids;
    Contiguity contiguity;
    for (size_t i = 0; i < allocation.size(); ++i) {
      if (allocation[i] == did) {
        continue;
      }
      ids.push_back(
          split != nullptr && allocation[i] == split->inner() ? split->in()
                                                              : allocation[i]);
      contiguity.push_back(tv->getContiguity()[i]);
    }
    if (split == nullptr) {
      did->parallelize(ParallelType::Serial);
      ids.insert(ids.begin() + position(allocation, did), did);
      contiguity.insert(
          contiguity.begin() + position(allocation, did), std::optional(true));
    }
    tv->setAllocationDomain(ids, contiguity);
  }
  did = deviceId(tv->getLoopDomain(), tv);
  if (did != nullptr) {
    if (deviceSplit(did, tv) == nullptr) {
      did->parallelize(ParallelType::Serial);
    } else {
      tv->setLoopDomain(tv->getLogicalDomain());
    }
  }
  for (IterDomain* id : tv->getLogicalDomain()) {
    if (id->isDeviceDim()) {
      id->parallelize(ParallelType::Serial);
    }
  }
}

int64_t logicalPosition(const TensorView* tv, const IterDomain* id) {
  return position(tv->getLogicalDomain(), id);
}

IterDomain* splitAxisInConsumer(TensorView* producer, TensorView* consumer) {
  const Sharding from = shardingOf(producer);
  if (!from.isSplit()) {
    return nullptr;
  }
  const IdMap map = PairwiseLogicalDomainMap(producer, consumer)
                        .mapBroadcast(false)
                        .mapProducerToConsumer();
  auto it =
      map.find(producer->getLogicalDomain().at(static_cast<size_t>(from.axis)));
  if (it == map.end() || logicalPosition(consumer, it->second) < 0) {
    return nullptr;
  }
  return it->second;
}

int64_t tensorDim(const TensorView* tv, int64_t axis) {
  const auto& logical = tv->getLogicalDomain();
  return static_cast<int64_t>(std::count_if(
      logical.begin(), logical.begin() + axis,
      [](IterDomain* id) { return !id->isReduction(); }));
}

bool isMultiDevice(const Fusion* fusion) {
  for (Val* val : fusion->vals()) {
    auto* tv = dynamic_cast<TensorView*>(val);
    if (tv != nullptr && tv->hasDeviceMesh()) {
      return true;
    }
  }
  return false;
}

} // namespace fuser
