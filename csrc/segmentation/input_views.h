// Outputs that are views of the fusion's inputs (doc/segmentation.md §8):
// a reshape, permute, slice, squeeze, broadcast or expand of an input that
// the fusion returns is returned as ATen's view of that input, as PyTorch
// returns it, with no kernel and no copy. Those exprs form one segment of
// their own that runs on the host (an ExprEval segment that keeps ATen's
// views).
#pragma once

#include <fusion.h>

#include <vector>

namespace fuser {

// Whether `expr` only changes how its input's elements are addressed:
// a slice, a reshape (squeeze included), a permute (a copy whose logical
// domain permutes its root), a broadcast or an expand.
bool isViewOp(const Expr* expr);

// The exprs of `tensor_exprs` (topologically, each writing a tensor) whose
// result is a view of a fusion input through view ops only and is read
// only by such exprs or returned, where a returned tensor has no layout
// of its own (a user who gave it one asked for it to be written).
// Topologically ordered.
std::vector<Expr*> returnedInputViews(const std::vector<Expr*>& tensor_exprs);

// Whether a segment of `exprs` that returns `outputs` only views its
// inputs: every expr that writes a tensor a view op (the scalar exprs of
// sizes aside), and no output with a layout of its own.
bool onlyViews(
    const std::vector<Expr*>& exprs, const std::vector<Val*>& outputs);

} // namespace fuser
