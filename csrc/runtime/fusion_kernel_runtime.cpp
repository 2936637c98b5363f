#include <runtime/fusion_kernel_runtime.h>

#include <base/compile_timer.h>
#include <base/options.h>
#include <ir/all_nodes.h>
#include <runtime/aten_types.h>
#include <runtime/expr_eval_executor.h>
#include <runtime/handed_views.h>
#include <runtime/input_binding.h>
#include <runtime/run_validation.h>
#include <runtime/segment_scheduling.h>
#include <runtime/tensor_layout.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <unordered_map>

namespace fuser {

namespace {

std::atomic<int64_t> kernel_fallbacks{0};

} // namespace

std::string kernelNameFor(SchedulerType type) {
  std::string name = "fuser_" + toString(type);
  std::transform(name.begin(), name.end(), name.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  return name;
}

int64_t kernelFallbackCount() {
  return kernel_fallbacks.load();
}

void FusionKernelRuntime::scheduleAndCompile(
    FusionSegment& segment, const SegmentInputs& inputs, CompileTimer& timer,
    bool allow_kernels) {
  Fusion* scheduled = segment.scheduled_fusion.get();
  RuntimeInfo runtime_info = makeRuntimeInfo(
      scheduled, inputs.values, /*require_cuda=*/true, inputs.layouts);
  Scheduler& scheduler =
      segmentScheduler(scheduled, runtime_info, inputs.chosen, allow_kernels);
  segment.scheduler_type = scheduler.type();
  segment.group->setSchedulerType(segment.scheduler_type);
  segment.params = scheduleSegment(scheduler, scheduled, runtime_info);
  timer.stage("schedule");
  segment.executor = makeExecutor(segment.scheduler_type);
  if (auto* kernel = dynamic_cast<KernelExecutor*>(segment.executor.get())) {
    kernel->setKernelName(kernelNameFor(segment.scheduler_type));
    kernel->setKernelFlags(segment.params->kernelFlags());
  }
  segment.executor->compile(scheduled, inputs.values, inputs.layouts);
  timer.stage("compile");
}

void FusionKernelRuntime::prepareSegment(
    FusionSegment& segment, const SegmentInputs& inputs, CompileTimer& timer) {
  try {
    scheduleAndCompile(segment, inputs, timer, true);
    return;
  } catch (const std::exception& e) {
    // A kernel fuser fails to schedule, lower or compile (its bug, never
    // the user's: the inputs are validated) runs with ATen instead, op by
    // op (doc/design.md §6), unless FUSER_DISABLE=kernel_fallback asks for
    // the error; an ExprEval segment that fails has nothing to fall to.
    if (segment.scheduler_type == SchedulerType::ExprEval ||
        isDisabled(DisableOption::KernelFallback)) {
      throw;
    }
    segment.fallback_reason =
        toString(segment.scheduler_type) + " kernel failed (" + e.what() + ")";
  }
  ++kernel_fallbacks;
  std::cerr << "fuser: warning: segment " << segments_.size() << " runs with "
            << "ATen instead of a generated kernel: "
            << segment.fallback_reason.substr(0, 2000)
            << "\n  (FUSER_DISABLE=kernel_fallback makes this an error.)\n";
  segment.scheduled_fusion = segment.group->makeFusion();
  scheduleAndCompile(segment, inputs, timer, false);
}

FusionKernelRuntime::FusionKernelRuntime(
    const Fusion* fusion, const std::vector<c10::IValue>& inputs) {
  segmented_ = std::make_unique<SegmentedFusion>(fusion);
  Fusion* complete = segmented_->completeFusion();
  // Validates the inputs before anything is scheduled or compiled, and
  // gives the extents of the intermediates.
  RuntimeInfo info = makeRuntimeInfo(complete, inputs, /*require_cuda=*/true);
  ExpressionEvaluator& ee = info.expressionEvaluator();
  checkJoinedInputExtents(complete, ee);
  // Each input's layout is made once per cache miss: here.
  const KnownLayouts input_layouts = layoutsOf(complete, info);
  std::unique_ptr<InputSegmentScheduling> scheduling;
  {
    CompileTimer timer("segmentation");
    scheduling = segmentForInputs(*segmented_, inputs, info);
    timer.stage("segment");
  }

  // Slots: the fusion inputs, then every value a segment writes.
  std::unordered_map<const Val*, size_t> slot;
  // The layouts of the intermediates, which are allocated dense.
  std::unordered_map<size_t, TensorLayout> intermediate_layouts;
  std::vector<c10::IValue> values(inputs.begin(), inputs.end());
  for (size_t i = 0; i < complete->inputs().size(); ++i) {
    slot.emplace(complete->inputs()[i], i);
  }
  at::Device device(at::kCUDA);
  for (const auto& input : inputs) {
    if (input.isTensor()) {
      device = input.toTensor().device();
      break;
    }
  }

  for (SegmentedGroup* group : segmented_->groups()) {
    CompileTimer timer("segment " + std::to_string(segments_.size()));
    FusionSegment segment;
    segment.group = group;
    segment.scheduled_fusion = group->makeFusion();
    SegmentInputs segment_inputs;
    for (Val* in : group->inputs()) {
      if (!slot.count(in)) {
        // A size the signature fixes: the same in every run.
        auto value = groupInputValue(complete, inputs, in, ee);
        FUSER_INTERNAL_ASSERT(
            value.has_value(), "segment input ", in->toString(),
            " is computed by no earlier segment");
        slot.emplace(in, values.size());
        constants_.emplace_back(values.size(), *value);
        values.push_back(*value);
      }
      segment.input_slots.push_back(slot.at(in));
      segment_inputs.values.push_back(values.at(slot.at(in)));
      const size_t in_slot = slot.at(in);
      auto intermediate = intermediate_layouts.find(in_slot);
      segment_inputs.layouts.push_back(
          in_slot < input_layouts.size()               ? input_layouts[in_slot]
          : intermediate != intermediate_layouts.end() ? &intermediate->second
                                                       : nullptr);
    }
    // The scheduler segmentation found for the group, not asked again.
    segment_inputs.chosen = scheduling->chosenFor(*group);
    prepareSegment(segment, segment_inputs, timer);
    // What later segments read of this one's outputs stands in for them
    // while those are compiled: a tensor of the same layout and
    // alignment class (a fresh allocation, as at run time).
    for (Val* out : group->outputs()) {
      if (slot.count(out)) {
        segment.output_slots.push_back(slot.at(out));
        continue;
      }
      slot.emplace(out, values.size());
      segment.output_slots.push_back(values.size());
      auto* tv = out->as<TensorView>();
      const auto options =
          at::TensorOptions().device(device).dtype(toAtenType(tv->dtype()));
      // A view an ATen segment hands on (runtime/handed_views.h), where the
      // segment did end up with ATen.
      auto* aten = dynamic_cast<ExprEvalExecutor*>(segment.executor.get());
      const HandedView* view = scheduling->handedView(out);
      if (aten != nullptr && view != nullptr) {
        aten->handOn(segment.output_slots.size() - 1, *view);
        intermediate_layouts.emplace(values.size(), view->layout);
        values.emplace_back(allocateHandedView(*view, options));
        continue;
      }
      const TensorLayout& layout =
          intermediate_layouts.emplace(values.size(), denseLayout(tv, ee))
              .first->second;
      values.emplace_back(allocateTensor(layout, options));
    }
    segments_.push_back(std::move(segment));
  }
  num_slots_ = values.size();
  for (Val* out : complete->outputs()) {
    output_slots_.push_back(slot.at(out));
  }
  // Free each intermediate after its last reader (fusion outputs stay).
  std::unordered_map<size_t, size_t> last_reader;
  for (size_t s = 0; s < segments_.size(); ++s) {
    for (size_t in : segments_[s].input_slots) {
      last_reader[in] = s;
    }
  }
  for (const auto& [value_slot, reader] : last_reader) {
    const bool kept =
        value_slot < complete->inputs().size() ||
        std::find(output_slots_.begin(), output_slots_.end(), value_slot) !=
            output_slots_.end();
    if (!kept) {
      segments_[reader].last_reads.push_back(value_slot);
    }
  }
  const FusionSegment& first = segments_.front();
  single_segment_ = segments_.size() == 1 &&
                    first.group->inputs() == complete->inputs() &&
                    first.group->outputs() == complete->outputs();
  if (isDebugDumpEnabled(DebugDumpOption::SegmentedFusion)) {
    std::cout << "[segmented_fusion]\n"
              << segmented_->toString()
              << handedViewsToString(scheduling->handedViews()) << std::flush;
  }
}

std::vector<at::Tensor> FusionKernelRuntime::run(
    const std::vector<c10::IValue>& inputs) {
  ++run_count_;
  if (single_segment_) {
    return segments_.front().executor->runWithSignature(inputs);
  }
  std::vector<c10::IValue> values(num_slots_);
  std::copy(inputs.begin(), inputs.end(), values.begin());
  for (const auto& [constant_slot, value] : constants_) {
    values[constant_slot] = value;
  }
  std::vector<c10::IValue> segment_inputs;
  const bool validate = isEnabled(EnableOption::ValidateRuns);
  for (FusionSegment& segment : segments_) {
    segment_inputs.clear();
    for (size_t in : segment.input_slots) {
      segment_inputs.push_back(values[in]);
    }
    std::vector<at::Tensor> outputs =
        segment.executor->runWithSignature(segment_inputs);
    if (validate && segment.scheduler_type != SchedulerType::ExprEval) {
      validateSegment(segment, segment_inputs, outputs);
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      values[segment.output_slots[o]] = std::move(outputs[o]);
    }
    for (size_t done : segment.last_reads) {
      values[done] = c10::IValue();
    }
  }
  std::vector<at::Tensor> outputs;
  outputs.reserve(output_slots_.size());
  for (size_t out : output_slots_) {
    outputs.push_back(values[out].toTensor());
  }
  return outputs;
}

void FusionKernelRuntime::validateSegment(
    const FusionSegment& segment, const std::vector<c10::IValue>& inputs,
    const std::vector<at::Tensor>& outputs) const {
  const size_t index = static_cast<size_t>(&segment - segments_.data());
  std::unique_ptr<Fusion> unscheduled = segment.group->makeFusion();
  validateSegmentWithATen(
      unscheduled.get(), inputs, outputs,
      "segment " + std::to_string(index) + " of " +
          std::to_string(segments_.size()) + " (" +
          toString(segment.scheduler_type) + ")");
}

std::vector<Executor*> FusionKernelRuntime::executors() const {
  std::vector<Executor*> result;
  for (const FusionSegment& segment : segments_) {
    result.push_back(segment.executor.get());
  }
  return result;
}

LaunchParams FusionKernelRuntime::lastLaunchParams(size_t i) const {
  auto* kernel = dynamic_cast<KernelExecutor*>(segments_.at(i).executor.get());
  return kernel ? kernel->lastLaunchParams() : LaunchParams();
}

} // namespace fuser
