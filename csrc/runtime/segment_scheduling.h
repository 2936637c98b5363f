// The segmenter's questions about one run, answered from its inputs
// (segmentation/segmented_fusion.h): which scheduler takes a candidate
// group, and how many bytes a tensor takes. A group reads fusion inputs,
// which are the run's tensors, and intermediates, which stand in as meta
// tensors laid out as the runtime will allocate them (dense, in the
// intermediate's allocation order), so that no device memory is touched.
#pragma once

#include <expr/evaluator.h>
#include <fusion.h>
#include <scheduler/runtime_info.h>
#include <segmentation/segmented_fusion.h>

#include <ATen/core/ivalue.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fuser {

// What `in`, an input of a group of `complete`, holds in a run on `inputs`
// (`ee` bound to them) when no other group computes it: a fusion input's
// value, or a symbolic size evaluated (fixed by the input signature).
// Nullopt for an intermediate tensor.
std::optional<c10::IValue> groupInputValue(
    Fusion* complete, const std::vector<c10::IValue>& inputs, Val* in,
    ExpressionEvaluator& ee);

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
  // scheduler again. Nullopt when it was not asked or found none.
  std::optional<SchedulerType> chosenFor(const SegmentedGroup& group) const;

  int64_t bytes(const TensorView* tv) override;

 private:
  std::optional<SchedulerType> choose(const SegmentedGroup& group);

  Fusion* complete_;
  const std::vector<c10::IValue>& inputs_;
  // The complete fusion's: extents and the device.
  RuntimeInfo& info_;
  // Per group (its exprs, by address), what compiledScheduler found.
  std::map<std::vector<const Expr*>, std::optional<SchedulerType>> chosen_;
};

} // namespace fuser
