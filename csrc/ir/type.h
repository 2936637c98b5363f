// Enumerations shared by every layer: data types, iteration and parallel
// types, memory types and op kinds.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace fuser {

enum class DataType {
  Null,
  Bool,
  Int32,
  Int,   // int64
  Index, // int32 or int64, chosen when a kernel is compiled
  Int8,
  UInt8,
  Int16,
  // 8-bit floats as torch.float8_e4m3fn (no infinities, NaN 0x7f/0xff)
  // and torch.float8_e5m2: data only, computed on after a cast
  // (runtime/float8.h, doc/ops.md).
  Float8_e4m3fn,
  Float8_e5m2,
  Half,
  BFloat16,
  Float,
  Double,
  // torch.complex64 and torch.complex128: a real and an imaginary part of
  // float or double (runtime/complex.h, doc/ops.md "Complex numbers").
  ComplexFloat,
  ComplexDouble,
  // torch.uint64 and torch.float4_e2m1fn_x2 (two 4-bit floats packed in a
  // byte): data only, passed through fusions, copied and moved, and read and
  // written by the ops that run through ATen (the philox state of
  // sdpfa_fwd); no arithmetic and no casts (isDataOnlyType).
  UInt64,
  Float4_e2m1fn_x2,
  // The state of a Welford reduction (mean, sum of squared deviations,
  // count; runtime/welford.h) accumulating in float or double. Only
  // inside a fusion: no tensor of these types enters or leaves one.
  WelfordFloat,
  WelfordDouble,
};

enum class ValType { Scalar, IterDomain, TensorDomain, TensorView };

enum class IterType { Iteration, Reduction, Broadcast };

enum class ParallelType {
  Serial,
  BIDx,
  BIDy,
  BIDz,
  TIDx,
  TIDy,
  TIDz,
  Vectorize,
  Unroll,
  Unswitch,
  // An iteration axis of a reduction across blocks whose values one call
  // reduces together (doc/reduction.md §3): one grid synchronization for
  // the group instead of one per value.
  Group,
  // An axis of a matrix product's output that the tensor cores cover in
  // one instruction sequence (doc/matmul.md §2): no loop, index 0 at the
  // product; its consumers loop over it.
  Mma,
  DIDx,
  DIDy,
  DIDz,
};

enum class MemoryType { Local, Shared, Global };

// Set: a copy. SegmenterSet: a copy that separates two segments of a
// fusion: the runtime always runs its consumers in another segment.
// CpAsyncBulkTensorTile: tiles of a global tensor copied into shared memory
// by the bulk tensor copy engine (TMA), issued by the matmul pipeline
// (doc/matmul.md §3) rather than by loops of the kernel.
enum class LoadStoreOpType { Set, SegmenterSet, CpAsyncBulkTensorTile };

enum class CacheOp { Unspecified, AllLevels, Streaming, Global };

// The unary ops: ir/unary_ops.def lists them, one row each.
enum class UnaryOpType {
#define FUSER_UNARY_OP(e, name, result, complex) e,
#include <ir/unary_ops.def>
#undef FUSER_UNARY_OP
};

// How a unary op's result type follows from its input's (ir/unary_ops.def).
enum class UnaryResult { Float, Rounding, Predicate, Other, Internal };
UnaryResult unaryResult(UnaryOpType op);

// The binary ops: ir/binary_ops.def lists them, one row each.
enum class BinaryOpType {
#define FUSER_BINARY_OP(e, name, types, complex, kernel, host, aten) e,
#include <ir/binary_ops.def>
#undef FUSER_BINARY_OP
};

// How a binary op's operand and result types follow from its operands'
// (ir/binary_ops.def).
enum class BinaryTypes {
  Promoted,
  Float,
  Compare,
  Logical,
  Bits,
  Integer,
  FloatOnly,
  Internal
};
BinaryTypes binaryTypes(BinaryOpType op);

enum class TernaryOpType { Where };

// The indexing ops (doc/ops.md, "Indexing"): torch.select, index_select,
// gather and scatter.
enum class IndexOpType { Select, IndexSelect, Gather, Scatter };

// The ops whose output axes are resized copies of their inputs' (doc/ops.md,
// "Slicing, padding and concatenation").
enum class ResizeOpType { Slice, Pad, Cat };

// The running combinations of a scan (doc/ops.md, "Scans").
// Max and Min give the running extreme's values, MaxIndex and MinIndex the
// index along the axis of the element it came from (torch.cummax).
enum class ScanOpType { Sum, Prod, Max, Min, MaxIndex, MinIndex };

