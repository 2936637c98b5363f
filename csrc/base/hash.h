// Combining hashes of several values into one (the boost recipe's mixing:
// the golden-ratio constant and two shifts).
#pragma once

#include <cstddef>

namespace fuser {

inline void hashCombine(size_t& seed, size_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

} // namespace fuser
