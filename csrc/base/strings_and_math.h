// Small helpers every layer shares: integer ceiling division, powers of
// two around a count, and joining numbers for messages and printed
// parameters.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace fuser {

inline int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The smallest power of two >= n, and the largest <= n (1 for n <= 1).
inline int64_t pow2Ceil(int64_t n) {
  int64_t p = 1;
  while (p < n) {
    p *= 2;
  }
  return p;
}
inline int64_t pow2Floor(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n) {
    p *= 2;
  }
  return p;
}

// "[1, 2, 3]": a list of values as messages show it (sizes, strides).
template <typename Sequence>
std::string listToString(const Sequence& values) {
  std::ostringstream os;
  os << "[";
  bool first = true;
  for (const auto& value : values) {
    os << (first ? "" : ", ") << value;
    first = false;
  }
  os << "]";
  return os.str();
}

// "1 2 3" (or with another separator).
inline std::string joinInts(
    const std::vector<int64_t>& values, const char* separator = " ") {
  std::stringstream ss;
  for (size_t i = 0; i < values.size(); ++i) {
    ss << (i ? separator : "") << values[i];
  }
  return ss.str();
}

} // namespace fuser
