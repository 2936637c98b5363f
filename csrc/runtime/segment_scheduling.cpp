#include <runtime/segment_scheduling.h>

#include <ir/all_nodes.h>
#include <runtime/aten_types.h>
#include <runtime/input_binding.h>
#include <runtime/tensor_layout.h>
#include <scheduler/registry.h>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>

#include <algorithm>

namespace fuser {

InputSegmentScheduling::InputSegmentScheduling(
    Fusion* complete, const std::vector<c10::IValue>& inputs)
    : complete_(complete), inputs_(inputs) {
  bindFusionInputs(complete_, inputs_, ee_, /*require_cuda=*/false);
  for (const auto& input : inputs_) {
    if (input.isTensor() && input.toTensor().is_cuda()) {
      const auto* properties =
          at::cuda::getDeviceProperties(input.toTensor().get_device());
      multiprocessors_ = properties->multiProcessorCount;
      compute_capability_ = properties->major * 10 + properties->minor;
      break;
    }
  }
}

std::optional<c10::IValue> groupInputValue(
    Fusion* complete, const std::vector<c10::IValue>& inputs, Val* in,
    ExpressionEvaluator& ee) {
  const auto& all = complete->inputs();
  auto it = std::find(all.begin(), all.end(), in);
  if (it != all.end()) {
    return inputs[static_cast<size_t>(it - all.begin())];
  }
  if (in->isA<TensorView>()) {
    return std::nullopt;
  }
  const ScalarValue value = ee.evaluateOrThrow(in);
  if (isFloatingPointType(in->dtype())) {
    return c10::IValue(value.asDouble());
  }
  if (isBooleanType(in->dtype())) {
    return c10::IValue(value.asBool());
  }
  return c10::IValue(value.asInt());
}

std::optional<SchedulerType> InputSegmentScheduling::compiledScheduler(
    const SegmentedGroup& group) {
  std::unique_ptr<Fusion> fusion = group.makeFusion();
  std::vector<c10::IValue> group_inputs;
  for (Val* in : group.inputs()) {
    if (auto value = groupInputValue(complete_, inputs_, in, ee_)) {
      group_inputs.push_back(*value);
      continue;
    }
    // An intermediate, as the runtime will allocate it.
    auto* tv = in->as<TensorView>();
    group_inputs.emplace_back(allocateTensor(
        denseLayout(tv, ee_),
        at::TensorOptions().device(at::kMeta).dtype(toAtenType(tv->dtype()))));
  }
  RuntimeInfo info =
      makeRuntimeInfo(fusion.get(), group_inputs, /*require_cuda=*/false);
  if (multiprocessors_) {
    info.setMultiprocessors(*multiprocessors_);
    info.setComputeCapability(*compute_capability_);
  }
  SchedulerChoice choice =
      chooseScheduler(fusion.get(), info, /*allow_expr_eval=*/false);
  if (choice.scheduler == nullptr) {
    return std::nullopt;
  }
  return choice.scheduler->type();
}

int64_t InputSegmentScheduling::bytes(const TensorView* tv) {
  int64_t numel = 1;
  for (IterDomain* id : TensorDomain::noReductions(tv->getLogicalDomain())) {
    if (!id->isBroadcast()) {
      numel *= ee_.evaluateOrThrow(id->extent()).asInt();
    }
  }
  return numel * dataTypeSize(tv->dtype());
}

} // namespace fuser
