#include <runtime/fusion_executor_cache.h>

#include <ir/all_nodes.h>
#include <options.h>
#include <runtime/allocation_inference.h>
#include <scheduler/default_schedule.h>

#include <iostream>

namespace fuser {

FusionKernelRuntime::FusionKernelRuntime(
    const Fusion* fusion,
    const std::vector<c10::IValue>& inputs) {
  FusionSegment segment;
  segment.scheduled_fusion = std::make_unique<Fusion>(*fusion);
  const bool parallel = scheduleDefault(segment.scheduled_fusion.get());
  segment.scheduler = parallel ? "pointwise (default)" : "serial (default)";
  if (isDebugDumpEnabled(DebugDumpOption::ScheduledIr)) {
    std::cout << "[scheduled_ir]\n";
    segment.scheduled_fusion->print();
  }
  segment.executor = std::make_unique<KernelExecutor>();
  segment.executor->compile(segment.scheduled_fusion.get(), inputs);
  segments_.push_back(std::move(segment));
}

std::vector<at::Tensor> FusionKernelRuntime::run(
    const std::vector<c10::IValue>& inputs) {
  ++run_count_;
  return segments_.front().executor->run(inputs);
}

const std::string& FusionKernelRuntime::kernelCode(size_t i) const {
  return segments_.at(i).executor->kernelCode();
}

const LaunchParams& FusionKernelRuntime::lastLaunchParams(size_t i) const {
  return segments_.at(i).executor->lastLaunchParams();
}

FusionExecutorCache::FusionExecutorCache(std::unique_ptr<Fusion> fusion)
    : fusion_(std::move(fusion)) {
  FUSER_CHECK(fusion_ != nullptr, "FusionExecutorCache needs a fusion.");
  if (isDebugDumpEnabled(DebugDumpOption::FusionIr)) {
    std::cout << "[fusion_ir]\n";
    fusion_->print();
  }
}

std::vector<int64_t> FusionExecutorCache::signatureOf(
    const std::vector<c10::IValue>& inputs) const {
  std::vector<int64_t> key;
  key.reserve(inputs.size() * 8);
  for (const auto& input : inputs) {
    if (input.isTensor()) {
      const at::Tensor& t = input.toTensor();
      key.push_back(static_cast<int64_t>(t.scalar_type()));
      key.push_back(t.is_cuda() ? t.get_device() : -1);
      key.push_back(t.dim());
      for (int64_t d = 0; d < t.dim(); ++d) {
        key.push_back(t.size(d));
        key.push_back(t.stride(d));
      }
      // Alignment class: the largest power of two up to 16 dividing the
      // address, which decides whether vectorized accesses are legal.
      auto address = reinterpret_cast<uintptr_t>(t.data_ptr());
      int64_t alignment = 16;
      while (alignment > 1 && address % alignment != 0) {
        alignment /= 2;
      }
      key.push_back(alignment);
    } else {
      key.push_back(-1); // a scalar, then its kind
      key.push_back(input.isDouble() ? 1 : input.isInt() ? 2 : 3);
    }
  }
  return key;
}

std::vector<at::Tensor> FusionExecutorCache::runFusionWithInputs(
    const std::vector<c10::IValue>& inputs) {
  FUSER_CHECK(
      inputs.size() == fusion_->inputs().size(), "The fusion takes ",
      fusion_->inputs().size(), " inputs, got ", inputs.size(), ".");
  std::vector<int64_t> key = signatureOf(inputs);
  auto it = runtimes_.find(key);
  if (it == runtimes_.end()) {
    // Validate before compiling so a bad input is reported as such and
    // leaves no half-built runtime behind.
    ExpressionEvaluator ee;
    bindFusionInputs(fusion_.get(), inputs, ee, /*require_cuda=*/true);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (auto* tv = dynamic_cast<TensorView*>(fusion_->inputs()[i])) {
        inferAllocationSizesAndStrides(
            tv, inputs[i].toTensor(), ee, static_cast<int64_t>(i));
      }
    }
    auto runtime = std::make_unique<FusionKernelRuntime>(fusion_.get(), inputs);
    it = runtimes_.emplace(std::move(key), std::move(runtime)).first;
  }
  most_recent_ = it->second.get();
  return most_recent_->run(inputs);
}

} // namespace fuser
