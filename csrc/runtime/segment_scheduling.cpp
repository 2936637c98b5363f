#include <runtime/segment_scheduling.h>

#include <base/options.h>
#include <ir/all_nodes.h>
#include <runtime/aten_types.h>
#include <runtime/input_binding.h>
#include <runtime/tensor_layout.h>
#include <scheduler/registry.h>
#include <segmentation/input_views.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <iostream>

namespace fuser {

namespace {

// The allocation domain of each tensor input (empty for a scalar).
std::vector<std::vector<IterDomain*>> inputAllocations(Fusion* fusion) {
  std::vector<std::vector<IterDomain*>> result;
  for (Val* input : fusion->inputs()) {
    auto* tv = dynamic_cast<TensorView*>(input);
    result.push_back(
        tv == nullptr ? std::vector<IterDomain*>{}
                      : tv->getMaybeAllocationDomain());
  }
  return result;
}

} // namespace

std::unique_ptr<InputSegmentScheduling> segmentForInputs(
    SegmentedFusion& segmented, const std::vector<c10::IValue>& inputs,
    RuntimeInfo& info) {
  Fusion* complete = segmented.completeFusion();
  const auto allocations = inputAllocations(complete);
  segmented.rewriteBeforeCut();
  FUSER_INTERNAL_ASSERT(
      inputAllocations(complete) == allocations,
      "a rewrite before segmentation changed an input's allocation, so the "
      "layouts made for the inputs no longer hold");
  auto scheduling =
      std::make_unique<InputSegmentScheduling>(complete, inputs, info);
  segmented.segment(*scheduling);
  scheduling->planViews(segmented);
  return scheduling;
}

InputSegmentScheduling::InputSegmentScheduling(
    Fusion* complete, const std::vector<c10::IValue>& inputs, RuntimeInfo& info)
    : complete_(complete), inputs_(inputs), info_(info) {}

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

std::vector<c10::IValue> groupInputValues(
    Fusion* complete, const std::vector<c10::IValue>& inputs,
    const SegmentedGroup& group,
    std::unordered_map<const Val*, c10::IValue>& values,
    ExpressionEvaluator& ee) {
  std::vector<c10::IValue> result;
  for (Val* in : group.inputs()) {
    auto it = values.find(in);
    if (it == values.end()) {
      auto value = groupInputValue(complete, inputs, in, ee);
      FUSER_INTERNAL_ASSERT(
          value.has_value(), "segment input ", in->toString(),
          " is computed by no earlier segment");
      it = values.emplace(in, *value).first;
    }
    result.push_back(it->second);
  }
  return result;
}

namespace {

std::vector<const Expr*> keyOf(const SegmentedGroup& group) {
  std::vector<const Expr*> key(group.exprs().begin(), group.exprs().end());
  std::sort(key.begin(), key.end());
  return key;
}

} // namespace

std::optional<SchedulerType> InputSegmentScheduling::compiledScheduler(
    const SegmentedGroup& group) {
  std::vector<const Expr*> key = keyOf(group);
  auto it = chosen_.find(key);
  if (it == chosen_.end()) {
    it = chosen_.emplace(std::move(key), choose(group)).first;
  }
  return it->second;
}

std::optional<SchedulerType> InputSegmentScheduling::chosenFor(
    const SegmentedGroup& group) const {
  if (onlyViews(group.exprs(), group.outputs())) {
    // ATen's views of the inputs, no kernel (segmentation/input_views.h).
    return SchedulerType::ExprEval;
  }
  auto it = chosen_.find(keyOf(group));
  return it == chosen_.end() ? std::nullopt : it->second;
}

bool InputSegmentScheduling::runByAten(const SegmentedGroup& group) const {
  const std::optional<SchedulerType> chosen = chosenFor(group);
  return !chosen.has_value() || *chosen == SchedulerType::ExprEval;
}

void InputSegmentScheduling::planViews(SegmentedFusion& segmented) {
  handed_views_ = planHandedViews(
      segmented, inputs_, info_.expressionEvaluator(),
      [this](const SegmentedGroup& group) { return runByAten(group); });
  // The segmenter asked the schedulers with dense intermediates; a kernel
  // group whose scheduler declines (or changes) for the views it now reads
  // reads them dense again.
  for (SegmentedGroup* group : segmented.groups()) {
    std::vector<TensorView*> views;
    for (Val* in : group->inputs()) {
      if (handed_views_.count(in)) {
        views.push_back(in->as<TensorView>());
      }
    }
    if (views.empty() || runByAten(*group) ||
        choose(*group) == chosenFor(*group)) {
      continue;
    }
    for (TensorView* tv : views) {
      tv->setAllocationDomain(tv->getLogicalDomain(), true);
      handed_views_.erase(tv);
    }
  }
}

const HandedView* InputSegmentScheduling::handedView(
    const Val* intermediate) const {
  auto it = handed_views_.find(intermediate);
  return it == handed_views_.end() ? nullptr : &it->second;
}

GroupInputs InputSegmentScheduling::groupInputs(const SegmentedGroup& group) {
  ExpressionEvaluator& ee = info_.expressionEvaluator();
  GroupInputs result;
  for (Val* in : group.inputs()) {
    const TensorRuntimeInfo* input_info =
        in->isA<TensorView>() ? info_.tensorInfo(in->as<TensorView>())
                              : nullptr;
    result.layouts.push_back(input_info ? &input_info->layout : nullptr);
    if (auto value = groupInputValue(complete_, inputs_, in, ee)) {
      result.values.push_back(*value);
      continue;
    }
    // An intermediate, as the runtime allocates it.
    auto* tv = in->as<TensorView>();
    const auto options =
        at::TensorOptions().device(at::kMeta).dtype(toAtenType(tv->dtype()));
    if (const HandedView* view = handedView(in)) {
      result.layouts.back() = &view->layout;
      result.values.emplace_back(allocateHandedView(*view, options));
      continue;
    }
    const TensorLayout& layout =
        result.intermediate_layouts.emplace_back(denseLayout(tv, ee));
    result.layouts.back() = &layout;
    result.values.emplace_back(allocateTensor(layout, options));
  }
  return result;
}

std::optional<SchedulerType> InputSegmentScheduling::choose(
    const SegmentedGroup& group) {
  std::unique_ptr<Fusion> fusion = group.makeFusion();
  const GroupInputs inputs = groupInputs(group);
  RuntimeInfo info = makeRuntimeInfo(
      fusion.get(), inputs.values, /*require_cuda=*/false, inputs.layouts);
  // The device's, also when the group reads only intermediates.
  info.setDevice(info_.device());
  SchedulerChoice choice =
      chooseScheduler(fusion.get(), info, /*allow_expr_eval=*/false);
  if (choice.scheduler == nullptr) {
    return std::nullopt;
  }
  return choice.scheduler->type();
}

int64_t InputSegmentScheduling::bytes(const TensorView* tv) {
  return info_.numel(tv) * dataTypeSize(tv->dtype());
}

Scheduler& segmentScheduler(
    Fusion* fusion, RuntimeInfo& info, std::optional<SchedulerType> chosen,
    bool allow_kernels) {
  if (!allow_kernels) {
    return schedulerFor(SchedulerType::ExprEval);
  }
  if (chosen.has_value() &&
      !isDebugDumpEnabled(DebugDumpOption::SchedulerReject)) {
    return schedulerFor(*chosen);
  }
  SchedulerChoice choice = chooseScheduler(fusion, info);
  if (isDebugDumpEnabled(DebugDumpOption::SchedulerReject)) {
    for (const auto& rejection : choice.rejections) {
      std::cout << "[scheduler_reject] " << rejection << "\n";
    }
  }
  return *choice.scheduler;
}

std::unique_ptr<HeuristicParams> scheduleSegment(
    Scheduler& scheduler, Fusion* fusion, RuntimeInfo& info) {
  auto params = scheduler.computeHeuristics(fusion, info);
  if (isDebugDumpEnabled(DebugDumpOption::SchedulerParams)) {
    std::cout << "[scheduler_params] " << params->toString() << "\n";
  }
  scheduler.schedule(fusion, *params);
  if (isDebugDumpEnabled(DebugDumpOption::ScheduledIr)) {
    std::cout << "[scheduled_ir]\n";
    fusion->print();
  }
  return params;
}

} // namespace fuser
