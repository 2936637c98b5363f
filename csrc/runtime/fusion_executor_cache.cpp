#include <runtime/fusion_executor_cache.h>

#include <ir/all_nodes.h>
#include <base/options.h>
#include <runtime/input_binding.h>
#include <runtime/aten_evaluator.h>
#include <runtime/aten_types.h>
#include <runtime/output_allocation.h>

#include <algorithm>

#include <iostream>

namespace fuser {

FusionKernelRuntime::FusionKernelRuntime(
    const Fusion* fusion, const std::vector<c10::IValue>& inputs) {
  // One segment: the whole fusion goes to the first scheduler that takes
  // it (segmentation comes with the reduction schedulers).
  FusionSegment segment;
  segment.scheduled_fusion = std::make_unique<Fusion>(*fusion);
  Fusion* scheduled = segment.scheduled_fusion.get();
  RuntimeInfo runtime_info = makeRuntimeInfo(scheduled, inputs);
  SchedulerChoice choice = chooseScheduler(scheduled, runtime_info);
  segment.scheduler_type = choice.scheduler->type();
  segment.rejections = std::move(choice.rejections);
  segment.params = choice.scheduler->computeHeuristics(scheduled, runtime_info);
  if (isDebugDumpEnabled(DebugDumpOption::SchedulerParams)) {
    std::cout << "[scheduler_params] " << segment.params->toString() << "\n";
    for (const auto& rejection : segment.rejections) {
      std::cout << "[scheduler_params]   declined: " << rejection << "\n";
    }
  }
  choice.scheduler->schedule(scheduled, *segment.params);
  if (isDebugDumpEnabled(DebugDumpOption::ScheduledIr)) {
    std::cout << "[scheduled_ir]\n";
    scheduled->print();
  }
  if (segment.scheduler_type != SchedulerType::NoOp &&
      segment.scheduler_type != SchedulerType::ExprEval) {
    segment.executor = std::make_unique<KernelExecutor>();
    segment.executor->compile(scheduled, inputs);
  }
  segments_.push_back(std::move(segment));
}

std::vector<at::Tensor> FusionKernelRuntime::run(
    const std::vector<c10::IValue>& inputs) {
  ++run_count_;
  FusionSegment& segment = segments_.front();
  Fusion* fusion = segment.scheduled_fusion.get();
  switch (segment.scheduler_type) {
    case SchedulerType::ExprEval: {
      // ATen picks its own strides; outputs come back in their layout.
      ExpressionEvaluator ee;
      std::vector<at::Tensor> outputs =
          evaluateFusionWithATen(fusion, inputs, ee);
      for (size_t i = 0; i < outputs.size(); ++i) {
        auto* tv = dynamic_cast<TensorView*>(fusion->outputs()[i]);
        if (tv == nullptr || tv->isFusionInput()) {
          continue;
        }
        at::Tensor laid_out = allocateOutput(tv, ee, outputs[i].options());
        laid_out.copy_(outputs[i]);
        outputs[i] = laid_out;
      }
      return outputs;
    }
    case SchedulerType::NoOp: {
      // Outputs that are inputs are returned as they are; the others are
      // empty.
      ExpressionEvaluator ee;
      bindFusionInputs(fusion, inputs, ee, /*require_cuda=*/true);
      at::Device device(at::kCUDA);
      for (const auto& input : inputs) {
        if (input.isTensor()) {
          device = input.toTensor().device();
          break;
        }
      }
      std::vector<at::Tensor> outputs;
      for (Val* out : fusion->outputs()) {
        const auto& fusion_inputs = fusion->inputs();
        auto it = std::find(fusion_inputs.begin(), fusion_inputs.end(), out);
        if (it != fusion_inputs.end()) {
          outputs.push_back(
              inputs[static_cast<size_t>(it - fusion_inputs.begin())]
                  .toTensor());
          continue;
        }
        auto* tv = out->as<TensorView>();
        outputs.push_back(allocateOutput(
            tv, ee,
            at::TensorOptions().device(device).dtype(toAtenType(tv->dtype()))));
      }
      return outputs;
    }
    default:
      return segment.executor->run(inputs);
  }
}

const std::string& FusionKernelRuntime::kernelCode(size_t i) const {
  static const std::string no_kernel;
  const FusionSegment& segment = segments_.at(i);
  return segment.executor ? segment.executor->kernelCode() : no_kernel;
}

const LaunchParams& FusionKernelRuntime::lastLaunchParams(size_t i) const {
  static const LaunchParams no_launch;
  const FusionSegment& segment = segments_.at(i);
  return segment.executor ? segment.executor->lastLaunchParams() : no_launch;
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
    // The runtime validates the inputs (makeRuntimeInfo) before it
    // schedules or compiles anything, so a bad input throws before a
    // runtime is cached and the cache stays usable.
    auto runtime = std::make_unique<FusionKernelRuntime>(fusion_.get(), inputs);
    it = runtimes_.emplace(std::move(key), std::move(runtime)).first;
  }
  most_recent_ = it->second.get();
  return most_recent_->run(inputs);
}

} // namespace fuser
