// Binding fusion inputs (DESIGN §6 "Binding inputs"): checking each
// at::Tensor against its TensorView (rank, dtype, device), binding the
// logical extents to its sizes, and inferring the sizes and strides of its
// allocation domain by replaying logical -> allocation on (size, stride)
// pairs, checking the declared contiguity on the way.
//
// Every failure is a UserError that names the input (position and tensor),
// its sizes and strides, the declared allocation domain and contiguity,
// what was expected, and how to fix it.
#pragma once

#include <expr/evaluator.h>
#include <fusion.h>
#include <ir/interface_nodes.h>
#include <scheduler/runtime_info.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <vector>

namespace fuser {

// Sizes and strides of the allocation IDs of an input, reductions left out,
// outermost first. Device-parallel IDs have size 1 (the tensor is the local
// shard). The stride of a size-1 ID does not affect addressing, so it is
// reported as if the ID were contiguous (the next inner stride times its
// size) no matter what the tensor says; broadcast IDs keep the tensor's
// stride.
struct AllocationSizesAndStrides {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

// `tensor` is input `input_position` of the fusion, bound to `tv` (a
// negative position means an output tensor, in messages). Splits
// need a divisible size (outer: size/f, stride*f; inner: f, stride; for an
// outer split the factor is the outer extent); merges need stride(outer) ==
// stride(inner) * size(inner) unless one side has size 1. Each allocation
// ID marked contiguous must have stride size(next) * stride(next), with
// `next` the next inner ID that is not broadcast (stride 1 when none).
// Split factors are evaluated with `ee`.
AllocationSizesAndStrides inferAllocationSizesAndStrides(
    const TensorView* tv, const at::Tensor& tensor, ExpressionEvaluator& ee,
    int64_t input_position);

// Checks the rank (the logical domain without reductions) and binds each
// symbolic logical extent to the tensor's size: for an axis sharded over D
// devices the global extent, size * D. Constant extents and extents bound
// earlier (by another input sharing them) must match. A broadcast axis
// needs size 1.
void bindInputExtents(
    const TensorView* tv, const at::Tensor& tensor, ExpressionEvaluator& ee,
    int64_t input_position);

// Checks that `tensor` is defined, has tv's rank and dtype and, when
// `require_cuda`, lives on a CUDA device.
void validateInputTensor(
    const TensorView* tv, const at::Tensor& tensor, int64_t input_position,
    bool require_cuda = true);

// Validates and binds every fusion input: tensors with validateInputTensor
// and bindInputExtents, scalars (double, int64, bool, or a 0-dim tensor)
// bound to their Val. The count must match fusion->inputs().
void bindFusionInputs(
    Fusion* fusion, const std::vector<c10::IValue>& inputs,
    ExpressionEvaluator& ee, bool require_cuda = true);

// Binds the inputs (bindFusionInputs) and records what the schedulers may
// know about this run: extents, each tensor input's allocation sizes and
// strides, and the alignment of its data pointer (DESIGN §6).
RuntimeInfo makeRuntimeInfo(
    Fusion* fusion, const std::vector<c10::IValue>& inputs,
    bool require_cuda = true);

} // namespace fuser
