#include <ir/type.h>

#include <base/exceptions.h>

namespace fuser {

bool isFloatingPointType(DataType dtype) {
  switch (dtype) {
    case DataType::Float8_e4m3fn:
    case DataType::Float8_e5m2:
    case DataType::Half:
    case DataType::BFloat16:
    case DataType::Float:
    case DataType::Double:
      return true;
    default:
      return false;
  }
}

bool isFloat8Type(DataType dtype) {
  return dtype == DataType::Float8_e4m3fn || dtype == DataType::Float8_e5m2;
}

namespace {

enum class ComplexSupport { NoComplex, KernelComplex, AtenComplex };

ComplexSupport complexSupport(UnaryOpType op) {
  switch (op) {
#define FUSER_UNARY_OP(e, name, result, complex) \
  case UnaryOpType::e:                           \
    return ComplexSupport::complex;
#include <ir/unary_ops.def>
#undef FUSER_UNARY_OP
  }
  return ComplexSupport::NoComplex;
}

ComplexSupport complexSupport(BinaryOpType op) {
  switch (op) {
#define FUSER_BINARY_OP(e, name, types, complex, kernel, host, aten) \
  case BinaryOpType::e:                                              \
    return ComplexSupport::complex;
#include <ir/binary_ops.def>
#undef FUSER_BINARY_OP
  }
  return ComplexSupport::NoComplex;
}

} // namespace

bool kernelsTakeComplex(UnaryOpType op) {
  return complexSupport(op) == ComplexSupport::KernelComplex;
}

bool kernelsTakeComplex(BinaryOpType op) {
  return complexSupport(op) == ComplexSupport::KernelComplex;
}

bool atenTakesComplex(UnaryOpType op) {
  return complexSupport(op) == ComplexSupport::AtenComplex;
}

bool atenTakesComplex(BinaryOpType op) {
  return complexSupport(op) == ComplexSupport::AtenComplex;
}

bool isDataOnlyType(DataType dtype) {
  return dtype == DataType::UInt64 || dtype == DataType::Float4_e2m1fn_x2;
}

bool isComplexType(DataType dtype) {
  return dtype == DataType::ComplexFloat || dtype == DataType::ComplexDouble;
}

DataType complexPartType(DataType complex_type) {
  FUSER_INTERNAL_ASSERT(
      isComplexType(complex_type), complex_type, " is not complex");
  return complex_type == DataType::ComplexFloat ? DataType::Float
                                                : DataType::Double;
}

DataType complexTypeOf(DataType part_type) {
  FUSER_INTERNAL_ASSERT(
      isFloatingPointType(part_type), part_type, " has no complex type");
  return part_type == DataType::Double ? DataType::ComplexDouble
                                       : DataType::ComplexFloat;
}

bool isIntegralType(DataType dtype) {
  return dtype == DataType::Int8 || dtype == DataType::UInt8 ||
         dtype == DataType::Int16 || dtype == DataType::Int32 ||
         dtype == DataType::Int || dtype == DataType::Index;
}

std::pair<int64_t, int64_t> integralRange(DataType dtype) {
  switch (dtype) {
    case DataType::Int8:
      return {INT8_MIN, INT8_MAX};
    case DataType::UInt8:
      return {0, UINT8_MAX};
    case DataType::Int16:
      return {INT16_MIN, INT16_MAX};
    case DataType::Int32:
      return {INT32_MIN, INT32_MAX};
    case DataType::Int:
    case DataType::Index:
      return {INT64_MIN, INT64_MAX};
    default:
      break;
  }
  FUSER_ERROR("integralRange of ", toString(dtype));
}

bool isBooleanType(DataType dtype) {
  return dtype == DataType::Bool;
}

int64_t dataTypeSize(DataType dtype) {
  switch (dtype) {
    case DataType::Bool:
    case DataType::Int8:
    case DataType::UInt8:
    case DataType::Float8_e4m3fn:
    case DataType::Float8_e5m2:
    case DataType::Float4_e2m1fn_x2:
      return 1;
    case DataType::Int16:
    case DataType::Half:
    case DataType::BFloat16:
      return 2;
    case DataType::Int32:
    case DataType::Float:
      return 4;
    case DataType::Int:
    case DataType::Index:
    case DataType::UInt64:
    case DataType::Double:
    case DataType::ComplexFloat:
      return 8;
    case DataType::ComplexDouble:
      return 16;
    // {avg, var_sum, n}: two values and a count of the index type (an
    // int32 count leaves padding; the largest size is allocated).
    case DataType::WelfordFloat:
      return 16;
    case DataType::WelfordDouble:
      return 24;
    case DataType::Null:
      break;
  }
  FUSER_ERROR("dataTypeSize of Null");
}

bool isWelfordType(DataType dtype) {
  return dtype == DataType::WelfordFloat || dtype == DataType::WelfordDouble;
}

DataType welfordStateType(DataType value_type) {
  FUSER_INTERNAL_ASSERT(
      value_type == DataType::Float || value_type == DataType::Double,
      "Welford states accumulate float or double, not ", value_type);
  return value_type == DataType::Float ? DataType::WelfordFloat
                                       : DataType::WelfordDouble;
}

DataType welfordValueType(DataType state_type) {
  FUSER_INTERNAL_ASSERT(isWelfordType(state_type), state_type, " is no state");
  return state_type == DataType::WelfordFloat ? DataType::Float
                                              : DataType::Double;
}

bool isComparisonOp(BinaryOpType op) {
  return binaryTypes(op) == BinaryTypes::Compare;
}

bool isLogicalOp(BinaryOpType op) {
  return binaryTypes(op) == BinaryTypes::Logical;
}

bool isBitwiseOp(BinaryOpType op) {
  const BinaryTypes types = binaryTypes(op);
  return types == BinaryTypes::Bits || types == BinaryTypes::Integer;
}

bool isUnaryPredicate(UnaryOpType op) {
  return unaryResult(op) == UnaryResult::Predicate;
}

bool isParallelTypeThreadDim(ParallelType pt) {
  return pt == ParallelType::TIDx || pt == ParallelType::TIDy ||
         pt == ParallelType::TIDz;
}

bool isParallelTypeBlockDim(ParallelType pt) {
  return pt == ParallelType::BIDx || pt == ParallelType::BIDy ||
         pt == ParallelType::BIDz;
}

bool isParallelTypeDeviceDim(ParallelType pt) {
  return pt == ParallelType::DIDx || pt == ParallelType::DIDy ||
         pt == ParallelType::DIDz;
}

std::string toString(DataType dtype) {
  switch (dtype) {
    case DataType::Null:
      return "null";
    case DataType::Bool:
      return "bool";
    case DataType::Int32:
      return "int32";
    case DataType::Int:
      return "int64";
    case DataType::Index:
      return "index";
    case DataType::Int8:
      return "int8";
    case DataType::UInt8:
      return "uint8";
    case DataType::Int16:
      return "int16";
    case DataType::Float8_e4m3fn:
      return "float8_e4m3fn";
    case DataType::Float8_e5m2:
      return "float8_e5m2";
    case DataType::Half:
      return "half";
    case DataType::BFloat16:
      return "bfloat16";
    case DataType::Float:
      return "float";
    case DataType::Double:
      return "double";
    case DataType::ComplexFloat:
      return "complex64";
    case DataType::ComplexDouble:
      return "complex128";
    case DataType::UInt64:
      return "uint64";
    case DataType::Float4_e2m1fn_x2:
      return "float4_e2m1fn_x2";
    case DataType::WelfordFloat:
      return "welford_float";
    case DataType::WelfordDouble:
      return "welford_double";
  }
  return "?";
}

std::string cudaTypeName(DataType dtype) {
  switch (dtype) {
    case DataType::Bool:
      return "bool";
    case DataType::Int32:
      return "int";
    case DataType::Int:
      return "int64_t";
    case DataType::Index:
      return "nvfuser_index_t";
    case DataType::Int8:
      return "signed char";
    case DataType::UInt8:
      return "unsigned char";
    case DataType::Int16:
      return "short";
    case DataType::Float8_e4m3fn:
      return "fuser_float8_e4m3fn";
    case DataType::Float8_e5m2:
      return "fuser_float8_e5m2";
    case DataType::Half:
      return "__half";
    case DataType::BFloat16:
      return "__nv_bfloat16";
    case DataType::Float:
      return "float";
    case DataType::Double:
      return "double";
    case DataType::ComplexFloat:
      return "fuser_complex<float>";
    case DataType::ComplexDouble:
      return "fuser_complex<double>";
    case DataType::UInt64:
      return "unsigned long long";
    // Copied as the byte it is.
    case DataType::Float4_e2m1fn_x2:
      return "unsigned char";
    case DataType::WelfordFloat:
      return "Welford<float>";
    case DataType::WelfordDouble:
      return "Welford<double>";
    case DataType::Null:
      break;
  }
  FUSER_ERROR("no CUDA type for ", toString(dtype));
}

std::string toString(ValType vtype) {
  switch (vtype) {
    case ValType::Scalar:
      return "Scalar";
    case ValType::IterDomain:
      return "IterDomain";
    case ValType::TensorDomain:
      return "TensorDomain";
    case ValType::TensorView:
      return "TensorView";
  }
  return "?";
}

std::string toString(IterType itype) {
  switch (itype) {
    case IterType::Iteration:
      return "Iteration";
    case IterType::Reduction:
      return "Reduction";
    case IterType::Broadcast:
      return "Broadcast";
  }
  return "?";
}

std::string toString(ParallelType ptype) {
  switch (ptype) {
    case ParallelType::Serial:
      return "Serial";
    case ParallelType::BIDx:
      return "blockIdx.x";
    case ParallelType::BIDy:
      return "blockIdx.y";
    case ParallelType::BIDz:
      return "blockIdx.z";
    case ParallelType::TIDx:
      return "threadIdx.x";
    case ParallelType::TIDy:
      return "threadIdx.y";
    case ParallelType::TIDz:
      return "threadIdx.z";
    case ParallelType::Vectorize:
      return "Vectorize";
    case ParallelType::Unroll:
      return "Unroll";
    case ParallelType::Unswitch:
      return "Unswitch";
    case ParallelType::Group:
      return "Group";
    case ParallelType::Mma:
      return "Mma";
    case ParallelType::DIDx:
      return "deviceIdx.x";
    case ParallelType::DIDy:
      return "deviceIdx.y";
    case ParallelType::DIDz:
      return "deviceIdx.z";
  }
  return "?";
}

std::string parallelTypeAbbreviation(ParallelType ptype) {
  switch (ptype) {
    case ParallelType::Serial:
      return "S";
    case ParallelType::BIDx:
      return "BIDx";
    case ParallelType::BIDy:
      return "BIDy";
    case ParallelType::BIDz:
      return "BIDz";
    case ParallelType::TIDx:
      return "TIDx";
    case ParallelType::TIDy:
      return "TIDy";
    case ParallelType::TIDz:
      return "TIDz";
    case ParallelType::Vectorize:
      return "V";
    case ParallelType::Unroll:
      return "UR";
    case ParallelType::Unswitch:
      return "US";
    case ParallelType::Group:
      return "G";
    case ParallelType::Mma:
      return "MMA";
    case ParallelType::DIDx:
      return "DIDx";
    case ParallelType::DIDy:
      return "DIDy";
    case ParallelType::DIDz:
      return "DIDz";
  }
  return "?";
}

std::string toString(MemoryType mtype) {
  switch (mtype) {
    case MemoryType::Local:
      return "Local";
    case MemoryType::Shared:
      return "Shared";
    case MemoryType::Global:
      return "Global";
  }
  return "?";
}

std::string toString(LoadStoreOpType op) {
  switch (op) {
    case LoadStoreOpType::Set:
      return "Set";
    case LoadStoreOpType::SegmenterSet:
      return "SegmenterSet";
    case LoadStoreOpType::CpAsyncBulkTensorTile:
      return "CpAsyncBulkTensorTile";
  }
  return "?";
}

std::string toString(CacheOp op) {
  switch (op) {
    case CacheOp::Unspecified:
      return "Unspecified";
    case CacheOp::AllLevels:
      return "AllLevels";
    case CacheOp::Streaming:
      return "Streaming";
    case CacheOp::Global:
      return "Global";
  }
  return "?";
}

std::string toString(UnaryOpType op) {
  switch (op) {
#define FUSER_UNARY_OP(e, name, result, complex) \
  case UnaryOpType::e:                           \
    return #name;
#include <ir/unary_ops.def>
#undef FUSER_UNARY_OP
  }
  return "?";
}

UnaryResult unaryResult(UnaryOpType op) {
  switch (op) {
#define FUSER_UNARY_OP(e, name, result, complex) \
  case UnaryOpType::e:                           \
    return UnaryResult::result;
#include <ir/unary_ops.def>
#undef FUSER_UNARY_OP
  }
  return UnaryResult::Other;
}

std::string toString(BinaryOpType op) {
  switch (op) {
#define FUSER_BINARY_OP(e, name, types, complex, kernel, host, aten) \
  case BinaryOpType::e:                                              \
    return #name;
#include <ir/binary_ops.def>
#undef FUSER_BINARY_OP
  }
  return "?";
}

BinaryTypes binaryTypes(BinaryOpType op) {
  switch (op) {
#define FUSER_BINARY_OP(e, name, types, complex, kernel, host, aten) \
  case BinaryOpType::e:                                              \
    return BinaryTypes::types;
#include <ir/binary_ops.def>
#undef FUSER_BINARY_OP
  }
  return BinaryTypes::Promoted;
}

std::string toString(TernaryOpType op) {
  switch (op) {
    case TernaryOpType::Where:
      return "where";
  }
  return "?";
}

std::string toString(IndexOpType op) {
  switch (op) {
    case IndexOpType::Select:
      return "select";
    case IndexOpType::IndexSelect:
      return "index_select";
    case IndexOpType::Gather:
      return "gather";
    case IndexOpType::Scatter:
      return "scatter";
  }
  return "?";
}

std::string toString(ResizeOpType op) {
  switch (op) {
    case ResizeOpType::Slice:
      return "slice";
    case ResizeOpType::Pad:
      return "pad";
    case ResizeOpType::Cat:
      return "cat";
  }
  return "?";
}

std::string toString(ScanOpType op) {
  switch (op) {
    case ScanOpType::Sum:
      return "cumsum";
    case ScanOpType::Prod:
      return "cumprod";
    case ScanOpType::Max:
      return "cummax";
    case ScanOpType::Min:
      return "cummin";
    case ScanOpType::MaxIndex:
      return "cummax_index";
    case ScanOpType::MinIndex:
      return "cummin_index";
  }
  return "?";
}

std::string toString(RNGOpType op) {
  switch (op) {
    case RNGOpType::Uniform:
      return "uniform";
    case RNGOpType::Normal:
      return "normal";
  }
  return "?";
}

std::string toString(ReductionOpType op) {
  switch (op) {
    case ReductionOpType::Sum:
      return "sum";
    case ReductionOpType::Prod:
      return "prod";
    case ReductionOpType::Max:
      return "max";
    case ReductionOpType::Min:
      return "min";
    case ReductionOpType::Welford:
      return "welford";
  }
  return "?";
}

#define FUSER_DEFINE_STREAM_OP(T)                     \
  std::ostream& operator<<(std::ostream& os, T val) { \
    return os << toString(val);                       \
  }
FUSER_DEFINE_STREAM_OP(DataType)
FUSER_DEFINE_STREAM_OP(ValType)
FUSER_DEFINE_STREAM_OP(IterType)
FUSER_DEFINE_STREAM_OP(ParallelType)
FUSER_DEFINE_STREAM_OP(MemoryType)
FUSER_DEFINE_STREAM_OP(LoadStoreOpType)
FUSER_DEFINE_STREAM_OP(CacheOp)
FUSER_DEFINE_STREAM_OP(UnaryOpType)
FUSER_DEFINE_STREAM_OP(BinaryOpType)
FUSER_DEFINE_STREAM_OP(TernaryOpType)
FUSER_DEFINE_STREAM_OP(RNGOpType)
FUSER_DEFINE_STREAM_OP(ScanOpType)
FUSER_DEFINE_STREAM_OP(ResizeOpType)
FUSER_DEFINE_STREAM_OP(IndexOpType)
FUSER_DEFINE_STREAM_OP(ReductionOpType)
#undef FUSER_DEFINE_STREAM_OP

} // namespace fuser
