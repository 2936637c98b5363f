// PyTorch's type promotion: tensors decide the result unless a scalar
// operand is of a higher category (bool < integer < floating point), in
// which case the default type of that category is used (float, int64).
#pragma once

#include <ir/base_nodes.h>

#include <vector>

namespace fuser {

// Promotes two dtypes as torch.promote_types does.
DataType promoteTypes(DataType a, DataType b);

// The result dtype of an elementwise op over `operands` (tensors and
// scalars), following PyTorch's rules.
DataType computeTypePromotion(const std::vector<Val*>& operands);

// The dtype arithmetic is done in: Half and BFloat16 compute in Float.
DataType computeDataType(DataType dtype);

// Result dtype of a floating-point function (exp, sin, true division):
// integers and bools become Float.
DataType floatResultType(DataType dtype);

} // namespace fuser
