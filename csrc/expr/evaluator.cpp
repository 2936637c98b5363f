#include <expr/evaluator.h>

#include <ir/all_nodes.h>

#include <cmath>
#include <optional>

namespace fuser {

void ExpressionEvaluator::bind(const Val* value, ScalarValue concrete) {
  bindings_[value] = concrete;
  cache_.clear();
}

void ExpressionEvaluator::bind(const std::string& name, ScalarValue concrete) {
  named_bindings_[name] = concrete;
  cache_.clear();
}

namespace {

ScalarValue castTo(const ScalarValue& v, DataType dtype) {
  switch (dtype) {
    // Narrow integers wrap, as C++ conversions (and torch) do.
    case DataType::Int8:
      return ScalarValue(int64_t(static_cast<int8_t>(v.asInt())));
    case DataType::UInt8:
      return ScalarValue(int64_t(static_cast<uint8_t>(v.asInt())));
    case DataType::Int16:
      return ScalarValue(int64_t(static_cast<int16_t>(v.asInt())));
    case DataType::Int32:
      return ScalarValue(int64_t(static_cast<int32_t>(v.asInt())));
    default:
      break;
  }
  if (isIntegralType(dtype)) {
    return ScalarValue(v.asInt());
  }
  if (isFloatingPointType(dtype)) {
    return ScalarValue(v.asDouble());
  }
  if (dtype == DataType::Bool) {
    return ScalarValue(v.asBool());
  }
  return v;
}

// The inverse of erf: Winitzki's approximation refined by Newton steps.
double erfinv(double y) {
  if (!(y > -1.0 && y < 1.0)) {
    return y == 1.0 ? INFINITY : (y == -1.0 ? -INFINITY : NAN);
  }
  constexpr double a = 0.147;
  constexpr double kPi = 3.14159265358979323846;
  const double w = std::log((1.0 - y) * (1.0 + y));
  const double t = 2.0 / (kPi * a) + w / 2.0;
  double x = std::copysign(std::sqrt(std::sqrt(t * t - w / a) - t), y);
  for (int i = 0; i < 3; ++i) {
    x -= (std::erf(x) - y) / (2.0 / std::sqrt(kPi) * std::exp(-x * x));
  }
  return x;
}

// Integer ops of torch's semantics on `bits`-bit values (runtime/math.h).
int64_t shiftOf(BinaryOpType op, int64_t a, int64_t b, int bits) {
  const bool in_range = b >= 0 && b < bits;
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  switch (op) {
    case BinaryOpType::LeftShift:
      return in_range ? static_cast<int64_t>(static_cast<uint64_t>(a) << b) : 0;
    case BinaryOpType::RightShift:
      return a >> (b >= 0 && b < bits - 1 ? b : bits - 1);
    default: // LogicalRightShift
      return in_range
                 ? static_cast<int64_t>((static_cast<uint64_t>(a) & mask) >> b)
                 : 0;
  }
}

int64_t gcdOf(int64_t a, int64_t b) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (a != 0) {
    const int64_t c = a;
    a = b % a;
    b = c;
  }
  return b;
}

// A row of ir/binary_ops.def whose host form is Same: the kernel's infix
// operator `f` on the operands' int64 values if neither is a double, else
// on their doubles (bools for Logical, int64 for Bits rows).
template <BinaryTypes kTypes, typename F>
std::optional<ScalarValue> sameAsKernel(
    F f, const ScalarValue& a, const ScalarValue& b, DataType out_type) {
  if constexpr (kTypes == BinaryTypes::Logical) {
    return ScalarValue(f(a.asBool(), b.asBool()));
  } else if constexpr (kTypes == BinaryTypes::Bits) {
    return castTo(ScalarValue(f(a.asInt(), b.asInt())), out_type);
  } else if constexpr (kTypes == BinaryTypes::Compare) {
    const bool integral = !a.isDouble() && !b.isDouble();
    return ScalarValue(
        integral ? f(a.asInt(), b.asInt()) : f(a.asDouble(), b.asDouble()));
  } else {
    static_assert(kTypes == BinaryTypes::Promoted);
    // Both computed, so that a complex operand fails in asDouble.
    const bool integral = !a.isDouble() && !b.isDouble();
    const double d = f(a.asDouble(), b.asDouble());
    const int64_t i = f(a.asInt(), b.asInt());
    return castTo(integral ? ScalarValue(i) : ScalarValue(d), out_type);
  }
}

// An Own row: evaluateBinaryOp's switch has its case.

template <BinaryTypes kTypes>
std::optional<ScalarValue> sameAsKernel(
    std::nullptr_t, const ScalarValue&, const ScalarValue&, DataType) {
  return std::nullopt;
}

// The value of a row of a Same host form, or nullopt.
std::optional<ScalarValue> tableBinary(
    BinaryOpType op, const ScalarValue& a, const ScalarValue& b,
    DataType out_type) {
#define FUSER_HOST_OPERATOR_Infix(op) [](auto x, auto y) { return x op y; }
#define FUSER_HOST_Same(kernel) FUSER_HOST_OPERATOR_##kernel
#define FUSER_HOST_Own(kernel) nullptr
  switch (op) {
#define FUSER_BINARY_OP(e, name, types, complex, kernel, host, aten) \
  case BinaryOpType::e:                                              \
    return sameAsKernel<BinaryTypes::types>(                         \
        FUSER_HOST_##host(kernel), a, b, out_type);
#include <ir/binary_ops.def>
#undef FUSER_BINARY_OP
  }
#undef FUSER_HOST_Own
#undef FUSER_HOST_Same
#undef FUSER_HOST_OPERATOR_Infix
  return std::nullopt;
}

} // namespace

ScalarValue evaluateBinaryOp(
    BinaryOpType op, const ScalarValue& a, const ScalarValue& b,
    DataType out_type) {
  const bool integral = !a.isDouble() && !b.isDouble();
  auto result = [&](double d, int64_t i) {
    return integral ? castTo(ScalarValue(i), out_type)
                    : castTo(ScalarValue(d), out_type);
  };
  if (std::optional<ScalarValue> value = tableBinary(op, a, b, out_type)) {
    return *value;
  }
  switch (op) {
    case BinaryOpType::Div:
      FUSER_CHECK(!integral || b.asInt() != 0, "Division by zero.");
      return result(
          a.asDouble() / b.asDouble(), integral ? a.asInt() / b.asInt() : 0);
    case BinaryOpType::CeilDiv:
      FUSER_CHECK(b.asInt() != 0, "Division by zero in ceilDiv.");
      return castTo(
          ScalarValue((a.asInt() + b.asInt() - 1) / b.asInt()), out_type);
    case BinaryOpType::Mod:
      FUSER_CHECK(!integral || b.asInt() != 0, "Modulo by zero.");
      return result(
          std::fmod(a.asDouble(), b.asDouble()),
          integral ? a.asInt() % b.asInt() : 0);
    case BinaryOpType::Pow:
      return castTo(
          ScalarValue(std::pow(a.asDouble(), b.asDouble())), out_type);
    case BinaryOpType::Max:
      return result(
          std::max(a.asDouble(), b.asDouble()), std::max(a.asInt(), b.asInt()));
    case BinaryOpType::Min:
      return result(
          std::min(a.asDouble(), b.asDouble()), std::min(a.asInt(), b.asInt()));
    case BinaryOpType::Atan2:
      return castTo(
          ScalarValue(std::atan2(a.asDouble(), b.asDouble())), out_type);
    case BinaryOpType::Remainder: {
      FUSER_CHECK(!integral || b.asInt() != 0, "Remainder by zero.");
      if (integral) {
        const int64_t r = a.asInt() % b.asInt();
        return castTo(
            ScalarValue(
                r != 0 && (r < 0) != (b.asInt() < 0) ? r + b.asInt() : r),
            out_type);
      }
      const double r = std::fmod(a.asDouble(), b.asDouble());
      return castTo(
          ScalarValue(
              r != 0 && (r < 0) != (b.asDouble() < 0) ? r + b.asDouble() : r),
          out_type);
    }
    case BinaryOpType::LeftShift:
    case BinaryOpType::RightShift:
    case BinaryOpType::LogicalRightShift: {
      // castTo wraps the result to the type's width.
      const int bits = static_cast<int>(dataTypeSize(out_type)) * 8;
      return castTo(
          ScalarValue(shiftOf(op, a.asInt(), b.asInt(), bits)), out_type);
    }
    case BinaryOpType::Gcd:
      return castTo(ScalarValue(gcdOf(a.asInt(), b.asInt())), out_type);
    case BinaryOpType::Nextafter:
      return out_type == DataType::Float
                 ? ScalarValue(double(std::nextafter(
                       float(a.asDouble()), float(b.asDouble()))))
                 : ScalarValue(std::nextafter(a.asDouble(), b.asDouble()));
    default:
      break;
  }
  FUSER_ERROR("unknown binary op");
}

ScalarValue evaluateUnaryOp(
    UnaryOpType op, const ScalarValue& a, DataType out_type) {
  const double x = a.asDouble();
  switch (op) {
    case UnaryOpType::Neg:
      return a.isDouble() ? castTo(ScalarValue(-x), out_type)
                          : castTo(ScalarValue(-a.asInt()), out_type);
    case UnaryOpType::Abs:
      return a.isDouble()
                 ? castTo(ScalarValue(std::fabs(x)), out_type)
                 : castTo(ScalarValue(std::llabs(a.asInt())), out_type);
    case UnaryOpType::Exp:
      return castTo(ScalarValue(std::exp(x)), out_type);
    case UnaryOpType::Log:
      return castTo(ScalarValue(std::log(x)), out_type);
    case UnaryOpType::Sqrt:
      return castTo(ScalarValue(std::sqrt(x)), out_type);
    case UnaryOpType::Rsqrt:
      return castTo(ScalarValue(1.0 / std::sqrt(x)), out_type);
    case UnaryOpType::Reciprocal:
      return castTo(ScalarValue(1.0 / x), out_type);
    case UnaryOpType::Relu:
      return a.isDouble()
                 ? castTo(ScalarValue(x > 0 ? x : 0.0), out_type)
                 : castTo(
                       ScalarValue(std::max<int64_t>(a.asInt(), 0)), out_type);
    case UnaryOpType::Sigmoid:
      return castTo(ScalarValue(1.0 / (1.0 + std::exp(-x))), out_type);
    case UnaryOpType::Tanh:
      return castTo(ScalarValue(std::tanh(x)), out_type);
    case UnaryOpType::Gelu:
      return castTo(
          ScalarValue(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)))),
          out_type);
    case UnaryOpType::Silu:
      return castTo(ScalarValue(x / (1.0 + std::exp(-x))), out_type);
    case UnaryOpType::Sin:
      return castTo(ScalarValue(std::sin(x)), out_type);
    case UnaryOpType::Cos:
      return castTo(ScalarValue(std::cos(x)), out_type);
