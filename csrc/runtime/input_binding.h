// Binding fusion inputs (doc/design.md §6 "Binding inputs"): checking each
// at::Tensor against its TensorView (rank, dtype, device) and binding the
// logical extents to its sizes. The layout of each tensor (its allocation
// sizes and strides, checked against the declared contiguity) is
// runtime/tensor_layout.h.
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
#include <string>
#include <vector>

namespace fuser {

// The UserError for input `position` bound to `tv` (a negative position
// names an output): what the tensor is, the declared layout, the problem,
// what was expected and the fix. Binding and the layout replay
// (runtime/tensor_layout.h) report every failure through it.
[[noreturn]] void failInput(
    const TensorView* tv, const at::Tensor& tensor, int64_t position,
    const std::string& problem, const std::string& expected,
    const std::string& fix);

// A user error unless `tensor` has the rank of `tv`'s logical domain
// (reductions left out).
void checkRank(
    const TensorView* tv, const at::Tensor& tensor, int64_t position);

// Checks the rank (the logical domain without reductions) and binds each
// symbolic logical extent to the tensor's size: for an axis sharded over D
// devices the global extent, size * D. Constant extents and extents bound
// earlier (by another input sharing them) must match. A broadcast axis
// needs size 1. An extent computed from other scalars that cannot be
// evaluated yet is appended to `derived` with the size it takes, when
// given (bindFusionInputs binds it once every input is bound).
struct DerivedExtent {
  Val* extent = nullptr;
  int64_t size = 0;
};
void bindInputExtents(
    const TensorView* tv, const at::Tensor& tensor, ExpressionEvaluator& ee,
    int64_t input_position, std::vector<DerivedExtent>* derived = nullptr);

// Checks that `tensor` is defined, has tv's rank and dtype and, when
// `require_cuda`, lives on a CUDA device.
void validateInputTensor(
    const TensorView* tv, const at::Tensor& tensor, int64_t input_position,
    bool require_cuda = true);

// Validates and binds every fusion input: tensors with validateInputTensor
// and bindInputExtents, scalars (double, int64, bool, or a 0-dim tensor)
// bound to their Val; then the extents computed from scalars no input
// binds. The count must match fusion->inputs().
void bindFusionInputs(
    Fusion* fusion, const std::vector<c10::IValue>& inputs,
    ExpressionEvaluator& ee, bool require_cuda = true);

// After bindFusionInputs: the axes of different inputs that the fusion's
// ops join (exact-mapped: x [M, N] times a weight [N] broadcast over the
// rows), and the extents expand gives, must have one size; a mismatch is a
// user error naming both tensors and axes. (A kernel would bound each input by
// its own size and compute the rest from nothing.) Run once per input
// signature, on a cache miss.
void checkJoinedInputExtents(Fusion* fusion, ExpressionEvaluator& ee);

// Binds the inputs (bindFusionInputs) and records what the schedulers may
// know about this run: extents, each tensor input's layout (inputLayout,
// or a copy of the one in `layouts` at its position, made earlier on the
// same cache miss) and the alignment of its data pointer (doc/design.md §6).
RuntimeInfo makeRuntimeInfo(
    Fusion* fusion, const std::vector<c10::IValue>& inputs,
    bool require_cuda = true, const KnownLayouts& layouts = {});

// Per input of `fusion`, the layout `info` holds for it (null for a
// scalar): what a later step of the same cache miss passes on.
KnownLayouts layoutsOf(Fusion* fusion, const RuntimeInfo& info);

} // namespace fuser
