// The segmenter's questions about one run, answered from its inputs
// (segmentation/segmented_fusion.h): which scheduler takes a candidate
// group, and how many bytes a tensor takes. A group reads fusion inputs,
// which are the run's tensors, and intermediates, which stand in as meta
// tensors laid out as the runtime will allocate them (dense, in the
// intermediate's allocation order), so that no device memory is touched.
#pragma once

#include <expr/evaluator.h>
#include <fusion.h>
#include <runtime/handed_views.h>
#include <scheduler/registry.h>
#include <scheduler/runtime_info.h>
#include <segmentation/segmented_fusion.h>

#include <ATen/core/ivalue.h>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace fuser {

// What `in`, an input of a group of `complete`, holds in a run on `inputs`
// (`ee` bound to them) when no other group computes it: a fusion input's
// value, or a symbolic size evaluated (fixed by the input signature).
// Nullopt for an intermediate tensor.
std::optional<c10::IValue> groupInputValue(
    Fusion* complete, const std::vector<c10::IValue>& inputs, Val* in,
    ExpressionEvaluator& ee);

// The values of `group`'s inputs in a run that runs the groups one after
// another: those in `values` (what earlier groups computed), the others
// from groupInputValue, which are added to `values`. Fails where an
// intermediate tensor has no value yet.
std::vector<c10::IValue> groupInputValues(
    Fusion* complete, const std::vector<c10::IValue>& inputs,
    const SegmentedGroup& group,
    std::unordered_map<const Val*, c10::IValue>& values,
    ExpressionEvaluator& ee);

// A group's inputs as a trial (or a compile without a GPU) gives them: the
// run's values for fusion inputs and sizes, meta tensors for
// intermediates (dense, or the view an ATen group hands on:
// runtime/handed_views.h), and each tensor's layout, made once per cache
// miss (the whole fusion's for a fusion input, the dense or the handed
// view's one for an intermediate).
struct GroupInputs {
  std::vector<c10::IValue> values;
  // Into the whole fusion's RuntimeInfo, or into intermediate_layouts.
  KnownLayouts layouts;
  std::deque<TensorLayout> intermediate_layouts;
};

class InputSegmentScheduling : public SegmentScheduling {
 public:
  // `complete`: the fusion being segmented; `inputs`: its inputs for this
  // run (they may live on the CPU in tests); `info`: what makeRuntimeInfo
  // made of them for `complete`.
  InputSegmentScheduling(
      Fusion* complete, const std::vector<c10::IValue>& inputs,
      RuntimeInfo& info);

  // Asks the schedulers once per group (the segmenter may ask again).
  std::optional<SchedulerType> compiledScheduler(
      const SegmentedGroup& group) override;

  // What compiledScheduler found for a group with `group`'s exprs: the
  // runtime schedules a final group with it instead of asking every
  // scheduler again. Nullopt when it was not asked or found none. ExprEval
  // for a group that only views its inputs (segmentation/input_views.h).
  std::optional<SchedulerType> chosenFor(const SegmentedGroup& group) const;

  // The inputs of `group` (GroupInputs), in group.inputs() order.
  GroupInputs groupInputs(const SegmentedGroup& group);

  // Whether the runtime runs `group` with ATen (chosenFor finds no kernel).
  bool runByAten(const SegmentedGroup& group) const;

  // Plans the views the ATen groups hand on (planHandedViews), once the
  // groups are final.
  void planViews(SegmentedFusion& segmented);

  // The view an ATen group hands on as `intermediate`, or null where it is
  // laid out densely.
  const HandedView* handedView(const Val* intermediate) const;
  const HandedViews& handedViews() const {
    return handed_views_;
  }

  int64_t bytes(const TensorView* tv) override;

 private:
  std::optional<SchedulerType> choose(const SegmentedGroup& group);

  Fusion* complete_;
  const std::vector<c10::IValue>& inputs_;
  // The complete fusion's: extents and the device.
  RuntimeInfo& info_;
  // Per group (its exprs, by address), what compiledScheduler found.
  std::map<std::vector<const Expr*>, std::optional<SchedulerType>> chosen_;
  HandedViews handed_views_;
};

// A cache miss's cut of `segmented` for `inputs`: the rewrites before the
// cut (which must leave the inputs' allocations, and so the layouts made
// for them, as they were), then the segmentation, then the plan of the
// views ATen groups hand on. `info`: makeRuntimeInfo
// of segmented.completeFusion() for `inputs`. The result, which the
// segments are scheduled with, refers to `inputs` and `info`.
std::unique_ptr<InputSegmentScheduling> segmentForInputs(
    SegmentedFusion& segmented, const std::vector<c10::IValue>& inputs,
    RuntimeInfo& info);

// The scheduler of a segment's `fusion` for `info`: `chosen`, the one
// segmentation found for its group (chosenFor; nullopt: the first of all
// that takes it), or ExprEval unless `allow_kernels`. With
// FUSER_DUMP=scheduler_reject it asks every scheduler again and prints why
// those before it declined.
Scheduler& segmentScheduler(
    Fusion* fusion, RuntimeInfo& info, std::optional<SchedulerType> chosen,
    bool allow_kernels = true);

// Schedules `fusion` in place by `scheduler` and returns the parameters it
// chose; prints FUSER_DUMP=scheduler_params and scheduled_ir. Scheduling
// errors throw.
std::unique_ptr<HeuristicParams> scheduleSegment(
    Scheduler& scheduler, Fusion* fusion, RuntimeInfo& info);

} // namespace fuser