#define FUSER_UNARY_OP(e, name, result, complex)
#define FUSER_UNARY_MATH(e, name, result, complex, host, aten) \
  case UnaryOpType::e:                                         \
    return castTo(ScalarValue(host(x)), out_type);
#include <ir/unary_ops.def>
#undef FUSER_UNARY_MATH
#undef FUSER_UNARY_OP
    case UnaryOpType::Erfinv:
      return castTo(ScalarValue(erfinv(x)), out_type);
    case UnaryOpType::Erfcinv:
      return castTo(ScalarValue(erfinv(1.0 - x)), out_type);
    // Integers never reach the rounding ops (arith.cpp returns them as
    // they are).
    case UnaryOpType::Round:
      return castTo(ScalarValue(std::nearbyint(x)), out_type);
    case UnaryOpType::Frac:
      return castTo(ScalarValue(x - std::trunc(x)), out_type);
    case UnaryOpType::Sign:
      return a.isDouble()
                 ? castTo(ScalarValue(double((0.0 < x) - (x < 0.0))), out_type)
                 : castTo(
                       ScalarValue(int64_t((0 < a.asInt()) - (a.asInt() < 0))),
                       out_type);
    case UnaryOpType::Signbit:
      return ScalarValue(a.isDouble() ? std::signbit(x) : a.asInt() < 0);
    case UnaryOpType::IsNan:
      return ScalarValue(a.isDouble() && std::isnan(x));
    case UnaryOpType::IsInf:
      return ScalarValue(a.isDouble() && std::isinf(x));
    case UnaryOpType::IsFinite:
      return ScalarValue(!a.isDouble() || std::isfinite(x));
    case UnaryOpType::LogicalNot:
      return ScalarValue(!a.asBool());
    case UnaryOpType::BitwiseNot:
      return a.isBool() ? ScalarValue(!a.asBool())
                        : castTo(ScalarValue(~a.asInt()), out_type);
    case UnaryOpType::Cast:
      return castTo(a, out_type);
    case UnaryOpType::WelfordInit:
    case UnaryOpType::WelfordAvg:
    case UnaryOpType::WelfordVarSum:
    case UnaryOpType::WelfordCount:
      break; // Welford states are never scalars
    case UnaryOpType::Real:
    case UnaryOpType::Imag:
    case UnaryOpType::Conj:
      break; // complex values are never scalars
  }
  FUSER_ERROR("unknown unary op");
}

