// The scheduler registry (doc/design.md §2, §6). A scheduler says whether it
// can take a fusion, first from the fusion alone (compile time), then with the
// inputs of a run (run time), giving a reason when it cannot; it computes
// printable heuristic parameters and applies them. The runtime asks the
// schedulers in order and uses the first that accepts.
#pragma once

#include <fusion.h>
#include <scheduler/runtime_info.h>
#include <scheduler/scheduler_types.h>

#include <memory>
#include <string>
#include <vector>

namespace fuser {

// Parameters a scheduler chose; printed with FUSER_DUMP=scheduler_params.
class HeuristicParams {
 public:
  virtual ~HeuristicParams() = default;
  virtual std::string toString() const = 0;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual SchedulerType type() const = 0;
  // From the fusion alone. On false, `reason` says why.
  virtual bool canScheduleCompileTime(Fusion* fusion, std::string* reason) = 0;
  // With the inputs of a run.
  virtual bool canScheduleRunTime(
      Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) = 0;
  virtual std::unique_ptr<HeuristicParams> computeHeuristics(
      Fusion* fusion, RuntimeInfo& runtime_info) = 0;
  // Schedules `fusion` in place.
  virtual void schedule(Fusion* fusion, const HeuristicParams& params) = 0;
};

// The registered schedulers, in the order they are tried.
const std::vector<std::unique_ptr<Scheduler>>& registeredSchedulers();
Scheduler& schedulerFor(SchedulerType type);

struct SchedulerChoice {
  Scheduler* scheduler = nullptr;
  // Why each scheduler tried before it declined.
  std::vector<std::string> rejections;
};

// The first scheduler that accepts `fusion` for this run. Without
// `allow_expr_eval`, ExprEval is not asked and `scheduler` is null when no
// other scheduler accepts.
SchedulerChoice chooseScheduler(
    Fusion* fusion, RuntimeInfo& runtime_info, bool allow_expr_eval = true);

} // namespace fuser
