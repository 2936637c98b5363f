// Arithmetic: literals, scalar expressions printed inline, and the
// statements of unary, binary and ternary ops.
#include <codegen/kernel_printer.h>

#include <expr/bound_prover.h>
#include <expr/divisibility.h>
#include <ir/all_nodes.h>

#include <cmath>
#include <iomanip>
#include <limits>
#include <optional>

namespace fuser::codegen {

std::string literal(const Val* v) {
  const ScalarValue& value = v->value();
  if (v->dtype() == DataType::Bool) {
    return value.asBool() ? "true" : "false";
  }
  if (isWelfordType(v->dtype())) {
    return cudaTypeName(v->dtype()) + "()"; // the only state constant: empty
  }
  if (isIntegralType(v->dtype())) {
    const int64_t x = value.asInt();
    // INT64_MIN has no literal form.
    if (x == std::numeric_limits<int64_t>::min()) {
      return "(-9223372036854775807LL - 1)";
    }
    // int64 constants are long long, so that templates such as fuserMax
    // see one type with an int64_t operand.
    const bool long_long =
        v->dtype() == DataType::Int || x > INT32_MAX || x < INT32_MIN;
    return std::to_string(x) + (long_long ? "LL" : "");
  }
  if (isComplexType(v->dtype())) {
    // Each part printed as a real constant of the part type.
    const DataType part = complexPartType(v->dtype());
    const Val re(ScalarValue(value.asComplex().real()), part);
    const Val im(ScalarValue(value.asComplex().imag()), part);
    return "makeComplex<" + cudaTypeName(part) + ">(" + literal(&re) + ", " +
           literal(&im) + ")";
  }
  const double d = value.asDouble();
  if (std::isinf(d)) {
    return d > 0 ? "CUDART_INF" : "(-CUDART_INF)";
  }
  if (std::isnan(d)) {
    return "CUDART_NAN";
  }
  std::ostringstream ss;
  ss << std::setprecision(17) << d;
  std::string s = ss.str();
  if (s.find_first_of(".e") == std::string::npos) {
    s += ".0";
  }
  return v->dtype() == DataType::Float ? s + "f" : s;
}

std::string castExpr(const std::string& x, DataType from, DataType to) {
  if (isComplexType(from) && isComplexType(to)) {
    return "fuserComplexCast<" + cudaTypeName(complexPartType(to)) + ">(" + x +
           ")";
  }
  if (isComplexType(from)) { // the real part, as Tensor.to
    return "castTo<" + cudaTypeName(to) + ">(fuserReal(" + x + "))";
  }
  if (isComplexType(to)) {
    return "fuserToComplex(castTo<" + cudaTypeName(complexPartType(to)) + ">(" +
           x + "))";
  }
  return "castTo<" + cudaTypeName(to) + ">(" + x + ")";
}

namespace {

// CUDA's math function `name` for `dtype`: the float version (`erfinvf`)
// for float, whose C++ overloads CUDA does not declare for every function.
std::string mathCall(const std::string& name, DataType dtype) {
  return dtype == DataType::Float ? name + "f" : name;
}

std::string integerTemplateArgument(DataType dtype) {
  return isIntegralType(dtype) && dtype != DataType::Bool
             ? "<" + cudaTypeName(dtype) + ">"
             : "";
}

// The expression of a row of ir/binary_ops.def of a uniform kernel form
// (Infix, Call, Math), or nullopt for an Own row.
std::optional<std::string> tableBinary(
    BinaryOpType op, const std::string& a, const std::string& b,
    DataType dtype) {
#define FUSER_KERNEL_Infix(op) "(" + a + " " #op " " + b + ")"
#define FUSER_KERNEL_Call(f) #f "(" + a + ", " + b + ")"
#define FUSER_KERNEL_Math(f) mathCall(#f, dtype) + "(" + a + ", " + b + ")"
#define FUSER_KERNEL_Own std::nullopt
  switch (op) {
#define FUSER_BINARY_OP(e, name, types, complex, kernel, host, aten) \
  case BinaryOpType::e:                                              \
    return FUSER_KERNEL_##kernel;
#include <ir/binary_ops.def>
#undef FUSER_BINARY_OP
  }
#undef FUSER_KERNEL_Own
#undef FUSER_KERNEL_Math
#undef FUSER_KERNEL_Call
#undef FUSER_KERNEL_Infix
  FUSER_ERROR("unknown binary op");
}

std::string binary(
    BinaryOpType op, const std::string& a, const std::string& b,
    DataType dtype) {
  if (std::optional<std::string> expr = tableBinary(op, a, b, dtype)) {
    return *expr;
  }
  switch (op) {
    case BinaryOpType::Mod:
      return isFloatingPointType(dtype) ? "fmod(" + a + ", " + b + ")"
                                        : "(" + a + " % " + b + ")";
    // Integers name their type: an index bound and a 64-bit extent are
    // then one type whatever the literal's (`fuserMin(1, n)`).
    case BinaryOpType::Max:
      return "fuserMax" + integerTemplateArgument(dtype) + "(" + a + ", " + b +
             ")";
    case BinaryOpType::Min:
      return "fuserMin" + integerTemplateArgument(dtype) + "(" + a + ", " + b +
             ")";
    default:
      FUSER_ERROR("no kernel form of binary op ", op);
  }
}

std::string unary(
    UnaryOpType op, const std::string& x, DataType in_type, DataType out_type) {
  switch (op) {
    case UnaryOpType::Neg:
      return "(-" + x + ")";
    case UnaryOpType::Abs:
      if (isComplexType(in_type)) {
        return "fuserComplexAbs(" + x + ")";
      }
      return isFloatingPointType(in_type) ? "fabs(" + x + ")"
                                          : "abs(" + x + ")";
    case UnaryOpType::Exp:
      return "exp(" + x + ")";
    case UnaryOpType::Log:
      return "log(" + x + ")";
    case UnaryOpType::Sqrt:
      return "sqrt(" + x + ")";
    case UnaryOpType::Rsqrt:
      return "rsqrt(" + x + ")";
    case UnaryOpType::Reciprocal:
      return "reciprocal(" + x + ")";
    case UnaryOpType::Relu:
      return "relu(" + x + ")";
    case UnaryOpType::Sigmoid:
      return "sigmoid(" + x + ")";
    case UnaryOpType::Tanh:
      return "tanh(" + x + ")";
    case UnaryOpType::Gelu:
      return "gelu(" + x + ")";
    case UnaryOpType::Silu:
      return "silu(" + x + ")";
    case UnaryOpType::Sin:
      return "sin(" + x + ")";
    case UnaryOpType::Cos:
      return "cos(" + x + ")";
    case UnaryOpType::Erfinv:
    case UnaryOpType::Erfcinv:
#define FUSER_UNARY_OP(e, name, result, complex)
#define FUSER_UNARY_MATH(e, name, result, complex, host, aten) \
  case UnaryOpType::e:
#include <ir/unary_ops.def>
#undef FUSER_UNARY_MATH
#undef FUSER_UNARY_OP
      return mathCall(toString(op), out_type) + "(" + x + ")";
    case UnaryOpType::Round: // half to even
      return mathCall("rint", out_type) + "(" + x + ")";
    case UnaryOpType::Frac:
      return "fuserFrac(" + x + ")";
    case UnaryOpType::Sign:
      return "fuserSign(" + x + ")";
    case UnaryOpType::Signbit:
      return "fuserSignbit(" + x + ")";
    case UnaryOpType::IsNan:
      return "fuserIsNan(" + x + ")";
    case UnaryOpType::IsInf:
      return "fuserIsInf(" + x + ")";
    case UnaryOpType::IsFinite:
      return "fuserIsFinite(" + x + ")";
    case UnaryOpType::LogicalNot:
      return "(!" + x + ")";
    case UnaryOpType::BitwiseNot:
      return (isBooleanType(in_type) ? "(!" : "(~") + x + ")";
    case UnaryOpType::Cast:
      return castExpr(x, in_type, out_type);
    case UnaryOpType::Real:
      return "fuserReal(" + x + ")";
    case UnaryOpType::Imag:
      return "fuserImag(" + x + ")";
    case UnaryOpType::Conj:
      return "fuserConj(" + x + ")";
    case UnaryOpType::WelfordInit:
      return "welfordInit(" + x + ")";
    case UnaryOpType::WelfordAvg:
      return x + ".avg";
    case UnaryOpType::WelfordVarSum:
      return x + ".var_sum";
    case UnaryOpType::WelfordCount:
      return x + ".n";
  }
  FUSER_ERROR("unknown unary op");
}

} // namespace

std::string KernelPrinter::inlineExpr(Expr* def) {
  if (auto* bop = dynamic_cast<BinaryOp*>(def)) {
    return binary(
        bop->opType(), gen(bop->lhs()), gen(bop->rhs()), bop->out()->dtype());
  }
  if (auto* uop = dynamic_cast<UnaryOp*>(def)) {
    return unary(
        uop->opType(), gen(uop->in()), uop->in()->dtype(), uop->out()->dtype());
  }
  if (auto* top = dynamic_cast<TernaryOp*>(def)) {
    return "(" + gen(top->input(0)) + " ? " + gen(top->input(1)) + " : " +
           gen(top->input(2)) + ")";
  }
  FUSER_ERROR("cannot print ", def->toString(), " inline");
}

void KernelPrinter::handle(UnaryOp* uop) {
  const DataType dtype = uop->out()->dtype();
  // A cast, the predicates and the Welford conversions change the type;
  // other ops compute in the output's.
  const bool converts =
      uop->opType() == UnaryOpType::Cast || isUnaryPredicate(uop->opType()) ||
      isWelfordType(uop->in()->dtype()) || isWelfordType(dtype) ||
      isComplexType(uop->in()->dtype()) != isComplexType(dtype);
  const DataType in_type = converts ? uop->in()->dtype() : dtype;
  line(
      gen(uop->out()) + " = " +
      unary(
          uop->opType(), operand(uop->in(), in_type), uop->in()->dtype(),
          dtype) +
      ";");
}

void KernelPrinter::handle(BinaryOp* bop) {
  // Comparisons compute in the operands' type, not bool.
  DataType compute = bop->out()->dtype();
  if (isComparisonOp(bop->opType())) {
    compute = bop->lhs()->isA<kir::TensorIndex>() ? bop->lhs()->dtype()
                                                  : bop->rhs()->dtype();
  }
  line(
      gen(bop->out()) + " = " +
      binary(
          bop->opType(), operand(bop->lhs(), compute),
          operand(bop->rhs(), compute), compute) +
      ";");
}

void KernelPrinter::handle(TernaryOp* top) {
  const DataType dtype = top->out()->dtype();
  line(
      gen(top->out()) + " = " + gen(top->input(0)) + " ? " +
      operand(top->input(1), dtype) + " : " + operand(top->input(2), dtype) +
      ";");
}

std::optional<std::pair<Val*, Val*>> KernelPrinter::laneOfIndex(
    Val* index, DataType compute) const {
  // runtime/random.h: a block holds 4 floats or 2 doubles.
  const int64_t per_block = compute == DataType::Double ? 2 : 4;
  if (lane_loop_ == nullptr ||
      lane_loop_->stop()->constIntValue() % per_block != 0) {
    return std::nullopt;
  }
  auto* add = simplify::integralDef(index, BinaryOpType::Add);
  if (add == nullptr) {
    return std::nullopt;
  }
  Val* lane = lane_loop_->index();
  for (auto [base, other] :
       {std::pair{add->lhs(), add->rhs()}, std::pair{add->rhs(), add->lhs()}}) {
    if (other == lane && provenMultipleOf(base, per_block)) {
      return std::pair{base, lane};
    }
  }
  return std::nullopt;
}

void KernelPrinter::handle(RNGOp* rng) {
  // runtime/random.h: float and double draw in their own type, the 16-bit
  // types as float; normals are computed in double.
  const DataType out = rng->out()->dtype();
  const DataType compute =
      out == DataType::Double ? DataType::Double : DataType::Float;
  const DataType param =
      rng->opType() == RNGOpType::Normal ? DataType::Double : compute;
  std::string function =
      rng->opType() == RNGOpType::Normal
          ? "fuserNormalDouble"
          : (compute == DataType::Double ? "fuserUniformDouble"
                                         : "fuserUniformFloat");
  // Uniform draws share a block among neighbouring elements through
  // their op's cache; a normal takes a whole block per element.
  std::string cache;
  std::optional<std::pair<Val*, Val*>> lane;
  if (rng->opType() != RNGOpType::Normal) {
    auto [it, fresh] = rng_caches_.emplace(rng, rng_caches_.size());
    cache = "fuser_rng" + std::to_string(it->second) + ", ";
    lane = laneOfIndex(rng->extra().at(0), compute);
  }
  if (lane.has_value()) {
    function += "OfLane";
  }
  const std::string index = lane.has_value()
                                ? gen(lane->first) + ", " + gen(lane->second)
                                : gen(rng->extra().at(0));
  const std::string call =
      function + "(" + cache + operand(rng->seed(), DataType::Int) + ", " +
      operand(rng->offset(), DataType::Int) + ", " + index + ", " +
      operand(rng->a(), param) + ", " + operand(rng->b(), param) + ")";
  line(gen(rng->out()) + " = castTo<" + cudaTypeName(out) + ">(" + call + ");");
}

} // namespace fuser::codegen
