#include <scheduler/registry.h>

#include <scheduler/expr_eval.h>
#include <scheduler/matmul.h>
#include <scheduler/no_op.h>
#include <scheduler/normalization_inner.h>
#include <scheduler/normalization_inner_outer.h>
#include <scheduler/normalization_outer.h>
#include <scheduler/pointwise.h>
#include <scheduler/reduction.h>
#include <scheduler/utils.h>

#include <atomic>
#include <optional>

namespace fuser {

std::string toString(SchedulerType type) {
  switch (type) {
    case SchedulerType::NoOp:
      return "NoOp";
    case SchedulerType::PointWise:
      return "PointWise";
    case SchedulerType::Reduction:
      return "Reduction";
    case SchedulerType::InnerPersistent:
      return "InnerPersistent";
    case SchedulerType::InnerOuterPersistent:
      return "InnerOuterPersistent";
    case SchedulerType::OuterPersistent:
      return "OuterPersistent";
    case SchedulerType::Matmul:
      return "Matmul";
    case SchedulerType::ExprEval:
      return "ExprEval";
    case SchedulerType::Communication:
      return "Communication";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, SchedulerType type) {
  return os << toString(type);
}

const std::vector<std::unique_ptr<Scheduler>>& registeredSchedulers() {
  static const std::vector<std::unique_ptr<Scheduler>> schedulers = [] {
    std::vector<std::unique_ptr<Scheduler>> list;
    list.push_back(std::make_unique<NoOpScheduler>());
    list.push_back(std::make_unique<PointWiseScheduler>());
    list.push_back(std::make_unique<ReductionScheduler>());
    list.push_back(std::make_unique<InnerPersistentScheduler>());
    list.push_back(std::make_unique<InnerOuterPersistentScheduler>());
    list.push_back(std::make_unique<OuterPersistentScheduler>());
    list.push_back(std::make_unique<MatmulScheduler>());
    list.push_back(std::make_unique<ExprEvalScheduler>());
    return list;
  }();
  return schedulers;
}

Scheduler& schedulerFor(SchedulerType type) {
  for (const auto& scheduler : registeredSchedulers()) {
    if (scheduler->type() == type) {
      return *scheduler;
    }
  }
  FUSER_CHECK(
      false, "No scheduler of type ", type,
      " is implemented; the registered ones are NoOp, PointWise, Reduction, "
      "InnerPersistent, InnerOuterPersistent, OuterPersistent, Matmul and "
      "ExprEval.");
  FUSER_ERROR("unreachable");
}

namespace {

std::atomic<int64_t> scheduler_choices{0};

} // namespace

int64_t schedulerChoiceCount() {
  return scheduler_choices.load();
}

SchedulerChoice chooseScheduler(
    Fusion* fusion, RuntimeInfo& runtime_info, bool allow_expr_eval) {
  ++scheduler_choices;
  SchedulerChoice choice;
  // Found (an ID graph built) only once a kernel scheduler would take the
  // fusion otherwise.
  std::optional<std::string> self_mapped;
  for (const auto& scheduler : registeredSchedulers()) {
    if (!allow_expr_eval && scheduler->type() == SchedulerType::ExprEval) {
      continue;
    }
    std::string reason;
    if (!scheduler->canScheduleCompileTime(fusion, &reason)) {
      choice.rejections.push_back(
          toString(scheduler->type()) + " (compile time): " + reason);
      continue;
    }
    const bool generates_kernel =
        scheduler->type() != SchedulerType::ExprEval &&
        scheduler->type() != SchedulerType::NoOp;
    if (generates_kernel && !self_mapped.has_value()) {
      self_mapped = scheduler_utils::selfMappedTensor(fusion);
    }
    if (generates_kernel && !self_mapped->empty()) {
      choice.rejections.push_back(
          toString(scheduler->type()) + " (compile time): in " + *self_mapped +
          ", which one loop nest cannot index");
      continue;
    }
    if (!scheduler->canScheduleRunTime(fusion, runtime_info, &reason)) {
      choice.rejections.push_back(
          toString(scheduler->type()) + " (run time): " + reason);
      continue;
    }
    choice.scheduler = scheduler.get();
    return choice;
  }
  if (allow_expr_eval) {
    // ExprEval declines only under an option that forbids its fallback.
    std::string reasons;
    for (const std::string& rejection : choice.rejections) {
      reasons += "\n  " + rejection;
    }
    FUSER_CHECK(
        false,
        "Can not find a scheduler to schedule fusion segment: every "
        "scheduler declined it, the ExprEval fallback because of an option "
        "(FUSER_DISABLE or a FusionDefinition's _disable_options):",
        reasons, "\nDrop that option to run the segment with ATen.");
  }
  return choice;
}

} // namespace fuser
