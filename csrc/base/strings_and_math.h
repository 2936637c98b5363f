// Small helpers every layer shares: integer ceiling division and joining
// numbers for messages and printed parameters.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace fuser {

inline int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
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