std::optional<ScalarValue> ExpressionEvaluator::evaluate(const Val* value) {
  if (value == nullptr) {
    return std::nullopt;
  }
  if (value->isConst()) {
    return value->value();
  }
  if (auto it = bindings_.find(value); it != bindings_.end()) {
    return it->second;
  }
  // Names are bound for leaves (a loop index, a kernel argument field).
  if (!named_bindings_.empty() && value->definition() == nullptr) {
    if (auto it = named_bindings_.find(value->toString());
        it != named_bindings_.end()) {
      return it->second;
    }
  }
  if (auto it = cache_.find(value); it != cache_.end()) {
    return it->second;
  }
  Expr* def = value->definition();
  if (def == nullptr || !value->isScalar()) {
    return std::nullopt;
  }
  std::optional<ScalarValue> result;
  if (auto* bop = dynamic_cast<BinaryOp*>(def)) {
    auto a = evaluate(bop->lhs());
    auto b = evaluate(bop->rhs());
    if (a && b) {
      result = evaluateBinaryOp(bop->opType(), *a, *b, value->dtype());
    }
  } else if (auto* uop = dynamic_cast<UnaryOp*>(def)) {
    auto a = evaluate(uop->in());
    if (a) {
      result = evaluateUnaryOp(uop->opType(), *a, value->dtype());
    }
  } else if (auto* top = dynamic_cast<TernaryOp*>(def)) {
    auto c = evaluate(top->input(0));
    if (c) {
      result = evaluate(c->asBool() ? top->input(1) : top->input(2));
    }
  }
  if (result) {
    cache_[value] = *result;
  }
  return result;
}

ScalarValue ExpressionEvaluator::evaluateOrThrow(const Val* value) {
  auto result = evaluate(value);
  if (!result.has_value()) {
    // Name the unbound input (the header promises it): follow the first
    // input that does not evaluate down to a value without definition.
    const Val* missing = value;
    while (missing->definition() != nullptr) {
      const Val* next = nullptr;
      for (const Val* input : missing->definition()->inputs()) {
        if (!evaluate(input).has_value()) {
          next = input;
          break;
        }
      }
      if (next == nullptr) {
        break;
      }
      missing = next;
    }
    FUSER_CHECK(
        false, "Cannot evaluate ", value->toInlineString(), ": ",
        missing->toString(),
        " is not bound. Bind it with "
        "ExpressionEvaluator::bind before evaluating.");
  }
  return *result;
}

} // namespace fuser
