// How one tensor of a fusion lies in memory for one input signature
// (doc/design.md §6): the sizes and strides of its at::Tensor, the logical
// extents kernels see, and the sizes and strides of its allocation axes.
// One replay of the tensor's logical -> allocation exprs makes it: for an
// input from the at::Tensor's sizes and strides, checked against the
// declared layout; for a tensor the runtime allocates (an output, an
// intermediate between segments), densely in allocation order. The runtime
// makes each layout once, on a cache miss, and keeps it with the cached
// runtime; binding, output allocation and kernel arguments only read it.
#pragma once

#include <expr/evaluator.h>
#include <ir/interface_nodes.h>

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace fuser {

struct TensorLayout {
  // The at::Tensor's sizes and strides (on this device: a sharded axis
  // holds the rank's shard).
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  // The logical extents kernels see: a sharded axis counts every device's
  // part.
  std::vector<int64_t> global_sizes;
  // Per allocation ID, reductions left out, outermost first. A
  // device-parallel ID has size 1 (the tensor is the local shard). The
  // stride of a size-1 ID does not affect addressing, so it is the one it
  // would have if it were contiguous (the next inner stride times its
  // size); a broadcast ID keeps the tensor's stride.
  std::vector<int64_t> allocation_sizes;
  std::vector<int64_t> allocation_strides;
  // Elements of a dense buffer in allocation order (the product of the
  // allocation sizes; a split that does not divide pads it).
  int64_t buffer_numel = 0;
};

// The layout of `tensor`, input `position` of the fusion, bound to `tv`
// (a negative position names an output in messages). Replays logical ->
// allocation on (size, stride) pairs: splits need a divisible size (outer:
// size/f, stride*f; inner: f, stride; for an outer split the factor is the
// outer extent); merges need stride(outer) == stride(inner) * size(inner)
// unless one side has size 1. Each allocation ID marked contiguous must
// have stride size(next) * stride(next), with `next` the next inner ID
// that is not broadcast (stride 1 when none). Every failure is a UserError
// naming the input, its sizes and strides, the declared layout, what was
// expected and a fix. Extents and split factors are evaluated with `ee`.
TensorLayout inputLayout(
    const TensorView* tv, const at::Tensor& tensor, ExpressionEvaluator& ee,
    int64_t position);

// Whether `tensor` has a layout `tv` admits (inputLayout accepts it).
bool admitsLayout(
    const TensorView* tv, const at::Tensor& tensor, ExpressionEvaluator& ee);

// Whether a kernel compiled for a fresh dense tensor of `tensor`'s sizes
// can read `tensor` in the same vectors: its data 16-byte aligned and
// every stride but a unit one a multiple of 16 bytes. The runtime compiles
// the segments after an intermediate against such a stand-in
// (runtime/fusion_kernel_runtime.cpp), so what an ExprEval segment hands
// on must be one.
bool readableAsDense(const at::Tensor& tensor);

// The layout of a new tensor for `tv`: dense in allocation order, viewed
// with the logical sizes, so an allocation [i/2, 2] of [i] is a plain
// contiguous tensor and a permuted allocation gives permuted strides.
// Extents must be evaluable with `ee`.
TensorLayout denseLayout(const TensorView* tv, ExpressionEvaluator& ee);

// A new tensor laid out as `layout` (`options` give the dtype and device).
at::Tensor allocateTensor(
    const TensorLayout& layout, const at::TensorOptions& options);

// Row-major strides of `sizes` (the last is 1; a size of 0 counts as 1 so
// that strides stay meaningful for empty tensors, as in PyTorch).
std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes);

} // namespace fuser
