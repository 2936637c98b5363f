// Vectorized accesses in lowering (doc/indexing.md §5): which loops are
// emitted as one vector access, whether its lanes are consecutive elements
// of each tensor it touches, and the run-time conditions a kernel books for
// the runtime to check (csrc/layout/vectorization.h holds the rules
// themselves).
#pragma once

#include <device_lower/analysis/loop_promotion.h>
#include <device_lower/kernel_ir.h>

#include <optional>
#include <vector>

namespace fuser {

class GpuLower;

// Whether `expr` moves elements without computing on them, and may so be
// one vector access: a LoadStoreOp (set, a cache), or a BroadcastOp, which
// adds axes of one position and lowers to a set (a weight read into the
// row's loops).
bool isCopy(const Expr* expr);

// Whether a vectorized loop holds a single copy that is emitted as one
// vector access.
bool isVectorizedCopyLoop(const kir::ForLoop* loop);

// The allocation axes of a global `tv` whose unit-stride run the lanes of
// the vectorized loop over `id` stay within, when they are consecutive
// elements of `tv`: the innermost leaves of the merges that made `id` (or
// the input of the inner split that made it; broadcast leaves, of one
// position, left out) are the innermost contiguous allocation axes, in
// order, up to the first leaf that is not; the run is those axes, and the
// lanes stay in one run when its size is a multiple of the width (a
// run-time check). nullopt when the innermost leaf is not such an axis. An
// empty run for a register or shared buffer, whose innermost axis must be
// the vectorized one. Mappings and extents are `lower`'s.
struct VectorRun {
  std::vector<IterDomain*> axes;
  // Kernel argument positions alloc_stride[k] of the axes outside the run.
  std::vector<size_t> strided_positions;
};
std::optional<VectorRun> vectorRun(
    GpuLower& lower, TensorView* tv, IterDomain* id);

// Checks every vectorized copy of `fusion` (a copy whose output's innermost
// loop ID is vectorized) against the tensors it reads and writes, and
// books the run-time conditions of the global ones in the kernel
// (LoweredKernel::vectorization_checks). A user error for a schedule that
// vectorizes lanes that are not consecutive. Part of lowering's analysis
// phase (device_lower/lower.cpp), which books in `lower`'s kernel.
void bookVectorizedAccesses(
    GpuLower& lower, Fusion* fusion, const LoopPromotion& promotion);

} // namespace fuser
