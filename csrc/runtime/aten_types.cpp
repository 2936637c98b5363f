#include <runtime/aten_types.h>

#include <base/exceptions.h>

namespace fuser {

at::ScalarType toAtenType(DataType dtype) {
  switch (dtype) {
    case DataType::Bool:
      return at::ScalarType::Bool;
    case DataType::Int8:
      return at::ScalarType::Char;
    case DataType::UInt8:
      return at::ScalarType::Byte;
    case DataType::Int16:
      return at::ScalarType::Short;
    case DataType::Int32:
      return at::ScalarType::Int;
    case DataType::Int:
    case DataType::Index:
      return at::ScalarType::Long;
    case DataType::Float8_e4m3fn:
      return at::ScalarType::Float8_e4m3fn;
    case DataType::Float8_e5m2:
      return at::ScalarType::Float8_e5m2;
    case DataType::Half:
      return at::ScalarType::Half;
    case DataType::BFloat16:
      return at::ScalarType::BFloat16;
    case DataType::Float:
      return at::ScalarType::Float;
    case DataType::Double:
      return at::ScalarType::Double;
    case DataType::ComplexFloat:
      return at::ScalarType::ComplexFloat;
    case DataType::ComplexDouble:
      return at::ScalarType::ComplexDouble;
    case DataType::UInt64:
      return at::ScalarType::UInt64;
    case DataType::Float4_e2m1fn_x2:
      return at::ScalarType::Float4_e2m1fn_x2;
    case DataType::WelfordFloat:
    case DataType::WelfordDouble:
    case DataType::Null:
      break;
  }
  FUSER_ERROR("DataType ", dtype, " has no ATen scalar type");
}

DataType fromAtenType(at::ScalarType type) {
  switch (type) {
    case at::ScalarType::Bool:
      return DataType::Bool;
    case at::ScalarType::Char:
      return DataType::Int8;
    case at::ScalarType::Byte:
      return DataType::UInt8;
    case at::ScalarType::Short:
      return DataType::Int16;
    case at::ScalarType::Int:
      return DataType::Int32;
    case at::ScalarType::Long:
      return DataType::Int;
    case at::ScalarType::Float8_e4m3fn:
      return DataType::Float8_e4m3fn;
    case at::ScalarType::Float8_e5m2:
      return DataType::Float8_e5m2;
    case at::ScalarType::Half:
      return DataType::Half;
    case at::ScalarType::BFloat16:
      return DataType::BFloat16;
    case at::ScalarType::Float:
      return DataType::Float;
    case at::ScalarType::Double:
      return DataType::Double;
    case at::ScalarType::ComplexFloat:
      return DataType::ComplexFloat;
    case at::ScalarType::ComplexDouble:
      return DataType::ComplexDouble;
    case at::ScalarType::UInt64:
      return DataType::UInt64;
    case at::ScalarType::Float4_e2m1fn_x2:
      return DataType::Float4_e2m1fn_x2;
    default:
      break;
  }
  FUSER_CHECK(
      false, "Tensors of type ", c10::toString(type),
      " are not supported; fuser handles bool, int8, uint8, int16, int32, "
      "int64, float8_e4m3fn, float8_e5m2, float16, bfloat16, float32, "
      "float64, complex64 and complex128. Convert the tensor first, e.g. "
      "t.to(torch.float32).");
  return DataType::Null;
}

} // namespace fuser
