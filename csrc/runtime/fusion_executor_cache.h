// FusionExecutorCache: runs a fusion on at::Tensors, compiling on the first
// call for each input signature and reusing the compiled runtime afterwards
// (DESIGN §6). The key is the device plus each input's dtype, sizes,
// strides and pointer-alignment class, and each scalar's type.
#pragma once

#include <fusion.h>
#include <runtime/kernel_executor.h>
#include <scheduler/registry.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fuser {

// One piece of a fusion, scheduled by one scheduler.
struct FusionSegment {
  SchedulerType scheduler_type = SchedulerType::ExprEval;
  // The parameters the scheduler chose (printable).
  std::unique_ptr<HeuristicParams> params;
  // Why the schedulers tried before it declined.
  std::vector<std::string> rejections;
  std::unique_ptr<Fusion> scheduled_fusion;
  // Null for NoOp and ExprEval, which launch no generated kernel.
  std::unique_ptr<KernelExecutor> executor;
};

// The compiled form of a fusion for one input signature.
class FusionKernelRuntime {
 public:
  FusionKernelRuntime(
      const Fusion* fusion, const std::vector<c10::IValue>& inputs);

  std::vector<at::Tensor> run(const std::vector<c10::IValue>& inputs);

  const std::vector<FusionSegment>& segments() const {
    return segments_;
  }
  // The scheduler of segment `i`.
  SchedulerType schedulerType(size_t i = 0) const {
    return segments_.at(i).scheduler_type;
  }
  // The CUDA source of segment `i` (empty when it runs no kernel).
  const std::string& kernelCode(size_t i = 0) const;
  const LaunchParams& lastLaunchParams(size_t i = 0) const;
  // How many times run() was called.
  int64_t runCount() const {
    return run_count_;
  }

 private:
  std::vector<FusionSegment> segments_;
  int64_t run_count_ = 0;
};

class FusionExecutorCache {
 public:
  explicit FusionExecutorCache(std::unique_ptr<Fusion> fusion);

  // Inputs in fusion->inputs() order: at::Tensor, double, int64_t or bool.
  std::vector<at::Tensor> runFusionWithInputs(
      const std::vector<c10::IValue>& inputs);

  // The fusion as the user defined it (unscheduled).
  Fusion* fusion() const {
    return fusion_.get();
  }
  FusionKernelRuntime* getMostRecentKernelRuntime() const {
    return most_recent_;
  }
  // Number of distinct compiled runtimes.
  size_t numRuntimes() const {
    return runtimes_.size();
  }

 private:
  std::vector<int64_t> signatureOf(
      const std::vector<c10::IValue>& inputs) const;

  std::unique_ptr<Fusion> fusion_;
  std::map<std::vector<int64_t>, std::unique_ptr<FusionKernelRuntime>>
      runtimes_;
  FusionKernelRuntime* most_recent_ = nullptr;
};

} // namespace fuser
