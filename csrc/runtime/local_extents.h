// Per-device ("local") extents of a tensor's IterDomains. A sharded tensor's
// logical extents are global (DESIGN §7), but each rank holds only its
// shard: an ID split into a device-parallel ID (DIDx{D}) and a rest is D
// times larger than the rank's at::Tensor along it. Binding inputs and
// allocating outputs both need that factor.
#pragma once

#include <expr/evaluator.h>
#include <ir/interface_nodes.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace fuser {

class LocalExtents {
 public:
  // Evaluates the extents of `tv`'s device-parallel IDs (usually constant
  // split factors); a user error when one is unknown, or when a device ID
  // is derived from a merge (not supported).
  LocalExtents(const TensorView* tv, ExpressionEvaluator& ee);

  // How many devices `id` is spread over: the product of the extents of
  // the device-parallel IDs derived from it on the way to the allocation
  // domain (itself included). 1 for unsharded IDs.
  int64_t deviceCount(const IterDomain* id) const;

  // The extent of `id` on one device: 1 for device-parallel and broadcast
  // IDs, otherwise the evaluated extent divided by deviceCount(id). Needs
  // the extent to be evaluable (inputs bound).
  int64_t localExtent(const IterDomain* id) const;

  // localExtent of the logical IDs, reductions left out: the sizes of the
  // rank's at::Tensor.
  std::vector<int64_t> logicalSizes() const;
  // localExtent of the allocation IDs, reductions left out.
  std::vector<int64_t> allocationSizes() const;

 private:
  const TensorView* tv_;
  ExpressionEvaluator& ee_;
  std::unordered_map<const IterDomain*, int64_t> device_counts_;
};

} // namespace fuser
