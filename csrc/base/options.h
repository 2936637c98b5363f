// Debug dumps, all through one option enum read from the environment
// variable FUSER_DUMP (comma-separated names, e.g.
// FUSER_DUMP=fusion_ir,cuda_kernel). Never read other variables ad hoc.
//
//   fusion_ir        the fusion as given, before scheduling
//   scheduled_ir     the fusion after scheduling
//   scheduler_params the heuristic parameters a scheduler chose
//   lower_passes     each lowering pass's name and time
//   kernel_ir        the kernel IR after lowering
//   cuda_kernel      the generated CUDA C++
//   launch_params    grid/block sizes of every launch
//   nvrtc            NVRTC options and log
//   kernel_cache     compile-cache hits and misses
//
// Other environment variables fuser reads (not dump options):
//   FUSER_KERNEL_CACHE_DIR  a directory for compiled kernels (cubins) that
//                           outlives the process; unset: memory cache only
//                           (csrc/runtime/nvrtc_compile.h)
//   CUDA_HOME               where to find cuda_fp16.h / cuda_bf16.h for NVRTC
//                           ($CUDA_HOME/include) before the default places
#pragma once

#include <string>
#include <vector>

namespace fuser {

enum class DebugDumpOption {
  FusionIr,
  ScheduledIr,
  SchedulerParams,
  LowerPasses,
  KernelIr,
  CudaKernel,
  LaunchParams,
  Nvrtc,
  KernelCache,
};

// Whether FUSER_DUMP names `option` (read once, at first use).
bool isDebugDumpEnabled(DebugDumpOption option);

// The option names, in enum order (for help messages and tests).
const std::vector<std::string>& debugDumpOptionNames();

} // namespace fuser
