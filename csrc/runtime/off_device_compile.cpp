#include <runtime/off_device_compile.h>

#include <base/options.h>
#include <codegen/codegen.h>
#include <ir/all_nodes.h>
#include <runtime/aten_evaluator.h>
#include <runtime/aten_types.h>
#include <runtime/input_binding.h>
#include <runtime/kernel_executor.h>
#include <runtime/nvrtc_compile.h>
#include <runtime/segment_scheduling.h>
#include <runtime/tensor_layout.h>
#include <scheduler/registry.h>
#include <segmentation/segmented_fusion.h>

#include <ATen/ATen.h>

#include <iostream>
#include <memory>
#include <unordered_map>

namespace fuser {

namespace {

// Schedules `part` as the runtime would for `inputs`, by `chosen` (what
// segmentation found for its group), and compiles its kernel, filling
// `segment`.
void compileSegment(
    Fusion* part, const GroupInputs& inputs,
    std::optional<SchedulerType> chosen, OffDeviceSegment& segment) {
  RuntimeInfo info = makeRuntimeInfo(
      part, inputs.values, /*require_cuda=*/false, inputs.layouts);
  Scheduler& scheduler = segmentScheduler(part, info, chosen);
  segment.scheduler = scheduler.type();
  if (segment.scheduler == SchedulerType::ExprEval ||
      segment.scheduler == SchedulerType::NoOp) {
    return;
  }
  try {
    auto params = scheduleSegment(scheduler, part, info);
    const DataType index_type =
        fitsInt32Indexing(inputs.values) ? DataType::Int32 : DataType::Int;
    segment.code = generateCudaKernel(part, index_type, params->kernelFlags());
    compileToCubin(segment.code, "fuser_kernel", 90, true);
  } catch (const std::exception& e) {
    segment.code.clear();
    segment.error = e.what();
  }
}

// What a cache miss does before it compiles a segment: the segments of
// `fusion` for `inputs`, their schedulers chosen as the runtime chooses.
struct OffDeviceSegmentation {
  OffDeviceSegmentation(
      const Fusion* fusion, const std::vector<c10::IValue>& inputs)
      : segmented(fusion),
        info(makeRuntimeInfo(
            segmented.completeFusion(), inputs, /*require_cuda=*/false)) {
    checkJoinedInputExtents(
        segmented.completeFusion(), info.expressionEvaluator());
    scheduling = segmentForInputs(segmented, inputs, info);
  }
  SegmentedFusion segmented;
  RuntimeInfo info;
  std::unique_ptr<InputSegmentScheduling> scheduling;
};

} // namespace

std::vector<OffDeviceSegment> compileOffDevice(
    const Fusion* fusion, const std::vector<c10::IValue>& inputs) {
  OffDeviceSegmentation cut(fusion, inputs);
  SegmentedFusion& segmented = cut.segmented;
  InputSegmentScheduling* scheduling = cut.scheduling.get();

  std::vector<OffDeviceSegment> result;
  for (SegmentedGroup* group : segmented.groups()) {
    std::unique_ptr<Fusion> part = group->makeFusion();
    result.emplace_back();
    compileSegment(
        part.get(), scheduling->groupInputs(*group),
        scheduling->chosenFor(*group), result.back());
    group->setSchedulerType(result.back().scheduler);
  }
  // As the runtime prints it once its segments are scheduled.
  if (isDebugDumpEnabled(DebugDumpOption::SegmentedFusion)) {
    std::cout << "[segmented_fusion]\n"
              << segmented.toString()
              << handedViewsToString(scheduling->handedViews()) << std::flush;
  }
  return result;
}

std::vector<at::Tensor> evaluateSegmentsWithATen(
    const Fusion* fusion, const std::vector<c10::IValue>& inputs) {
  OffDeviceSegmentation cut(fusion, inputs);
  Fusion* complete = cut.segmented.completeFusion();
  ExpressionEvaluator& ee = cut.info.expressionEvaluator();
  std::unordered_map<const Val*, c10::IValue> values;
  for (SegmentedGroup* group : cut.segmented.groups()) {
    const std::vector<c10::IValue> group_inputs =
        groupInputValues(complete, inputs, *group, values, ee);
    std::unique_ptr<Fusion> part = group->makeFusion();
    std::vector<at::Tensor> outputs =
        evaluateFusionWithATen(part.get(), group_inputs);
    for (size_t o = 0; o < outputs.size(); ++o) {
      values.insert_or_assign(group->outputs().at(o), outputs[o]);
    }
  }
  std::vector<at::Tensor> outputs;
  for (Val* out : complete->outputs()) {
    outputs.push_back(values.at(out).toTensor());
  }
  return outputs;
}

} // namespace fuser
