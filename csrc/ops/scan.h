// Scans (doc/ops.md, "Scans"): torch.cumsum and torch.cumprod along one
// axis, with PyTorch's result types.
#pragma once

#include <ir/interface_nodes.h>

namespace fuser {

// Running sums / products of `tv` along logical axis `dim` (negative counts
// from the end). The result is `dtype` if given, else int64 for integer and
// bool tensors and `tv`'s type otherwise.
TensorView* cumsum(
    TensorView* tv, int64_t dim, DataType dtype = DataType::Null);
TensorView* cumprod(
    TensorView* tv, int64_t dim, DataType dtype = DataType::Null);

} // namespace fuser