// The distributions of the random ops (doc/ops.md, "Random numbers").
enum class RNGOpType { Uniform, Normal };

// Welford merges Welford states (doc/reduction.md §4).
enum class ReductionOpType { Sum, Prod, Max, Min, Welford };

// Type queries.
bool isFloatingPointType(DataType dtype); // fp8 included
bool isFloat8Type(DataType dtype);
// The ops on complex values (doc/ops.md "Complex numbers"): those the
// generated kernels compute, and the further ones torch defines that only
// ATen computes (the kernel schedulers decline them on complex operands,
// so they run in an ExprEval segment).
bool kernelsTakeComplex(UnaryOpType op);
bool kernelsTakeComplex(BinaryOpType op);
bool atenTakesComplex(UnaryOpType op);
bool atenTakesComplex(BinaryOpType op);
// UInt64 and Float4_e2m1fn_x2: moved and copied, never computed on or cast.
bool isDataOnlyType(DataType dtype);
bool isComplexType(DataType dtype);
// The type of a complex type's parts (Float for ComplexFloat), and the
// complex type of parts of a floating type (ComplexFloat for the types of
// at most 32 bits).
DataType complexPartType(DataType complex_type);
DataType complexTypeOf(DataType part_type);
bool isIntegralType(DataType dtype); // Int8, UInt8, Int16, Int32, Int, Index
// The smallest and largest values of an integral type (Index as int64).
std::pair<int64_t, int64_t> integralRange(DataType dtype);
bool isBooleanType(DataType dtype);
int64_t dataTypeSize(DataType dtype); // bytes; Index counts as 8
bool isWelfordType(DataType dtype);
// The Welford state accumulating `value_type` (Float or Double), and back.
DataType welfordStateType(DataType value_type);
DataType welfordValueType(DataType state_type);

bool isComparisonOp(BinaryOpType op);
bool isLogicalOp(BinaryOpType op);
// Ops defined on integers and bools only.
bool isBitwiseOp(BinaryOpType op);
// Unary ops whose bool result is a property of a value of the input's type
// (signbit, isnan, isinf, isfinite): computed in that type.
bool isUnaryPredicate(UnaryOpType op);

bool isParallelTypeThreadDim(ParallelType pt);
bool isParallelTypeBlockDim(ParallelType pt);
bool isParallelTypeDeviceDim(ParallelType pt);

std::string toString(DataType dtype);
std::string toString(ValType vtype);
std::string toString(IterType itype);
std::string toString(ParallelType ptype);
std::string toString(MemoryType mtype);
std::string toString(LoadStoreOpType op);
std::string toString(CacheOp op);
std::string toString(UnaryOpType op);
std::string toString(BinaryOpType op);
std::string toString(TernaryOpType op);
std::string toString(RNGOpType op);
std::string toString(ScanOpType op);
std::string toString(ResizeOpType op);
std::string toString(IndexOpType op);
std::string toString(ReductionOpType op);

// Short form used inside IterDomain names, e.g. "S", "TIDx", "DIDx".
std::string parallelTypeAbbreviation(ParallelType ptype);

// The CUDA C++ spelling of a data type (used by codegen).
std::string cudaTypeName(DataType dtype);

#define FUSER_DECLARE_STREAM_OP(T) std::ostream& operator<<(std::ostream&, T);
FUSER_DECLARE_STREAM_OP(DataType)
FUSER_DECLARE_STREAM_OP(ValType)
FUSER_DECLARE_STREAM_OP(IterType)
FUSER_DECLARE_STREAM_OP(ParallelType)
FUSER_DECLARE_STREAM_OP(MemoryType)
FUSER_DECLARE_STREAM_OP(LoadStoreOpType)
FUSER_DECLARE_STREAM_OP(CacheOp)
FUSER_DECLARE_STREAM_OP(UnaryOpType)
FUSER_DECLARE_STREAM_OP(BinaryOpType)
FUSER_DECLARE_STREAM_OP(TernaryOpType)
FUSER_DECLARE_STREAM_OP(RNGOpType)
FUSER_DECLARE_STREAM_OP(ScanOpType)
FUSER_DECLARE_STREAM_OP(ResizeOpType)
FUSER_DECLARE_STREAM_OP(IndexOpType)
FUSER_DECLARE_STREAM_OP(ReductionOpType)
#undef FUSER_DECLARE_STREAM_OP

} // namespace fuser
