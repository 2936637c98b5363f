// The value of a constant scalar: nothing, a bool, an integer or a double.
// Comparable with plain C++ numbers so tests can write
// `EXPECT_EQ(split->factor()->value(), 2)`.
#pragma once

#include <base/exceptions.h>

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

  // Numeric views; a bool reads as 0/1.
  int64_t asInt() const {
    FUSER_INTERNAL_ASSERT(hasValue(), "reading an empty ScalarValue");
    if (isInt()) {
      return std::get<int64_t>(value_);
    }
    if (isBool()) {
      return std::get<bool>(value_) ? 1 : 0;
    }
    return static_cast<int64_t>(std::get<double>(value_));
  }
  double asDouble() const {
    FUSER_INTERNAL_ASSERT(hasValue(), "reading an empty ScalarValue");
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
    return os << v.asDouble();
  }

 private:
  std::variant<std::monostate, bool, int64_t, double> value_;
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
