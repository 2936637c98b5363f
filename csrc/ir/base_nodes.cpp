#include <ir/base_nodes.h>

#include <fusion.h>
#include <ir/builder.h>
#include <ir/cloner.h>
#include <ir/dispatch.h>
#include <ir/interface_nodes.h>

#include <sstream>

namespace fuser {

std::string indent(int size) {
  return std::string(static_cast<size_t>(size) * 2, ' ');
}

std::ostream& operator<<(std::ostream& os, const Statement* stmt) {
  return os << (stmt == nullptr ? std::string("<null>") : stmt->toString());
}

namespace {

DataType dataTypeOf(const ScalarValue& value) {
  if (value.isBool()) {
    return DataType::Bool;
  }
  if (value.isInt()) {
    return DataType::Int;
  }
  return value.isComplex() ? DataType::ComplexDouble : DataType::Double;
}

} // namespace

Val::Val(DataType dtype) : Val(ValType::Scalar, dtype) {}

Val::Val(ScalarValue value, DataType dtype) : Val(ValType::Scalar, dtype) {
  FUSER_CHECK(
      value.hasValue(),
      "A constant scalar needs a value; for a symbolic "
      "scalar use IrBuilder::create<Val>(dtype).");
  // Keep the value in the representation of its data type.
  if (isIntegralType(dtype)) {
    FUSER_CHECK(
        !value.isDouble() ||
            static_cast<double>(value.asInt()) == value.asDouble(),
        "Constant ", value, " does not fit integer type ", dtype, ".");
    value_ = ScalarValue(value.asInt());
  } else if (isFloatingPointType(dtype)) {
    value_ = ScalarValue(value.asDouble());
  } else if (isWelfordType(dtype)) {
    // The one Welford constant: the empty state (a reduction's init).
    FUSER_INTERNAL_ASSERT(value.asDouble() == 0.0, "a non-empty state");
    value_ = ScalarValue(0.0);
  } else if (dtype == DataType::Bool) {
    value_ = ScalarValue(value.asBool());
  } else if (isComplexType(dtype)) {
    std::complex<double> c = value.asComplex();
    if (dtype == DataType::ComplexFloat) { // held at the type's precision
      c = std::complex<double>(std::complex<float>(c));
    }
    value_ = ScalarValue(c);
  } else {
    FUSER_CHECK(false, "A constant scalar cannot have data type ", dtype, ".");
  }
}

Val::Val(ScalarValue value) : Val(value, dataTypeOf(value)) {}

bool Val::isFusionInput() const {
  return fusion() != nullptr && fusion()->isInput(this);
}

bool Val::isFusionOutput() const {
  return fusion() != nullptr && fusion()->isOutput(this);
}

std::string Val::toString(int indent_size) const {
  std::stringstream ss;
  ss << indent(indent_size);
  if (isConst()) {
    if (isComplexType(dtype_)) {
      std::ostringstream num;
      num.precision(17);
      num << "complex(" << value_.asComplex().real() << ", "
          << value_.asComplex().imag() << ")";
      ss << num.str();
    } else if (isFloatingPointType(dtype_)) {
      std::ostringstream num;
      num.precision(17);
      num << value_.asDouble();
      std::string s = num.str();
      if (s.find_first_of(".eEin") == std::string::npos) {
        s += ".0";
      }
      ss << s;
    } else {
      ss << value_;
    }
    return ss.str();
  }
  if (dtype_ == DataType::Bool) {
    ss << "b";
  } else if (isFloatingPointType(dtype_)) {
    ss << "d";
  } else {
    ss << "i";
  }
  ss << name();
  return ss.str();
}

std::string Val::toInlineString() const {
  if (!isConst() && definition() != nullptr && isScalar()) {
    return definition()->toInlineString();
  }
  return toString();
}

bool Val::sameAs(const Statement* other) const {
  if (this == other) {
    return true;
  }
  auto* other_val = dynamic_cast<const Val*>(other);
  if (other_val == nullptr || !isScalar() || !other_val->isScalar()) {
    return false;
  }
  if (isConst() && other_val->isConst()) {
    // Integer constants are equal by value whatever their integer type: a
    // split factor 4 (Index) and a literal 4 (Int) are the same number in
    // index math (doc/indexing.md §"Simplification").
    if (isIntegralType(dtype_) && isIntegralType(other_val->dtype())) {
      return value_ == other_val->value();
    }
    return dtype_ == other_val->dtype() && value_ == other_val->value();
  }
  if (definition_ != nullptr && other_val->definition() != nullptr) {
    return definition_->sameAs(other_val->definition());
  }
  return false;
}

void Val::accept(OptOutDispatch& visitor) {
  visitor.handle(this);
}

Statement* Val::cloneWith(IrCloner& cloner) const {
  if (isConst()) {
    return IrBuilder::createInContainer<Val>(cloner.target(), value_, dtype_);
  }
  return IrBuilder::createInContainer<Val>(cloner.target(), dtype_);
}

void Expr::addInput(Val* val) {
  FUSER_INTERNAL_ASSERT(val != nullptr, "null input of ", getOpString());
  inputs_.push_back(val);
}

void Expr::addOutput(Val* val) {
  FUSER_INTERNAL_ASSERT(val != nullptr, "null output of ", getOpString());
  outputs_.push_back(val);
}

std::string Expr::toInlineString() const {
  std::stringstream ss;
  ss << getOpString() << "(";
  for (size_t i = 0; i < inputs_.size(); ++i) {
    ss << (i ? ", " : "") << inputs_[i]->toInlineString();
  }
  ss << ")";
  return ss.str();
}

bool Expr::sameAs(const Statement* other) const {
  if (this == other) {
    return true;
  }
  auto* other_expr = dynamic_cast<const Expr*>(other);
  if (other_expr == nullptr || getOpString() != other_expr->getOpString() ||
      inputs_.size() != other_expr->inputs().size() ||
      outputs_.size() != other_expr->outputs().size() ||
      !attributesMatch(other_expr)) {
    return false;
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!inputs_[i]->sameAs(other_expr->input(i))) {
      return false;
    }
  }
  return true;
}

std::vector<std::pair<size_t, size_t>> Expr::mappedAxes(
    const TensorView* producer) const {
  auto* out = dynamic_cast<const TensorView*>(output(0));
  FUSER_INTERNAL_ASSERT(
      out != nullptr, getOpString(), " maps the axes of ", producer->toString(),
      " to a non-tensor output.");
  const size_t rank =
      TensorDomain::noReductions(producer->getLogicalDomain()).size();
  FUSER_INTERNAL_ASSERT(
      rank == out->getMaybeRootDomain().size(), "rank mismatch between ",
      producer->toString(), " and ", out->toString(), " in ", toString());
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t i = 0; i < rank; ++i) {
    pairs.emplace_back(i, i);
  }
  return pairs;
}

} // namespace fuser
