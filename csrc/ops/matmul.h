// Matrix products (doc/matmul.md §1): an MmaOp that accumulates in float,
// then a cast back to the operands' type.
#pragma once

#include <ir/mma_op.h>

#include <vector>

namespace fuser {

// out = a x b over the K axes, with the given roles per logical axis (see
// MmaOp); the result accumulates in float (double for double operands).
TensorView* mma(
    TensorView* a, TensorView* b, const std::vector<MmaRole>& a_roles,
    const std::vector<MmaRole>& b_roles);

// torch.matmul: 1-D operands are vectors; batch axes broadcast (a batch of
// only `a` is folded into its rows, as it would be in memory). Both
// operands have one type; so has the result.
TensorView* matmul(TensorView* a, TensorView* b);

// torch.nn.functional.linear: x [..., K] times weight [N, K] transposed
// (or [K]), plus bias [N] (or a 0-dim bias) in float before the result is
// cast to x's type.
TensorView* linear(
    TensorView* x, TensorView* weight, TensorView* bias = nullptr);

} // namespace fuser
