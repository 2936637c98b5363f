// How many devices each IterDomain of a tensor is spread over. A sharded
// tensor's logical extents are global (doc/design.md §7), but each rank
// holds only its shard: an ID split into a device-parallel ID (DIDx{D}) and
// a rest is D times larger than the rank's at::Tensor along it. Binding
// inputs and laying out tensors both need that factor
// (csrc/runtime/tensor_layout.h).
#pragma once

#include <expr/evaluator.h>
#include <ir/interface_nodes.h>

#include <cstdint>
#include <unordered_map>

namespace fuser {

class DeviceCounts {
 public:
  // Evaluates the extents of `tv`'s device-parallel IDs (usually constant
  // split factors); a user error when one is unknown, or when a device ID
  // is derived from a merge (not supported).
  DeviceCounts(const TensorView* tv, ExpressionEvaluator& ee);

  // The product of the extents of the device-parallel IDs derived from
  // `id` on the way to the allocation domain (itself included); 1 for
  // unsharded IDs.
  int64_t of(const IterDomain* id) const;

 private:
  std::unordered_map<const IterDomain*, int64_t> counts_;
};

// Whether `tv`'s allocation domain has a device-parallel axis: each rank
// holds only its shard.
bool isSharded(const TensorView* tv);

} // namespace fuser
