// The matmul pipeline of a kernel (doc/matmul.md §3), found in the analysis
// phase: the MmaOp and its tile, the operands' shared-memory caches that the
// bulk copy engine fills (their copies are issued by the pipeline, not by
// loops), the tensor maps the runtime encodes for the operands, and the IDs
// of the accumulator's tile loop that the tile's coordinates come from. It
// books the dynamic shared memory, the tensor-map parameters and the
// launch's producer warpgroup in the LoweredKernel.
#pragma once

#include <device_lower/kernel_ir.h>
#include <ir/mma_op.h>
#include <layout/tma_layout.h>

#include <unordered_set>
#include <vector>

namespace fuser {

class GpuLower;
struct LoweredKernel;

class MmaPipeline {
 public:
  // Books in `lower`'s kernel; operand extents are the ones `lower`
  // resolves (GpuLower::resolveExtent).
  MmaPipeline(GpuLower& lower, Fusion* fusion);

  // Null when the kernel has no matrix product.
  MmaOp* mma() const {
    return mma_;
  }
  // A copy into an operand's shared-memory cache.
  bool isBulkCopy(const Expr* expr) const {
    return bulk_copies_.count(expr) > 0;
  }
  // The accumulator's merged tile axis (split by the persistent grid),
  // its M and N tile axes, its batch axes and its k-step axis.
  IterDomain* tiles() const {
    return tiles_;
  }
  IterDomain* mTile() const {
    return m_tile_;
  }
  IterDomain* nTile() const {
    return n_tile_;
  }
  const std::vector<IterDomain*>& batch() const {
    return batch_;
  }
  IterDomain* kTile() const {
    return k_tile_;
  }

 private:
  // The split of `logical` in the accumulator's loop transforms: its
  // outer output.
  IterDomain* outerOfSplit(IterDomain* logical) const;
  // The shared-memory cache `cache` of a global operand: its tensor map,
  // whose box is 1 / `slices` of the tile (MmaTileConfig::cluster).
  void bookOperand(
      GpuLower& lower, TensorView* cache, int64_t tile_mn, int64_t slices);

  MmaOp* mma_ = nullptr;
  std::unordered_set<const Expr*> bulk_copies_;
  IterDomain* tiles_ = nullptr;
  IterDomain* m_tile_ = nullptr;
  IterDomain* n_tile_ = nullptr;
  std::vector<IterDomain*> batch_;
  IterDomain* k_tile_ = nullptr;
};

} // namespace fuser
