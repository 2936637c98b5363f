// Slicing, padding and concatenation with torch's semantics (doc/ops.md,
// "Slicing, padding and concatenation").
#pragma once

#include <ir/interface_nodes.h>

#include <vector>

namespace fuser {

// One axis of a slice, Python's start:stop:step; a null bound is the
// default (0, the axis's size, 1). Negative bounds count from the end and
// bounds are clamped to the axis, as torch's slicing does; the step must be
// positive.
struct SliceRange {
  Val* start = nullptr;
  Val* stop = nullptr;
  Val* step = nullptr;
};

// A slice bound along an axis of size `extent` as torch's slicing reads
// it: negative counts from the end, then clamped to [0, extent]. The
// output's extents and the kernels reading a slice in place both use it.
Val* sliceBound(Val* bound, Val* extent);

// `tv[r0, r1, ...]`, one range per axis from the first (fewer: the rest
// whole).
TensorView* slice(TensorView* tv, const std::vector<SliceRange>& ranges);

// torch.nn.functional.pad(tv, pad_widths, value=value): `pad_widths` are
// integer scalars, (left, right) pairs from the last axis backwards; a
// negative width trims. `value` (default 0) fills the new elements.
TensorView* pad(
    TensorView* tv, const std::vector<Val*>& pad_widths, Val* value = nullptr);

// torch.cat along `dim`: the tensors (promoted to one type) have the same
// rank and the same sizes but along `dim`.
TensorView* cat(const std::vector<TensorView*>& tensors, int64_t dim);

} // namespace fuser
