// Scans (doc/ops.md, "Scans"): torch.cumsum, torch.cumprod, torch.cummax
// and torch.cummin along one axis, with PyTorch's result types.
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

// The running maximum (minimum) of `tv` along `dim`, of tv's type, and the
// int64 index along `dim` of the element each value came from; a NaN,
// once met, is the value from there on (torch.cummax, torch.cummin).
struct ScanWithIndices {
  TensorView* values = nullptr;
  TensorView* indices = nullptr;
};
ScanWithIndices cummax(TensorView* tv, int64_t dim);
ScanWithIndices cummin(TensorView* tv, int64_t dim);

} // namespace fuser
