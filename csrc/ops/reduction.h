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
TensorView* max(
    TensorView* tv, const std::vector<int64_t>& axes, bool keep_dim = false);
TensorView* min(
    TensorView* tv, const std::vector<int64_t>& axes, bool keep_dim = false);
TensorView* mean(
    TensorView* tv, const std::vector<int64_t>& axes, bool keep_dim = false);

} // namespace fuser
