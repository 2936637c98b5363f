// ExprEval: the fusion is evaluated op by op with ATen (no generated
// kernel). The fallback for fusions no kernel scheduler takes (reshapes,
// the library ops of ir/external_op.h), always correct, not fused; it
// declines only what an option tells it to (matmul_expr_eval).
#pragma once

#include <scheduler/registry.h>

namespace fuser {

class ExprEvalParams : public HeuristicParamsOf<ExprEvalParams> {
 public:
  // Every field (HeuristicParamsOf).
  auto fields() const {
    return std::tie();
  }

  std::string toString() const override {
    return "ExprEval: evaluated with ATen, one op at a time";
  }
};

class ExprEvalScheduler : public Scheduler {
 public:
  SchedulerType type() const override {
    return SchedulerType::ExprEval;
  }
  // Everything, but matrix products under FUSER_DISABLE=matmul_expr_eval.
  bool canScheduleCompileTime(Fusion* fusion, std::string* reason) override;
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
