// The value of a constant scalar: nothing, a bool, an integer, a double or
// a complex double (a constant of a complex type: doc/ops.md "Complex
// numbers"; no host arithmetic takes it, asDouble() of it is an error).
// Comparable with plain C++ numbers so tests can write
// `EXPECT_EQ(split->factor()->value(), 2)`.
#pragma once

#include <base/exceptions.h>

#include <complex>
#include <cstdint>
#include <ostream>
#include <type_traits>
#include <variant>

namespace fuser {

class ScalarValue {
 public:
  ScalarValue() = default;
  ScalarValue(bool v) : value_(v) {}
  template <
      typename T,
      std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> =
          0>
  ScalarValue(T v) : value_(static_cast<int64_t>(v)) {}
  ScalarValue(double v) : value_(v) {}
  ScalarValue(float v) : value_(static_cast<double>(v)) {}
  ScalarValue(std::complex<double> v) : value_(v) {}

  bool hasValue() const {
    return !std::holds_alternative<std::monostate>(value_);
  }
  bool isBool() const {
    return std::holds_alternative<bool>(value_);
  }
  bool isInt() const {
    return std::holds_alternative<int64_t>(value_);
  }
  bool isDouble() const {
    return std::holds_alternative<double>(value_);
  }
  bool isComplex() const {
    return std::holds_alternative<std::complex<double>>(value_);
  }
  // Any value as a complex number (a real one with no imaginary part).
  std::complex<double> asComplex() const {
    if (isComplex()) {
      return std::get<std::complex<double>>(value_);
    }
    return {asDouble(), 0.0};
  }

  // Numeric views; a bool reads as 0/1.
  int64_t asInt() const {
    FUSER_INTERNAL_ASSERT(hasValue(), "reading an empty ScalarValue");
    if (isInt()) {
      return std::get<int64_t>(value_);
    }
    if (isBool()) {
      return std::get<bool>(value_) ? 1 : 0;
    }
    FUSER_INTERNAL_ASSERT(
        !isComplex(), "reading a complex value as an integer");
    return static_cast<int64_t>(std::get<double>(value_));
  }
  double asDouble() const {
    FUSER_INTERNAL_ASSERT(hasValue(), "reading an empty ScalarValue");
    FUSER_INTERNAL_ASSERT(!isComplex(), "reading a complex value as a real");
    if (isDouble()) {
      return std::get<double>(value_);
    }
    return static_cast<double>(asInt());
  }
  bool asBool() const {
    FUSER_INTERNAL_ASSERT(hasValue(), "reading an empty ScalarValue");
    if (isBool()) {
      return std::get<bool>(value_);
    }
    if (isComplex()) {
      return asComplex() != std::complex<double>(0.0, 0.0);
    }
    return isInt() ? asInt() != 0 : asDouble() != 0.0;
  }

  template <typename T>
  T as() const {
    if constexpr (std::is_same_v<T, bool>) {
      return asBool();
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(asInt());
    } else {
      return static_cast<T>(asDouble());
    }
  }

  bool operator==(const ScalarValue& other) const {
    if (!hasValue() || !other.hasValue()) {
      return hasValue() == other.hasValue();
    }
    if (isComplex() || other.isComplex()) {
      return asComplex() == other.asComplex();
    }
    if (isDouble() || other.isDouble()) {
      return asDouble() == other.asDouble();
    }
    return asInt() == other.asInt();
  }
  bool operator!=(const ScalarValue& other) const {
    return !(*this == other);
  }

  friend std::ostream& operator<<(std::ostream& os, const ScalarValue& v) {
    if (!v.hasValue()) {
      return os << "<none>";
    }
    if (v.isBool()) {
      return os << (v.asBool() ? "true" : "false");
    }
    if (v.isInt()) {
      return os << v.asInt();
    }
    if (v.isComplex()) {
      return os << "complex(" << v.asComplex().real() << ", "
                << v.asComplex().imag() << ")";
    }
    return os << v.asDouble();
  }

 private:
  std::variant<std::monostate, bool, int64_t, double, std::complex<double>>
      value_;
};

template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
bool operator==(const ScalarValue& a, T b) {
  return a == ScalarValue(b);
}
template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
bool operator==(T a, const ScalarValue& b) {
  return ScalarValue(a) == b;
}
template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
bool operator!=(const ScalarValue& a, T b) {
  return !(a == b);
}
template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
bool operator!=(T a, const ScalarValue& b) {
  return !(a == b);
}

// nvFuser-style name for the same thing.
using PolymorphicValue = ScalarValue;

} // namespace fuser
