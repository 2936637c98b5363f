// Views an ATen segment hands to later segments (doc/segmentation.md §9).
// An ExprEval segment that slices or reshapes a tensor (the q, k and v
// heads of a fused QKV product) gets ATen's views of it; a kernel that
// reads such a view through its strides costs one read, where laying it
// out densely first costs a copy kernel more. The plan is made once per
// cache miss, after segmentation: the ATen segments run on meta tensors
// (no memory, no launch) to learn each view's sizes, strides and pointer
// alignment, and an intermediate whose view a layout of its own can
// describe gets that layout (its allocation axes ordered by stride, each
// marked contiguous where it is). The consumers are then compiled against
// a stand-in of exactly that layout and alignment, and the ExprEval
// executor hands on ATen's view where it matches, else a copy laid out so.
#pragma once

#include <expr/evaluator.h>
#include <layout/tensor_layout.h>
#include <layout/vectorization.h>
#include <segmentation/segmented_fusion.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace fuser {

struct HandedView {
  // Its layout, bound to its tensor (sizes and strides as ATen makes them).
  TensorLayout layout;
  // The alignment class of its data pointer (layout/vectorization.h:
  // alignmentOf).
  int64_t alignment = kMaxVectorBytes;
};

using HandedViews = std::unordered_map<const Val*, HandedView>;

// Plans the views that the groups of `segmented` for which
// `run_by_aten(group)` holds hand to later groups, for a run on `inputs`
// (`ee` bound to them), and sets the allocation domain of each planned
// intermediate of the complete fusion to describe its view. Intermediates
// the fusion returns, and those with a layout of the user's, are left as
// they are (laid out densely by the executor).
HandedViews planHandedViews(
    SegmentedFusion& segmented, const std::vector<c10::IValue>& inputs,
    ExpressionEvaluator& ee,
    const std::function<bool(const SegmentedGroup&)>& run_by_aten);

// A tensor in fresh memory of `view`'s sizes and strides whose data
// pointer has its alignment class: the stand-in that later segments are
// compiled against, and what a view that does not match is copied into.
at::Tensor allocateHandedView(
    const HandedView& view, const at::TensorOptions& options);

// One line per planned view, by tensor name: its sizes, strides and
// alignment (FUSER_DUMP=segmented_fusion prints it after the groups).
std::string handedViewsToString(const HandedViews& views);

// Whether a kernel compiled against allocateHandedView(view) reads
// `tensor` correctly: the same sizes, the same strides along every axis
// of more than one element, and a pointer at least as aligned.
bool matchesHandedView(const at::Tensor& tensor, const HandedView& view);

} // namespace fuser
