// Allocating fusion outputs in their allocation layout. DESIGN §6
// "Outputs": a contiguous buffer in allocation order, viewed with the
// logical sizes and the strides the allocation implies, so that an
// allocation [i/2, 2] of [i] is a plain contiguous tensor and a permuted
// allocation gives permuted strides.
#pragma once

#include <expr/evaluator.h>
#include <ir/interface_nodes.h>

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace fuser {

// Row-major strides of `sizes` (the last is 1; a size of 0 counts as 1 so
// that strides stay meaningful for empty tensors, as in PyTorch).
std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes);

// Strides of `tv`'s logical IDs (reductions left out) given strides of its
// allocation IDs (one per non-reduction allocation ID, in order), found by
// replaying allocation -> logical backwards: a split's input takes its
// inner's stride (its outer's when the inner is device-parallel), a merge's
// inner takes the output's stride and its outer that times the inner's
// size. `local_size` gives the per-device size of an ID. Internal error when
// a split's outer stride is not its inner stride times the inner size, which
// cannot happen for strides from contiguousStrides.
std::vector<int64_t> logicalStridesFromAllocation(
    const TensorView* tv, const std::vector<int64_t>& allocation_strides,
    const std::function<int64_t(const IterDomain*)>& local_size);

// The sizes of `tv`'s at::Tensor on this device: its logical extents
// (reductions left out; device-sharded axes divided by the device count).
std::vector<int64_t> logicalSizes(
    const TensorView* tv, ExpressionEvaluator& ee);

// A new tensor for `tv` with the logical sizes and the strides of a
// contiguous buffer in allocation order. `options` gives the device; the
// dtype is tv's. Extents must be evaluable with `ee`.
at::Tensor allocateOutput(
    const TensorView* tv, ExpressionEvaluator& ee,
    const at::TensorOptions& options);

} // namespace fuser
