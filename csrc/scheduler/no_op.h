// NoOp: fusions that compute nothing (every output is an input) and runs
// whose outputs are all empty. The runtime returns the inputs or empty
// tensors without a kernel.
#pragma once

#include <scheduler/registry.h>

namespace fuser {

class NoOpParams : public HeuristicParamsOf<NoOpParams> {
 public:
  // Every field (HeuristicParamsOf).
  auto fields() const {
    return std::tie();
  }

  std::string toString() const override {
    return "NoOp: no kernel";
  }
};

class NoOpScheduler : public Scheduler {
 public:
  SchedulerType type() const override {
    return SchedulerType::NoOp;
  }
  bool canScheduleCompileTime(Fusion* fusion, std::string* reason) override;
  bool canScheduleRunTime(
      Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) override;
  std::unique_ptr<HeuristicParams> computeHeuristics(
      Fusion* fusion, RuntimeInfo& runtime_info) override;
  void schedule(Fusion* fusion, const HeuristicParams& params) override;
};

} // namespace fuser
