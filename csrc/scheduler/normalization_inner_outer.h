// The inner-outer persistent scheduler (doc/normalization.md §9): fusions
// that reduce a tensor's rows and use the results on the rows, as the
// inner persistent scheduler takes them, and also reduce its columns (a
// layer norm or RMS norm backward with its weight and bias gradients).
// One kernel: a grid of as many blocks as fit the device at once, each
// looping over its share of the rows with the inner persistent schedule,
// its threads accumulating their columns of every row they visit; after
// the loop, one grouped reduction across TIDy and the blocks per outer
// result.
#pragma once

#include <scheduler/normalization_inner.h>

namespace fuser {

class InnerOuterPersistentScheduler : public Scheduler {
 public:
  SchedulerType type() const override {
    return SchedulerType::InnerOuterPersistent;
  }
  bool canScheduleCompileTime(Fusion* fusion, std::string* reason) override;
  bool canScheduleRunTime(
      Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) override;
  std::unique_ptr<HeuristicParams> computeHeuristics(
      Fusion* fusion, RuntimeInfo& runtime_info) override;
  void schedule(Fusion* fusion, const HeuristicParams& params) override;
};

} // namespace fuser
