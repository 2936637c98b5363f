// Indexing ops with torch's semantics (doc/ops.md, "Indexing"): select,
// index_select, gather (take_along_axis) and scatter. `dim` may count from
// the end. Index tensors are integer tensors; an index out of range is a
// user error when the op runs.
#pragma once

#include <ir/interface_nodes.h>

namespace fuser {

// torch.select: `tv` at position `index` (an integer scalar, negative
// counting from the end) of axis `dim`, which the result drops.
TensorView* select(TensorView* tv, int64_t dim, Val* index);

// torch.index_select: the positions `index` (a 1-D integer tensor, each in
// [0, size)) of axis `dim`, in the index's order.
TensorView* indexSelect(TensorView* tv, int64_t dim, TensorView* index);

// torch.gather: out[..., i, ...] = tv[..., index[..., i, ...], ...] along
// `dim`; the result has `index`'s shape (same rank as `tv`).
TensorView* gather(TensorView* tv, int64_t dim, TensorView* index);

// torch.scatter: `tv` with src[..., i, ...] written at index[..., i, ...]
// along `dim` (`index` and `src` of the same rank as `tv`); of duplicate
// indices one write wins, as in PyTorch, which does not say which.
TensorView* scatter(
    TensorView* tv, int64_t dim, TensorView* index, TensorView* src);

} // namespace fuser
