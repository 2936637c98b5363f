// Random tensors (doc/ops.md, "Random numbers"): element i, i its logical
// linear index, is a function of (seed, offset, i) alone, so a fusion gives
// the same values for a seed whatever its schedule.
#pragma once

#include <ir/interface_nodes.h>

#include <vector>

namespace fuser {

// Uniform in [low, high), of `dtype` (a floating type), of sizes `shape`
// (integer scalars). `seed` and `offset` are integer scalars (constants or
// fusion inputs); a new offset gives values independent of the others.
TensorView* uniform(
    const std::vector<Val*>& shape, Val* low, Val* high, Val* seed, Val* offset,
    DataType dtype = DataType::Float);

// Normal of mean `mean` and standard deviation `std`, as uniform.
TensorView* normal(
    const std::vector<Val*>& shape, Val* mean, Val* std, Val* seed, Val* offset,
    DataType dtype = DataType::Float);

} // namespace fuser
