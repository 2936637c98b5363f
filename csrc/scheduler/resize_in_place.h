// Slices, pads and concatenations inside a pointwise kernel (doc/ops.md,
// "Slicing, padding and concatenation"): the kernel loops over the resized
// tensor and reads each input where the output position falls in it.
#pragma once

#include <fusion.h>
#include <ir/interface_nodes.h>

#include <string>
#include <vector>

namespace fuser::scheduler_utils {

// Whether every use of `input` is a slice, pad or cat. They read it at
// shifted positions, which a cache at the loop's positions cannot hold, so
// they read the input from global memory; such an input needs no cache
// (other ops read theirs through one).
bool isReadOnlyThroughResize(const TensorView* input);

// Whether every one of `tensor_exprs` is a slice. Alone, such a group is
// ATen's (its slices are views, no kernel): the pointwise scheduler
// declines it, and the segmenter merges it into the kernel after it, which
// then reads the sliced input in place.
bool onlySlices(const std::vector<Expr*>& tensor_exprs);

// Whether a pointwise kernel can compute the fusion's slices, pads and cats
// (true when it has none); otherwise `reason` says why. They must read
// fusion inputs, every tensor computed must share the output's loops, and a
// fusion that only slices is left to ATen, whose slices are views.
// (transform/resize_to_inputs.h turns resizes of computed tensors into
// resizes of inputs before the fusion is cut.)
bool resizesReadInPlace(Fusion* fusion, std::string* reason);

} // namespace fuser::scheduler_utils
