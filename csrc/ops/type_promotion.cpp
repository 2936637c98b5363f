#include <ops/type_promotion.h>

#include <ir/interface_nodes.h>

namespace fuser {

namespace {

enum class TypeCategory { Bool = 0, Integral = 1, Floating = 2, Complex = 3 };

TypeCategory categoryOf(DataType dtype) {
  if (isComplexType(dtype)) {
    return TypeCategory::Complex;
  }
  if (isFloatingPointType(dtype)) {
    return TypeCategory::Floating;
  }
  if (isIntegralType(dtype)) {
    return TypeCategory::Integral;
  }
  FUSER_CHECK(
      dtype == DataType::Bool, "Type promotion got unsupported type ", dtype,
      ".");
  return TypeCategory::Bool;
}

// Position in the lattice within one category.
int rank(DataType dtype) {
  switch (dtype) {
    case DataType::Bool:
      return 0;
    case DataType::Int8:
    case DataType::UInt8:
      return 1;
    case DataType::Int16:
      return 2;
    case DataType::Int32:
      return 3;
    case DataType::Int:
    case DataType::Index:
      return 4;
    case DataType::Half:
    case DataType::BFloat16:
      return 5;
    case DataType::Float:
      return 6;
    case DataType::Double:
      return 7;
    case DataType::ComplexFloat:
      return 8;
    case DataType::ComplexDouble:
      return 9;
    case DataType::Float8_e4m3fn:
    case DataType::Float8_e5m2:
    case DataType::WelfordFloat:
    case DataType::WelfordDouble:
    case DataType::Null:
      break;
  }
  FUSER_ERROR("no promotion rank for ", dtype);
}

} // namespace

DataType promoteTypes(DataType a, DataType b) {
  if (a == b) {
    return a;
  }
  FUSER_CHECK(
      !isFloat8Type(a) && !isFloat8Type(b), "No type promotion for ", a,
      " and ", b, ": float8 types promote with nothing, as in PyTorch. Cast ",
      "one operand to the other's type first.");
  if (isComplexType(a) || isComplexType(b)) {
    // The complex type of the promoted parts, as torch.promote_types:
    // complex64 with float64 is complex128, with an integer complex64.
    auto part = [](DataType t) {
      return isComplexType(t) ? complexPartType(t)
                              : (isFloatingPointType(t) ? t : DataType::Float);
    };
    return complexTypeOf(promoteTypes(part(a), part(b)));
  }
  if (a == DataType::Index || b == DataType::Index) {
    DataType other = a == DataType::Index ? b : a;
    return isFloatingPointType(other) ? other : DataType::Index;
  }
  // Half and BFloat16 have no common 16-bit type; int8 and uint8 meet in
  // int16, as in torch.promote_types.
  if ((a == DataType::Half && b == DataType::BFloat16) ||
      (a == DataType::BFloat16 && b == DataType::Half)) {
    return DataType::Float;
  }
  if ((a == DataType::Int8 && b == DataType::UInt8) ||
      (a == DataType::UInt8 && b == DataType::Int8)) {
    return DataType::Int16;
  }
  return rank(a) >= rank(b) ? a : b;
}

namespace {

// torch's combination of a result of higher priority (tensors with axes
// over 0-dim tensors over Python numbers) with one of lower priority: the
// lower one counts only when it is of a higher category (Null: none).
DataType combineCategories(DataType higher, DataType lower) {
  if (higher == DataType::Null) {
    return lower;
  }
  if (lower == DataType::Null || isComplexType(higher)) {
    return higher;
  }
  if (isComplexType(lower)) {
    // A floating type keeps its precision: complex128 for a double.
    return isFloatingPointType(higher) ? complexTypeOf(higher) : lower;
  }
  if (isFloatingPointType(higher)) {
    return higher;
  }
  if (higher == DataType::Bool || isFloatingPointType(lower)) {
    return promoteTypes(higher, lower);
  }
  return higher;
}

// The type a Python number of `dtype` stands for among tensors: the
// default type of its category.
DataType wrappedNumberType(DataType dtype) {
  if (dtype == DataType::Null) {
    return dtype;
  }
  switch (categoryOf(dtype)) {
    case TypeCategory::Complex:
      return DataType::ComplexFloat;
    case TypeCategory::Floating:
      return DataType::Float;
    case TypeCategory::Integral:
      return DataType::Int;
    case TypeCategory::Bool:
      break;
  }
  return DataType::Bool;
}

} // namespace

DataType computeTypePromotion(const std::vector<Val*>& operands) {
  DataType dim_type = DataType::Null;      // tensors with axes
  DataType zero_dim_type = DataType::Null; // 0-dim tensors
  DataType scalar_type = DataType::Null;
  for (Val* operand : operands) {
    DataType* slot = &scalar_type;
    if (auto* tv = dynamic_cast<TensorView*>(operand)) {
      slot = TensorDomain::noReductions(tv->getLogicalDomain()).empty()
                 ? &zero_dim_type
                 : &dim_type;
    }
    *slot = *slot == DataType::Null ? operand->dtype()
                                    : promoteTypes(*slot, operand->dtype());
  }
  if (dim_type == DataType::Null && zero_dim_type == DataType::Null) {
    return scalar_type;
  }
  return combineCategories(
      dim_type,
      combineCategories(zero_dim_type, wrappedNumberType(scalar_type)));
}

DataType computeDataType(DataType dtype) {
  if (dtype == DataType::Half || dtype == DataType::BFloat16) {
    return DataType::Float;
  }
  return dtype;
}

DataType floatResultType(DataType dtype) {
  return isFloatingPointType(dtype) || isComplexType(dtype) ? dtype
                                                            : DataType::Float;
}

} // namespace fuser
