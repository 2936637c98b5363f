#include <scheduler/no_op.h>

#include <ir/all_nodes.h>

namespace fuser {

namespace {

bool computesNothing(Fusion* fusion) {
  for (Val* out : fusion->outputs()) {
    if (!out->isFusionInput()) {
      return false;
    }
  }
  return true;
}

} // namespace

bool NoOpScheduler::canScheduleCompileTime(Fusion*, std::string*) {
  // Whether outputs are empty is only known at run time.
  return true;
}

bool NoOpScheduler::canScheduleRunTime(
    Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) {
  if (computesNothing(fusion)) {
    return true;
  }
  for (Val* out : fusion->outputs()) {
    if (runtime_info.numel(out->as<TensorView>()) != 0) {
      *reason = "output " + out->toString() + " is computed and not empty";
      return false;
    }
  }
  return true;
}

std::unique_ptr<HeuristicParams> NoOpScheduler::computeHeuristics(
    Fusion*, RuntimeInfo&) {
  return std::make_unique<NoOpParams>();
}

void NoOpScheduler::schedule(Fusion*, const HeuristicParams&) {}

} // namespace fuser
