// Mapping between fuser's DataType and ATen's ScalarType, used wherever the
// runtime meets at::Tensor (binding inputs, allocating outputs, the ATen
// evaluator).
#pragma once

#include <ir/type.h>

#include <c10/core/ScalarType.h>

namespace fuser {

// The ATen type that holds values of `dtype`. Index maps to Long (int64),
// the widest index type a kernel can use. Null has no ATen type (internal
// error).
at::ScalarType toAtenType(DataType dtype);

// The fuser type of an ATen tensor element. Types fuser does not model
// (complex, int8, float8, ...) are a user error naming the supported ones.
DataType fromAtenType(at::ScalarType type);

} // namespace fuser
