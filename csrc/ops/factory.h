// Tensors made from scalars alone (full, zeros, ones, iota) and the
// triangular masks built from them (triu, tril), as in PyTorch
// (doc/ops.md "Factories").
#pragma once

#include <ir/interface_nodes.h>

#include <vector>

namespace fuser {

// A tensor of sizes `shape` (integer scalars, constant or not) with every
// element `fill_value`, converted to `dtype`.
TensorView* full(
    const std::vector<Val*>& shape, Val* fill_value, DataType dtype);
TensorView* zeros(const std::vector<Val*>& shape, DataType dtype);
TensorView* ones(const std::vector<Val*>& shape, DataType dtype);

// A tensor of sizes `shape` and `dtype` without a definition, for the ops
// that make their outputs from scalars (full, iota, the random ops of
// ops/random.h); each size is checked as `op`'s (an integer scalar, not a
// negative constant).
TensorView* emptyTensor(
    const std::vector<Val*>& shape, DataType dtype, const char* op);

// The 1-D tensor [start, start + step, ..., start + (length - 1) * step]
// of `dtype` (an integer or floating-point type); start defaults to 0 and
// step to 1. torch.arange(start, start + length * step, step).
TensorView* iota(
    Val* length, Val* start = nullptr, Val* step = nullptr,
    DataType dtype = DataType::Int);

// torch.triu / torch.tril over the last two axes of `tv` (rank >= 2): the
// elements with column - row >= diagonal (triu) or <= diagonal (tril) are
// kept, the others are 0.
TensorView* triu(TensorView* tv, int64_t diagonal = 0);
TensorView* tril(TensorView* tv, int64_t diagonal = 0);

} // namespace fuser
