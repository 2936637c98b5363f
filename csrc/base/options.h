// Debug dumps, all through one option enum read from the environment
// variable FUSER_DUMP (comma-separated names, e.g.
// FUSER_DUMP=fusion_ir,cuda_kernel). Never read other variables ad hoc.
//
//   fusion_ir        the fusion as given, before scheduling
//   segmented_fusion the segments of a fusion, their schedulers and edges
//   scheduled_ir     the fusion after scheduling
//   scheduler_params the heuristic parameters a scheduler chose
//   scheduler_reject why each scheduler tried before it declined
//   preseg_ir        the fusion after every rewrite before segmentation;
//                    preseg_ir:<pass> after that pass only (names in
//                    csrc/segmentation/preseg_passes.cpp)
//   lower_passes     each lowering pass's name and time
//   lower_ir         the kernel IR after every lowering pass;
//                    lower_ir:<pass> after that pass only (e.g.
//                    lower_ir:insertAllocations; names in
//                    csrc/device_lower/lower.cpp)
//   kernel_ir        the kernel IR after lowering
//   cuda_kernel      the generated CUDA C++
//   launch_params    grid/block sizes of every launch
//   nvrtc            NVRTC options and log
//   kernel_cache     compile-cache hits and misses
//   compile_time     the time of each stage of a cache miss (schedule,
//                    lower, codegen, NVRTC, load, plan)
//   failure_repro    (Python frontend) the repro script, with inputs like
//                    the run's, of a definition whose run failed with an
//                    internal error (a validate_runs mismatch included) or
//                    had a segment run with ATen because its kernel failed
//
// Other environment variables fuser reads (not dump options):
//   FUSER_KERNEL_CACHE_DIR  the directory for compiled kernels (cubins) that
//                           outlives the process; unset: the per-user cache
//                           folder; "off": memory cache only
//                           (kernelDiskCacheDir, runtime/nvrtc_compile.h)
//   FUSER_ENABLE            schedules that are off by default
//                           (comma-separated, isEnabled below):
//                           outer_persistent, matmul_cluster,
//                           shared_buffers, warp_per_row,
//                           tight_register_caps, narrow_load_unroll,
//                           validate_runs
//   FUSER_DISABLE           schedulers that are on by default
//                           (comma-separated, isDisabled below):
//                           inner_outer_persistent, fewer_rows_per_block,
//                           matmul_expr_eval, kernel_fallback
//   FUSER_COMM_TIMEOUT_S    how long a collective of a multi-device fusion
//                           waits for the other ranks (default 300;
//                           runtime/communicator.h)
//   LOCAL_RANK              torchrun's rank within the host: the GPU of a
//                           multi-device rank (runtime/communicator.h)
//   XDG_CACHE_HOME, HOME    where the per-user cache folder is
//   CUDA_HOME               where to find cuda_fp16.h / cuda_bf16.h for NVRTC
//                           ($CUDA_HOME/include) before the default places
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fuser {

enum class DebugDumpOption {
  FusionIr,
  SegmentedFusion,
  ScheduledIr,
  SchedulerParams,
  SchedulerReject,
  PreSegIr,
  LowerPasses,
  LowerIr,
  KernelIr,
  CudaKernel,
  LaunchParams,
  Nvrtc,
  KernelCache,
  CompileTime,
  FailureRepro,
};

// Whether FUSER_DUMP names `option` (read once, at first use).
bool isDebugDumpEnabled(DebugDumpOption option);

// The arguments given to `option` (FUSER_DUMP=lower_ir:a:b gives {a, b});
// empty when it has none.
const std::vector<std::string>& debugDumpArguments(DebugDumpOption option);

// Whether `option` is enabled for `name`: given with no arguments (all),
// or with `name` among them (FUSER_DUMP=lower_ir:insertAllocations).
bool isDebugDumpEnabledFor(DebugDumpOption option, const std::string& name);

// The option names, in enum order (for help messages and tests).
const std::vector<std::string>& debugDumpOptionNames();

// Schedules built and tested but measured slower than what runs without
// them (doc/normalization.md §10, doc/matmul.md §3, doc/pointwise.md §4),
// or not yet run on a GPU (§11), off unless FUSER_ENABLE names them. Read at
// each use, so that a test can turn one on for its scope (ScopedEnv). (A new
// option is added last here and to kEnableNames in options.cpp.)
enum class EnableOption {
  OuterPersistent,   // outer_persistent
  MatmulCluster,     // matmul_cluster
  SharedBuffers,     // shared_buffers
  WarpPerRow,        // warp_per_row
  TightRegisterCaps, // tight_register_caps
  NarrowLoadUnroll,  // narrow_load_unroll (doc/pointwise.md §4)
  // validate_runs: every run, and every kernel segment of a run, is
  // checked against an ATen evaluation (runtime/run_validation.h); a
  // debugging aid, slow.
  ValidateRuns,
};
bool isEnabled(EnableOption option);

// Schedulers and heuristics on by default that FUSER_DISABLE turns off (to
// measure what runs without them: doc/normalization.md §4 and §9). Read at
// each use.
// (A new option is added last here and to kDisableNames in options.cpp.)
enum class DisableOption {
  InnerOuterPersistent, // inner_outer_persistent
  FewerRowsPerBlock,    // fewer_rows_per_block (doc/normalization.md §4)
  // matmul_expr_eval: no ATen fallback for matrix products (a product the
  // Matmul scheduler declines is then an error, as nvFuser's option).
  MatmulExprEval,
  // kernel_fallback: a kernel that fails to schedule, lower or compile is
  // an error instead of a segment run with ATen (runtime/
  // fusion_kernel_runtime.h).
  KernelFallback,
};
bool isDisabled(DisableOption option);

// The names FUSER_ENABLE and FUSER_DISABLE take, in enum order.
const std::vector<std::string>& enableOptionNames();
const std::vector<std::string>& disableOptionNames();

// Options for the calls of this thread while it lives, on top of
// FUSER_ENABLE and FUSER_DISABLE (what a FusionDefinition's
// execute(_enable_options=..., _disable_options=...) asks for). Names as
// those variables take them; an unknown name is a user error that lists
// the known ones. Scopes nest.
class ScopedOptions {
 public:
  ScopedOptions(
      const std::vector<std::string>& enable,
      const std::vector<std::string>& disable);
  ~ScopedOptions();
  ScopedOptions(const ScopedOptions&) = delete;
  ScopedOptions& operator=(const ScopedOptions&) = delete;

 private:
  uint64_t previous_;
};

// The options the ScopedOptions of this thread turn on, as bits (enable
// options from bit 0, disable options from bit 32): compiled code depends
// on them, so FusionExecutorCache keys its runtimes on them too.
uint64_t scopedOptionBits();

} // namespace fuser
