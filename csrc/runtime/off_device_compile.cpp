#include <runtime/off_device_compile.h>

#include <base/options.h>
#include <codegen/codegen.h>
#include <ir/all_nodes.h>
#include <runtime/aten_types.h>
#include <runtime/input_binding.h>
#include <runtime/kernel_executor.h>
#include <runtime/nvrtc_compile.h>
#include <runtime/segment_scheduling.h>
#include <runtime/tensor_layout.h>
#include <scheduler/registry.h>
#include <segmentation/segmented_fusion.h>

#include <ATen/ATen.h>

#include <deque>
#include <iostream>
#include <memory>

namespace fuser {

namespace {

// Schedules `part` as the runtime would for `inputs` and compiles its
// kernel, filling `segment`.
void compileSegment(
    Fusion* part, const std::vector<c10::IValue>& inputs,
    const KnownLayouts& layouts, OffDeviceSegment& segment) {
  RuntimeInfo info =
      makeRuntimeInfo(part, inputs, /*require_cuda=*/false, layouts);
  SchedulerChoice choice = chooseScheduler(part, info);
  segment.scheduler = choice.scheduler->type();
  if (isDebugDumpEnabled(DebugDumpOption::SchedulerReject)) {
    for (const auto& rejection : choice.rejections) {
      std::cout << "[scheduler_reject] " << rejection << "\n";
    }
  }
  if (segment.scheduler == SchedulerType::ExprEval ||
      segment.scheduler == SchedulerType::NoOp) {
    return;
  }
  try {
    auto params = choice.scheduler->computeHeuristics(part, info);
    if (isDebugDumpEnabled(DebugDumpOption::SchedulerParams)) {
      std::cout << "[scheduler_params] " << params->toString() << "\n";
    }
    if (isDebugDumpEnabled(DebugDumpOption::FusionIr)) {
      std::cout << "[fusion_ir] segment\n";
      part->print();
    }
    choice.scheduler->schedule(part, *params);
    if (isDebugDumpEnabled(DebugDumpOption::ScheduledIr)) {
      std::cout << "[scheduled_ir]\n";
      part->print();
    }
    const DataType index_type =
        fitsInt32Indexing(inputs) ? DataType::Int32 : DataType::Int;
    segment.code = generateCudaKernel(part, index_type, params->kernelFlags());
    compileToCubin(segment.code, "fuser_kernel", 90, true);
  } catch (const std::exception& e) {
    segment.code.clear();
    segment.error = e.what();
  }
}

} // namespace

std::vector<OffDeviceSegment> compileOffDevice(
    const Fusion* fusion, const std::vector<c10::IValue>& inputs) {
  SegmentedFusion segmented(fusion);
  Fusion* complete = segmented.completeFusion();
  RuntimeInfo info = makeRuntimeInfo(complete, inputs, /*require_cuda=*/false);
  ExpressionEvaluator& ee = info.expressionEvaluator();
  checkJoinedInputExtents(complete, ee);
  segmented.rewriteBeforeCut();
  InputSegmentScheduling scheduling(complete, inputs, info);
  segmented.segment(scheduling);

  std::vector<OffDeviceSegment> result;
  for (SegmentedGroup* group : segmented.groups()) {
    std::unique_ptr<Fusion> part = group->makeFusion();
    std::vector<c10::IValue> part_inputs;
    std::deque<TensorLayout> dense;
    KnownLayouts layouts;
    for (Val* in : group->inputs()) {
      const TensorRuntimeInfo* input_info =
          in->isA<TensorView>() ? info.tensorInfo(in->as<TensorView>())
                                : nullptr;
      layouts.push_back(input_info ? &input_info->layout : nullptr);
      if (auto value = groupInputValue(complete, inputs, in, ee)) {
        part_inputs.push_back(*value);
        continue;
      }
      // An intermediate, dense, as the runtime allocates it.
      auto* tv = in->as<TensorView>();
      dense.push_back(denseLayout(tv, ee));
      layouts.back() = &dense.back();
      part_inputs.emplace_back(allocateTensor(
          dense.back(), at::TensorOptions().device(at::kMeta).dtype(
                            toAtenType(tv->dtype()))));
    }
    result.emplace_back();
    compileSegment(part.get(), part_inputs, layouts, result.back());
  }
  return result;
}

} // namespace fuser
