// The arithmetic of an SM's register file that a kernel's
// __launch_bounds__(threads, blocks) implies (sm_80, sm_90): a cap of
// registers per thread allows the whole blocks that fit the file, and
// those blocks leave each thread a count in the allocation granule of 8,
// at most 255. The code generator writes the bounds from the cap
// (codegen/kernel_printer.cpp); the heuristics read the same arithmetic
// (doc/normalization.md §4).
#pragma once

#include <algorithm>
#include <cstdint>

namespace fuser {

// The register file of an SM on sm_80 and sm_90 (RuntimeInfo::Device
// reads the device's own).
constexpr int64_t kRegistersPerSm = 65536;

// The blocks of `threads` that fit an SM's `registers_per_sm` at
// `registers` per thread (0 when not even one does).
inline int64_t blocksWithinRegisters(
    int64_t registers_per_sm, int64_t threads, int64_t registers) {
  return registers_per_sm / (threads * registers);
}

// The registers a thread may take when `blocks` blocks of `threads` share
// an SM's `registers_per_sm`.
inline int64_t registersPerThreadAt(
    int64_t registers_per_sm, int64_t threads, int64_t blocks) {
  return std::min<int64_t>(255, registers_per_sm / (threads * blocks) / 8 * 8);
}

// The macro that names the blocks per SM of a kernel's launch bounds where
// the compile may lower them: a kernel whose register cap makes ptxas
// spill is compiled again with fewer blocks, i.e. more registers per
// thread (codegen/kernel_printer.cpp defines it, runtime/nvrtc_compile.cpp
// lowers it; doc/normalization.md §4).
constexpr const char* kMinBlocksPerSmMacro = "FUSER_MIN_BLOCKS_PER_SM";

} // namespace fuser
