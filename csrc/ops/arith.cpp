#include <ops/arith.h>

#include <ir/all_nodes.h>
#include <ops/type_promotion.h>
#include <ops/utils.h>

#include <algorithm>

namespace fuser {

namespace {

void checkOperands(const std::vector<Val*>& operands, const char* op) {
  Fusion* fusion = ops::activeFusion(op);
  for (Val* operand : operands) {
    FUSER_CHECK(operand != nullptr, op, ": an operand is null.");
    FUSER_CHECK(
        operand->fusion() == fusion, op, ": operand ", operand->toString(),
        " belongs to another Fusion than the active one.");
    FUSER_CHECK(
        operand->isScalar() || operand->isA<TensorView>(), op,
        ": operands must be tensors or scalars; got ", operand->toString(),
        ".");
  }
}

bool anyTensor(const std::vector<Val*>& operands) {
  return std::any_of(operands.begin(), operands.end(), [](Val* v) {
    return v->isA<TensorView>();
  });
}

// Result of an op of `dtype` over `inputs`: a tensor if any input is one.
Val* newResult(const std::vector<Val*>& inputs, DataType dtype) {
  if (anyTensor(inputs)) {
    return ops::newOutputTV(inputs, dtype);
  }
  return IrBuilder::create<Val>(dtype);
}

bool isFloatFunction(UnaryOpType op) {
  return unaryResult(op) == UnaryResult::Float;
}

// The ops complex values take (doc/ops.md "Complex numbers"): those the
// kernels compute, and those only ATen does (ir/type.h).
bool takesComplex(UnaryOpType op) {
  return kernelsTakeComplex(op) || atenTakesComplex(op);
}

bool takesComplex(BinaryOpType op) {
  return kernelsTakeComplex(op) || atenTakesComplex(op);
}

bool isRounding(UnaryOpType op) {
  return unaryResult(op) == UnaryResult::Rounding;
}

bool isIntegerOrBool(DataType dtype) {
  return isIntegralType(dtype) || isBooleanType(dtype);
}

// Bitwise ops, shifts and gcd take integers (and bools, but for shifts and
// gcd), as torch's do.
void checkBitwiseOperands(BinaryOpType op, const std::vector<Val*>& operands) {
  const bool bool_ok = binaryTypes(op) == BinaryTypes::Bits;
  for (Val* v : operands) {
    FUSER_CHECK(
        isIntegralType(v->dtype()) || (bool_ok && isBooleanType(v->dtype())),
        toString(op), ": expected ",
        bool_ok ? "integer or bool operands" : "integer operands", "; got ",
        v->toString(), " of type ", v->dtype(), ". Cast it first, e.g. ",
        "castOp(DataType::Int, x), or use a floating-point op.");
  }
}

} // namespace

TensorView* set(TensorView* tv) {
  checkOperands({tv}, "set");
  TensorView* out = ops::newOutputTV({tv}, tv->dtype());
  IrBuilder::create<LoadStoreOp>(LoadStoreOpType::Set, out, tv);
  return out;
}

TensorView* segment_set(TensorView* tv) {
  checkOperands({tv}, "segment_set");
  TensorView* out = ops::newOutputTV({tv}, tv->dtype());
  IrBuilder::create<LoadStoreOp>(LoadStoreOpType::SegmenterSet, out, tv);
  return out;
}

Val* castOp(DataType dtype, Val* val) {
  checkOperands({val}, "cast");
  FUSER_CHECK(
      (dtype != DataType::Null && dtype != DataType::Index) || val->isScalar(),
      "cast: cannot cast tensor ", val->toString(), " to ", dtype, ".");
  if (val->dtype() == dtype) {
    if (auto* tv = dynamic_cast<TensorView*>(val)) {
      return set(tv);
    }
    return val;
  }
  FUSER_CHECK(
      !isDataOnlyType(val->dtype()) && !isDataOnlyType(dtype),
      "cast: fuser does not cast ", val->toString(), " of type ", val->dtype(),
      " to ", dtype, ": ", isDataOnlyType(dtype) ? dtype : val->dtype(),
      " tensors are only moved and copied. Cast with PyTorch outside the "
      "fusion.");
  Val* out = newResult({val}, dtype);
  IrBuilder::create<UnaryOp>(UnaryOpType::Cast, out, val);
  return out;
}

TensorView* castOp(DataType dtype, TensorView* tv) {
  return castOp(dtype, static_cast<Val*>(tv))->as<TensorView>();
}

namespace {

// real, imag, conj and the complex abs; of a real operand torch.real and
// torch.conj give its values, torch.imag is an error.
Val* complexPart(UnaryOpType op, Val* in) {
  if (!isComplexType(in->dtype())) {
    FUSER_CHECK(
        op != UnaryOpType::Imag, "imag: ", in->toString(), " is of type ",
        in->dtype(), "; imag takes complex tensors only, as torch.imag.");
    auto* tv = dynamic_cast<TensorView*>(in);
    return tv != nullptr ? set(tv) : in;
  }
  DataType out_type =
      op == UnaryOpType::Conj ? in->dtype() : complexPartType(in->dtype());
  Val* out = newResult({in}, out_type);
  IrBuilder::create<UnaryOp>(op, out, in);
  return out;
}

} // namespace

Val* unaryOp(UnaryOpType op, Val* in) {
  checkOperands({in}, toString(op).c_str());
  ops::checkComputable({in}, toString(op).c_str());
  FUSER_INTERNAL_ASSERT(op != UnaryOpType::Cast, "use castOp");
  if (!takesComplex(op)) {
    ops::checkNotComplex({in}, toString(op).c_str());
  }
  if (op == UnaryOpType::Real || op == UnaryOpType::Imag ||
      op == UnaryOpType::Conj ||
      (op == UnaryOpType::Abs && isComplexType(in->dtype()))) {
    return complexPart(op, in);
  }
  if (op == UnaryOpType::LogicalNot) {
    Val* out = newResult({in}, DataType::Bool);
    IrBuilder::create<UnaryOp>(op, out, in);
    return out;
  }
  if (op == UnaryOpType::BitwiseNot) {
    FUSER_CHECK(
        isIntegerOrBool(in->dtype()), "bitwise_not: expected an integer or ",
        "bool operand; got ", in->toString(), " of type ", in->dtype(),
        ". Cast it to an integer type first.");
    Val* out = newResult({in}, in->dtype());
    IrBuilder::create<UnaryOp>(op, out, in);
    return out;
  }
  if (isUnaryPredicate(op)) {
    Val* x = ops::maybeCastTensor(in, computeDataType(in->dtype()));
    Val* out = newResult({x}, DataType::Bool);
    IrBuilder::create<UnaryOp>(op, out, x);
    return out;
  }
  if (isRounding(op) && !isFloatingPointType(in->dtype())) {
    // torch.floor (ceil, round, trunc) of an integer tensor: its values.
    auto* tv = dynamic_cast<TensorView*>(in);
    return tv != nullptr ? set(tv) : in;
  }
  FUSER_CHECK(
      op != UnaryOpType::Frac || isFloatingPointType(in->dtype()),
      "frac: expected a floating-point operand; got ", in->toString(),
      " of type ", in->dtype(), " (torch.frac is defined for floating types).");
  FUSER_CHECK(
      !(op == UnaryOpType::Neg && in->dtype() == DataType::Bool),
      "neg: negation of bool tensor ", in->toString(),
      " is not supported; use logical_not instead.");
  DataType out_type =
      isFloatFunction(op) ? floatResultType(in->dtype()) : in->dtype();
  DataType compute_type = computeDataType(out_type);
  Val* x = ops::maybeCastTensor(in, compute_type);
  Val* out = newResult({x}, compute_type);
  IrBuilder::create<UnaryOp>(op, out, x);
  return ops::maybeCastTensor(out, out_type);
}

TensorView* unaryOp(UnaryOpType op, TensorView* in) {
  return unaryOp(op, static_cast<Val*>(in))->as<TensorView>();
}

// The builders of ops/arith.h, one per row of ir/unary_ops.def but the
// Internal ones.
#define FUSER_DEFINE_UNARY(name, op_type)     \
  Val* name(Val* in) {                        \
    return unaryOp(UnaryOpType::op_type, in); \
  }                                           \
  TensorView* name(TensorView* in) {          \
    return unaryOp(UnaryOpType::op_type, in); \
  }
#define FUSER_DEFINE_UNARY_Internal(name, op_type)
#define FUSER_DEFINE_UNARY_Float FUSER_DEFINE_UNARY
#define FUSER_DEFINE_UNARY_Rounding FUSER_DEFINE_UNARY
#define FUSER_DEFINE_UNARY_Predicate FUSER_DEFINE_UNARY
#define FUSER_DEFINE_UNARY_Other FUSER_DEFINE_UNARY
#define FUSER_UNARY_OP(e, name, result, complex) \
  FUSER_DEFINE_UNARY_##result(name, e)
#include <ir/unary_ops.def>
#undef FUSER_UNARY_OP
#undef FUSER_DEFINE_UNARY_Internal
#undef FUSER_DEFINE_UNARY_Float
#undef FUSER_DEFINE_UNARY_Rounding
#undef FUSER_DEFINE_UNARY_Predicate
#undef FUSER_DEFINE_UNARY_Other
#undef FUSER_DEFINE_UNARY

Val* binaryOp(BinaryOpType op, Val* lhs, Val* rhs) {
  checkOperands({lhs, rhs}, toString(op).c_str());
  ops::checkComputable({lhs, rhs}, toString(op).c_str());
  if (!takesComplex(op)) {
    ops::checkNotComplex({lhs, rhs}, toString(op).c_str());
  }
  if (isBitwiseOp(op)) {
    checkBitwiseOperands(op, {lhs, rhs});
  }
  DataType promoted = computeTypePromotion({lhs, rhs});
  {
    // Promotion (above) tells 0-dim tensors from others; then the ranks
    // align.
    const std::vector<Val*> aligned = ops::alignRanks({lhs, rhs});
    lhs = aligned[0];
    rhs = aligned[1];
  }
  FUSER_CHECK(
      binaryTypes(op) != BinaryTypes::FloatOnly ||
          promoted == DataType::Float || promoted == DataType::Double,
      toString(op),
      ": takes float or double operands (their own next values); got ",
      lhs->toString(), " and ", rhs->toString(), ", which promote to ",
      promoted, ". Cast them to float or double first.");
  DataType out_type = promoted;
  DataType compute_type = computeDataType(promoted);
  if (isComparisonOp(op)) {
    out_type = DataType::Bool;
  } else if (isLogicalOp(op)) {
    out_type = DataType::Bool;
    compute_type = DataType::Bool;
  } else if (binaryTypes(op) == BinaryTypes::Float) {
    // True division, as torch.div; atan2 of integers is a float too.
    out_type = floatResultType(promoted);
    compute_type = computeDataType(out_type);
  }
  Val* a = ops::maybeCastTensor(lhs, compute_type);
  Val* b = ops::maybeCastTensor(rhs, compute_type);
  DataType result_type =
      (isComparisonOp(op) || isLogicalOp(op)) ? DataType::Bool : compute_type;
  Val* out = newResult({a, b}, result_type);
  IrBuilder::create<BinaryOp>(op, out, a, b);
  return ops::maybeCastTensor(out, out_type);
}

// The builders of ops/arith.h, one per row of ir/binary_ops.def but the
// Internal ones.
#define FUSER_DEFINE_BINARY(name, op_type)                              \
  Val* name(Val* lhs, Val* rhs) {                                       \
    return binaryOp(BinaryOpType::op_type, lhs, rhs);                   \
  }                                                                     \
  TensorView* name(TensorView* lhs, TensorView* rhs) {                  \
    return binaryOp(BinaryOpType::op_type, lhs, rhs)->as<TensorView>(); \
  }                                                                     \
  TensorView* name(TensorView* lhs, Val* rhs) {                         \
    return binaryOp(BinaryOpType::op_type, lhs, rhs)->as<TensorView>(); \
  }                                                                     \
  TensorView* name(Val* lhs, TensorView* rhs) {                         \
    return binaryOp(BinaryOpType::op_type, lhs, rhs)->as<TensorView>(); \
  }
#define FUSER_DEFINE_BINARY_Internal(name, op_type)
#define FUSER_DEFINE_BINARY_Promoted FUSER_DEFINE_BINARY
#define FUSER_DEFINE_BINARY_Float FUSER_DEFINE_BINARY
#define FUSER_DEFINE_BINARY_Compare FUSER_DEFINE_BINARY
#define FUSER_DEFINE_BINARY_Logical FUSER_DEFINE_BINARY
#define FUSER_DEFINE_BINARY_Bits FUSER_DEFINE_BINARY
#define FUSER_DEFINE_BINARY_Integer FUSER_DEFINE_BINARY
#define FUSER_DEFINE_BINARY_FloatOnly FUSER_DEFINE_BINARY
#define FUSER_BINARY_OP(e, name, types, complex, kernel, host, aten) \
  FUSER_DEFINE_BINARY_##types(name, e)
#include <ir/binary_ops.def>
#undef FUSER_BINARY_OP
#undef FUSER_DEFINE_BINARY_Internal
#undef FUSER_DEFINE_BINARY_Promoted
#undef FUSER_DEFINE_BINARY_Float
#undef FUSER_DEFINE_BINARY_Compare
#undef FUSER_DEFINE_BINARY_Logical
#undef FUSER_DEFINE_BINARY_Bits
#undef FUSER_DEFINE_BINARY_Integer
#undef FUSER_DEFINE_BINARY_FloatOnly
#undef FUSER_DEFINE_BINARY

Val* truncDiv(Val* lhs, Val* rhs) {
  checkOperands({lhs, rhs}, "trunc_div");
  ops::checkComputable({lhs, rhs}, "trunc_div");
  ops::checkNotComplex({lhs, rhs}, "trunc_div");
  const DataType promoted = computeTypePromotion({lhs, rhs});
  if (!isIntegralType(promoted)) {
    return unaryOp(UnaryOpType::Trunc, div(lhs, rhs));
  }
  const std::vector<Val*> aligned = ops::alignRanks({lhs, rhs});
  Val* a = ops::maybeCastTensor(aligned[0], promoted);
  Val* b = ops::maybeCastTensor(aligned[1], promoted);
  Val* out = newResult({a, b}, promoted);
  IrBuilder::create<BinaryOp>(BinaryOpType::Div, out, a, b);
  return out;
}

Val* where(Val* condition, Val* a, Val* b) {
  checkOperands({condition, a, b}, "where");
  ops::checkComputable({a, b}, "where");
  FUSER_CHECK(
      condition->dtype() == DataType::Bool,
      "where: the condition must be bool; got ", condition->toString(),
      " of type ", condition->dtype(), ". Compare first, e.g. gt(x, 0).");
  DataType out_type = computeTypePromotion({a, b});
  if (condition->isA<TensorView>() && !anyTensor({a, b}) &&
      isFloatingPointType(out_type)) {
    // Scalar branches of a tensor result: a Python float gives the default
    // float type, as torch.where(cond, 1.0, 0.0) does.
    out_type = DataType::Float;
  }
  {
    const std::vector<Val*> aligned = ops::alignRanks({condition, a, b});
    condition = aligned[0];
    a = aligned[1];
    b = aligned[2];
  }
  DataType compute_type = computeDataType(out_type);
  Val* x = ops::maybeCastTensor(a, compute_type);
  Val* y = ops::maybeCastTensor(b, compute_type);
  Val* out = newResult({condition, x, y}, compute_type);
  IrBuilder::create<TernaryOp>(TernaryOpType::Where, out, condition, x, y);
  return ops::maybeCastTensor(out, out_type);
}

TensorView* where(TensorView* condition, Val* a, Val* b) {
  return where(static_cast<Val*>(condition), a, b)->as<TensorView>();
}

Val* clamp(Val* x, Val* min_value, Val* max_value) {
  FUSER_CHECK(
      min_value != nullptr || max_value != nullptr, "clamp of ", x->toString(),
      ": give min, max or both (torch.clamp needs at least one bound).");
  Val* out = x;
  if (min_value != nullptr) {
    out = binaryOp(BinaryOpType::Max, out, min_value);
  }
  if (max_value != nullptr) {
    out = binaryOp(BinaryOpType::Min, out, max_value);
  }
  return out;
}

Val* addcmul(Val* x, Val* t1, Val* t2, Val* value) {
  Val* product = binaryOp(BinaryOpType::Mul, t1, t2);
  return binaryOp(
      BinaryOpType::Add, x, binaryOp(BinaryOpType::Mul, value, product));
}

Val* lerp(Val* start, Val* end, Val* weight) {
  Val* step = binaryOp(BinaryOpType::Sub, end, start);
  return binaryOp(
      BinaryOpType::Add, start, binaryOp(BinaryOpType::Mul, weight, step));
}

} // namespace fuser
