// Ops that change a tensor's shape without computing: broadcast, expand,
// permute, reshape.
#pragma once

#include <ir/interface_nodes.h>

#include <initializer_list>
#include <optional>
#include <vector>

namespace fuser {

// Inserts a broadcast axis wherever is_broadcast_dim is true; the number of
// false entries must equal the input's rank.
TensorView* broadcast(
    TensorView* tv, const std::vector<bool>& is_broadcast_dim);

// torch.expand with one extent per axis (no new leading axes: broadcast
// first). A broadcast axis given an extent other than 1 or -1 becomes an
// Iteration axis of that extent; any other axis keeps its own, and an
// extent given for it must be -1 or its size (checked here when both are
// known, else when the fusion runs). An ExpandOp (ir/internal_nodes.h).
TensorView* expand(TensorView* tv, const std::vector<Val*>& extents);

// torch.unsqueeze: a broadcast axis inserted at `dim` (negative counts from
// the end of the output).
TensorView* unsqueeze(TensorView* tv, int64_t dim);
// torch.squeeze of `dims`: each must have size 1 (a broadcast axis, or an
// extent that is 1 when the fusion runs). A view of the other axes, made
// by reshape (so a segment of its own, doc/segmentation.md §5); squeezing
// every axis (a rank-0 result) is not supported.
TensorView* squeeze(TensorView* tv, const std::vector<int64_t>& dims);

// Output axis i is input axis new2old[i]. The output's root domain keeps the
// input's order and its logical domain is the permutation of it.
TensorView* permute(TensorView* tv, const std::vector<int64_t>& new2old);
// The new2old of a permute (a Set whose output's logical domain reorders
// its root, as permute() makes it), or nothing for any other expr.
std::optional<std::vector<int64_t>> permutationOf(const Expr* expr);
// Swaps two axes.
TensorView* transpose(TensorView* tv, int64_t dim0, int64_t dim1);

// Reshape to `new_sizes` (one entry may be -1, inferred from the element
// count). The output's root mirrors the input's logical domain; its logical
// domain is made from root by a merge and splits (ViewOp). Known extents
// and sizes are checked here; symbolic ones (the sizes may be scalar
// inputs, or expressions of the input's extents) when the view runs, which
// is always as a segment of its own (no scheduler takes a ViewOp).
TensorView* reshape(TensorView* tv, const std::vector<int64_t>& new_sizes);
TensorView* reshape(TensorView* tv, const std::vector<Val*>& new_sizes);
// reshape(tv, {4, -1}) means sizes, never a vector's length.
inline TensorView* reshape(
    TensorView* tv, std::initializer_list<int64_t> new_sizes) {
  return reshape(tv, std::vector<int64_t>(new_sizes));
}

} // namespace fuser
