// ExprEval: the fusion is evaluated op by op with ATen (no generated
// kernel). The fallback for fusions no kernel scheduler takes yet
// (reductions, reshapes), always correct, not fused.
#pragma once

#include <scheduler/registry.h>

namespace fuser {

class ExprEvalParams : public HeuristicParams {
 public:
  std::string toString() const override {
    return "ExprEval: evaluated with ATen, one op at a time";
  }
};

class ExprEvalScheduler : public Scheduler {
 public:
  SchedulerType type() const override {
    return SchedulerType::ExprEval;
  }
  bool canScheduleCompileTime(Fusion*, std::string*) override {
    return true;
  }
  bool canScheduleRunTime(Fusion*, RuntimeInfo&, std::string*) override {
    return true;
  }
  std::unique_ptr<HeuristicParams> computeHeuristics(
      Fusion*, RuntimeInfo&) override {
    return std::make_unique<ExprEvalParams>();
  }
  void schedule(Fusion*, const HeuristicParams&) override {}
};

} // namespace fuser
