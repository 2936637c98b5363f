// FusionKernelRuntime: the compiled form of a fusion for one input
// signature (doc/design.md §6): an ordered list of segments, each with its
// scheduler, its scheduled fusion, its executor and the values it reads and
// writes. run() runs them in order on the current stream, keeping each
// intermediate until its last reader has run.
#pragma once

#include <base/compile_timer.h>
#include <fusion.h>
#include <runtime/executor.h>
#include <runtime/kernel_executor.h>
#include <scheduler/registry.h>
#include <segmentation/segmented_fusion.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fuser {

// One segment, scheduled by one scheduler and run by one executor.
struct FusionSegment {
  SegmentedGroup* group = nullptr;
  SchedulerType scheduler_type = SchedulerType::ExprEval;
  // The parameters the scheduler chose (printable).
  std::unique_ptr<HeuristicParams> params;
  std::unique_ptr<Fusion> scheduled_fusion;
  std::unique_ptr<Executor> executor;
  // Where the runtime keeps the values it reads and writes (slots of
  // FusionKernelRuntime::run).
  std::vector<size_t> input_slots;
  std::vector<size_t> output_slots;
  // Slots whose last reader is this segment (freed after it runs).
  std::vector<size_t> last_reads;
  // Why the segment runs with ATen (ExprEval) although a kernel scheduler
  // took it: its kernel failed to schedule, lower or compile. Empty when
  // it runs as chosen.
  std::string fallback_reason;
};

// The name of the kernel of a segment that `type` scheduled:
// "fuser_pointwise", "fuser_innerpersistent", ... (profiles list kernels
// by name; KernelExecutor appends a digest of the code).
std::string kernelNameFor(SchedulerType type);

// How many segments, in this process, ran with ATen because their kernel
// failed (FusionSegment::fallback_reason): the test suites check it stays
// put, so that a failure is never hidden by the fallback.
int64_t kernelFallbackCount();

class FusionKernelRuntime {
 public:
  // Segments `fusion`, schedules each segment for the signature of
  // `inputs` (validated first: a bad input throws before anything is
  // compiled) and compiles its executor.
  FusionKernelRuntime(
      const Fusion* fusion, const std::vector<c10::IValue>& inputs);

  // Runs on inputs of the signature this runtime was made for.
  std::vector<at::Tensor> run(const std::vector<c10::IValue>& inputs);

  bool isSegmented() const {
    return segmented_->isSegmented();
  }
  SegmentedFusion* fusionSegments() const {
    return segmented_.get();
  }
  const std::vector<FusionSegment>& segments() const {
    return segments_;
  }
  std::vector<Executor*> executors() const;
  // The scheduled fusion of segment `i`.
  Fusion* scheduledFusion(size_t i) const {
    return segments_.at(i).scheduled_fusion.get();
  }
  SchedulerType schedulerType(size_t i = 0) const {
    return segments_.at(i).scheduler_type;
  }
  // The CUDA source of segment `i` (empty when it runs no kernel).
  const std::string& kernelCode(size_t i = 0) const {
    return segments_.at(i).executor->kernelCode();
  }
  // The last launch of segment `i` (a default for segments without a
  // kernel).
  LaunchParams lastLaunchParams(size_t i = 0) const;
  // How many times run() was called.
  int64_t runCount() const {
    return run_count_.load();
  }

 private:
  // What a segment is compiled for: its input values (fusion inputs, sizes
  // the signature fixes, stand-ins for intermediates) and, for those that
  // are fusion inputs, the layouts made once on this cache miss.
  struct SegmentInputs {
    std::vector<c10::IValue> values;
    KnownLayouts layouts;
    // The scheduler segmentation found for the segment's group (nullopt:
    // ask them all).
    std::optional<SchedulerType> chosen;
  };
  // Schedules segment.scheduled_fusion (by the scheduler chosen for it, or
  // ExprEval unless `allow_kernels`) and compiles its executor.
  void scheduleAndCompile(
      FusionSegment& segment, const SegmentInputs& inputs, CompileTimer& timer,
      bool allow_kernels);
  // scheduleAndCompile, falling back to ExprEval when the kernel fails.
  void prepareSegment(
      FusionSegment& segment, const SegmentInputs& inputs, CompileTimer& timer);
  // FUSER_ENABLE=validate_runs: the segment's outputs against an ATen
  // evaluation of its unscheduled fusion on the same inputs.
  void validateSegment(
      const FusionSegment& segment, const std::vector<c10::IValue>& inputs,
      const std::vector<at::Tensor>& outputs) const;

  std::unique_ptr<SegmentedFusion> segmented_;
  std::vector<FusionSegment> segments_;
  size_t num_slots_ = 0;
  // Slots of the sizes segments take as scalars, with their values.
  std::vector<std::pair<size_t, c10::IValue>> constants_;
  std::vector<size_t> output_slots_;
  // The single segment reads the fusion's inputs and writes its outputs,
  // in order: run() hands them through.
  bool single_segment_ = false;
  std::atomic<int64_t> run_count_{0};
};

} // namespace fuser
