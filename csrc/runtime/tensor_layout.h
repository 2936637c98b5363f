// An at::Tensor's layout against its fusion tensor (layout/tensor_layout.h
// holds the layout itself and the replay that makes it), and allocating a
// tensor of a given layout.
#pragma once

#include <expr/evaluator.h>
#include <ir/interface_nodes.h>
#include <layout/tensor_layout.h>

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace fuser {

// The layout of `tensor`, input `position` of the fusion, bound to `tv`
// (a negative position names an output in messages): stridedLayout on its
// sizes and strides after a rank check. Every failure is a UserError naming
// the input, its sizes and strides, the declared layout, what was expected
// and a fix.
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

// A new tensor laid out as `layout` (`options` give the dtype and device).
at::Tensor allocateTensor(
    const TensorLayout& layout, const at::TensorOptions& options);

} // namespace fuser
