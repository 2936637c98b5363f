// What a scheduler asks of the kernel it scheduled beyond its loops: part
// of its heuristic parameters (HeuristicParams::kernelFlags), handed to
// lowering with the scheduled fusion (GpuLower, runtime/kernel_executor.h).
#pragma once

#include <cstdint>

namespace fuser {

struct KernelFlags {
  // A register budget per thread (0: the compiler's choice): the kernel
  // declares the blocks per SM that fit it (codegen/kernel_printer.cpp), so
  // that the compiler keeps within it.
  int64_t max_registers_per_thread = 0;
  // A promise that all the kernel's blocks fit the device at once (a
  // persistent grid): its grid reductions wait for every block and share
  // the final step out among them (runtime/grid_reduction.h), and the
  // runtime launches it cooperatively, which fails rather than hangs when
  // they would not fit.
  bool cooperative_launch = false;
};

} // namespace fuser
