// Reductions. The output keeps the reduced axes as Reduction IDs in its
// logical domain (they are not part of the tensor's shape); keep_dim adds
// broadcast axes in their place.
#pragma once

#include <ir/interface_nodes.h>

#include <vector>

namespace fuser {

TensorView* reductionOp(
    ReductionOpType op, const std::vector<int64_t>& axes, TensorView* tv,
    bool keep_dim = false);

// Sums in the input's type, except integers and bools sum to int64 and Half
// and BFloat16 accumulate in Float; `dtype` overrides the result type.
TensorView* sum(
    TensorView* tv, const std::vector<int64_t>& axes, bool keep_dim = false,
    DataType dtype = DataType::Null);
// Multiplies with the same typing as sum.
TensorView* prod(
    TensorView* tv, const std::vector<int64_t>& axes, bool keep_dim = false,
    DataType dtype = DataType::Null);
// Max and min keep the input's type; NaN propagates, as in PyTorch.
TensorView* max(
    TensorView* tv, const std::vector<int64_t>& axes, bool keep_dim = false);
TensorView* min(
    TensorView* tv, const std::vector<int64_t>& axes, bool keep_dim = false);
TensorView* mean(
    TensorView* tv, const std::vector<int64_t>& axes, bool keep_dim = false);

// Welford's one-pass mean and variance (doc/reduction.md §4): the mean,
// the sum of squared deviations from it (var_sum) and the count (int64) of
// the reduced elements. Half and BFloat16 accumulate in Float; the mean
// and var_sum are Float or Double.
struct WelfordResult {
  TensorView* avg = nullptr;
  TensorView* var_sum = nullptr;
  TensorView* n = nullptr;
};
WelfordResult welford(TensorView* tv, const std::vector<int64_t>& axes);

// var_sum / max(0, n - correction), in the input's floating-point type,
// as torch.var (correction 1: the unbiased estimate).
TensorView* variance(
    TensorView* tv, const std::vector<int64_t>& axes, int64_t correction = 1,
    bool keep_dim = false);
// The variance and the mean of one Welford reduction, as torch.var_mean.
struct VarMeanResult {
  TensorView* var = nullptr;
  TensorView* mean = nullptr;
};
VarMeanResult varianceMean(
    TensorView* tv, const std::vector<int64_t>& axes, int64_t correction = 1,
    bool keep_dim = false);

} // namespace fuser
