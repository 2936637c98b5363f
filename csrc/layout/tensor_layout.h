// How one tensor of a fusion lies in memory for one input signature
// (doc/design.md §6): the sizes and strides of its tensor, the logical
// extents kernels see, and the sizes and strides of its allocation axes.
// One replay of the tensor's logical -> allocation exprs makes it: for an
// input from its sizes and strides, checked against the declared layout;
// for a tensor the runtime allocates (an output, an intermediate between
// segments), densely in allocation order. ATen-free: the runtime passes an
// at::Tensor's sizes and strides (runtime/tensor_layout.h), makes each
// input's layout once per cache miss and hands it to scheduling
// (RuntimeInfo) and to the kernel's launch plan.
#pragma once

#include <expr/evaluator.h>
#include <ir/interface_nodes.h>

#include <cstdint>
#include <functional>
#include <string>
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

// Per fusion input, the layout its caller made already (null: not a tensor
// or not made), so that a cache miss makes each input's layout once.
using KnownLayouts = std::vector<const TensorLayout*>;

// Reports a tensor that does not fit the declared layout: the problem, what
// was expected and a fix. It must throw (the runtime's throws a UserError
// naming the input, runtime/input_binding.h).
using LayoutFailure = std::function<void(
    const std::string& problem, const std::string& expected,
    const std::string& fix)>;

// The layout of a tensor of `sizes` and `strides` (one per logical ID of
// `tv`, reductions left out) bound to `tv`. Replays logical -> allocation
// on (size, stride) pairs: splits need a divisible size (outer: size/f,
// stride*f; inner: f, stride; for an outer split the factor is the outer
// extent); merges need stride(outer) == stride(inner) * size(inner) unless
// one side has size 1. Each allocation ID marked contiguous must have
// stride size(next) * stride(next), with `next` the next inner ID that is
// not broadcast (stride 1 when none). Each failure goes to `fail`. Extents
// and split factors are evaluated with `ee`.
TensorLayout stridedLayout(
    const TensorView* tv, const std::vector<int64_t>& sizes,
    const std::vector<int64_t>& strides, ExpressionEvaluator& ee,
    const LayoutFailure& fail);

// How many times this process has derived a tensor's layout from its
// strides (stridedLayout): tests count the replays of a cache miss.
int64_t inputLayoutCount();

// The layout of a new tensor for `tv`: dense in allocation order, viewed
// with the logical sizes, so an allocation [i/2, 2] of [i] is a plain
// contiguous tensor and a permuted allocation gives permuted strides.
// Extents must be evaluable with `ee`.
TensorLayout denseLayout(const TensorView* tv, ExpressionEvaluator& ee);

// Row-major strides of `sizes` (the last is 1; a size of 0 counts as 1 so
// that strides stay meaningful for empty tensors, as in PyTorch).
std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes);

} // namespace fuser
