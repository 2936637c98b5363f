// Compiling generated CUDA C++ to a cubin with NVRTC, with an in-memory
// cache and an optional on-disk cache. doc/design.md §6 "Compile". NVRTC needs
// no GPU, so everything here works on a CPU-only machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fuser {

struct CompiledModule {
  // The device code, for cuModuleLoadData.
  std::vector<char> cubin;
  // NVRTC's log (warnings; empty when there were none).
  std::string log;
  // The architecture compiled for, e.g. "sm_90a".
  std::string arch;
  // The symbol of `kernel_name` in the cubin, for cuModuleGetFunction (the
  // name itself for extern "C" kernels, the mangled name otherwise).
  std::string lowered_name;
  // The blocks per SM of the launch bounds where the compile lowered them
  // (0 where it did not): the kernel spilled at its register cap
  // (compileToCubin).
  // Not kept by the disk cache, which keeps the cubin compiled so.
  int64_t relaxed_blocks_per_sm = 0;
};

// Compiles `source` for compute capability `compute_capability` (e.g. 90)
// with `--std=c++17`, the CUDA toolkit headers on the include path, and
// `extra_options`. With `use_arch_specific` the target is the
// architecture-specific variant (sm_90a), which Hopper-only instructions
// (wgmma, TMA) need.
//
// Results are cached by source, architecture, options and NVRTC version: in
// memory for the process (thread-safe), and on disk in
// kernelDiskCacheDir() (entries are written to a temporary file and renamed,
// and carry their full key and a checksum of their cubin: a damaged entry
// is compiled again and rewritten; a directory that cannot be written warns
// once and leaves the memory cache). A compile error is an
// InternalError (generated code that does not compile is a fuser bug) whose
// message holds the NVRTC log and the numbered source.
//
// A kernel whose launch bounds name their blocks per SM through
// kMinBlocksPerSmMacro (base/register_file.h; the code generator does so
// for a register cap a scheduler asked for, cooperative grids aside) and
// that has a stack frame at that cap (spills, read from the cubin:
// runtime/cubin_info.h) is compiled again with the most blocks per SM that
// leave it none, if one block does. The cache keeps that module.
//
// FUSER_DUMP=nvrtc prints the options and log of each compilation;
// FUSER_DUMP=kernel_cache prints cache hits and misses.
CompiledModule compileToCubin(
    const std::string& source, const std::string& kernel_name,
    int compute_capability, bool use_arch_specific,
    const std::vector<std::string>& extra_options = {});

// What NVRTC made of a kernel, for checks of the generated code: its PTX,
// and ptxas's report (registers, stack frame, spill stores and loads).
// Compiled afresh on every call, never cached.
struct KernelInspection {
  std::string ptx;
  std::string ptxas_log;
};
KernelInspection inspectKernel(
    const std::string& source, const std::string& kernel_name,
    int compute_capability, bool use_arch_specific);

// "sm_90a" for (90, true), "sm_86" for (86, false).
std::string nvrtcArchName(int compute_capability, bool use_arch_specific);

// `source` with a right-aligned line number before each line
// ("   12 | code"), for error messages.
std::string numberedSource(const std::string& source);

// The directory passed to NVRTC with -I for cuda_fp16.h / cuda_bf16.h (NVRTC
// has no built-in copy), or "" when none is found. Looked up once, in order:
// $CUDA_HOME/include, the include/ folder beside the loaded libnvrtc,
// /usr/local/cuda/include, and the toolkit fuser was built with.
const std::string& cudaToolkitIncludeDir();

// Where compiled kernels are kept between processes, read from the
// environment on every call: FUSER_KERNEL_CACHE_DIR when set ("" or "off"
// turns the disk cache off), else $XDG_CACHE_HOME/fuser/kernels, else
// $HOME/.cache/fuser/kernels; "" (no disk cache) when none is known.
std::string kernelDiskCacheDir();

// Counters of the compile cache since the last clearKernelCache().
struct KernelCacheStats {
  int64_t memory_hits = 0;
  int64_t disk_hits = 0;
  int64_t misses = 0; // actual NVRTC compilations
};
KernelCacheStats kernelCacheStats();

// Empties the in-memory cache and resets the counters (the disk cache is
// left alone). For tests.
void clearKernelCache();

} // namespace fuser
