#include <scheduler/normalization_inner_outer.h>

#include <base/options.h>
#include <ir/all_nodes.h>
#include <scheduler/persistent_buffers.h>
#include <scheduler/reduction_layout.h>
#include <scheduler/utils.h>

namespace fuser {

namespace {

// The reductions split into the rows' (those that reduce the innermost
// axis in memory) and the columns'.
RowReductions rowsAndColumns(Fusion* fusion, RuntimeInfo& runtime_info) {
  ReductionOp* first = scheduler_utils::reductionsOf(fusion).front();
  RowReductions split =
      rowReductions(fusion, scheduler_utils::reducedPositions(first));
  const ReductionLayout layout =
      reductionLayout(fusion, first->out()->as<TensorView>(), runtime_info);
  if (!layout.inner) {
    std::swap(split.inner, split.outer);
  }
  return split;
}

} // namespace

bool InnerOuterPersistentScheduler::canScheduleCompileTime(
    Fusion* fusion, std::string* reason) {
  // On by default: on the H200 its kernels run 1.4 to 1.8 times as fast
  // as the segments that serve these fusions without it
  // (doc/normalization.md §9).
  if (isDisabled(DisableOption::InnerOuterPersistent)) {
    *reason = "turned off (FUSER_DISABLE=inner_outer_persistent)";
    return false;
  }
  if (!persistentRowsCompileTimeCheck(fusion, /*with_outer=*/true, reason)) {
    return false;
  }
  // Reductions along both axes with nothing held across them are as fast
  // as separate reduction kernels, which the segmenter makes.
  if (persistentBuffers(fusion).empty()) {
    *reason =
        "no reduction's result is used again on the tensor it reduces "
        "(nothing to hold: separate reductions serve it)";
    return false;
  }
  // Which set of axes is the rows' depends on the inputs' layout: the
  // rest is checked at run time.
  return true;
}

bool InnerOuterPersistentScheduler::canScheduleRunTime(
    Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) {
  if (scheduler_utils::reductionInputIsEmpty(fusion, runtime_info, reason)) {
    return false;
  }
  ReductionOp* first = scheduler_utils::reductionsOf(fusion).front();
  const RowReductions rows = rowsAndColumns(fusion, runtime_info);
  const int64_t rank = static_cast<int64_t>(
      first->out()->as<TensorView>()->getLogicalDomain().size());
  for (ReductionOp* rop : rows.outer) {
    for (Val* v : scheduler_utils::downstreamOf(fusion, rop->out())) {
      auto* tv = dynamic_cast<TensorView*>(v);
      if (tv == nullptr || v == rop->out()) {
        continue;
      }
      if (scheduler_utils::rankOf(tv) == rank ||
          (tv->definition() != nullptr &&
           tv->definition()->isA<ReductionOp>())) {
        *reason = tv->toString() + " uses the column reduction " +
                  rop->out()->toString() +
                  " on the rows (each block holds partials only)";
        return false;
      }
    }
  }
  return innerPersistentHeuristics(fusion, runtime_info, rows, reason)
      .has_value();
}

std::unique_ptr<HeuristicParams>
InnerOuterPersistentScheduler::computeHeuristics(
    Fusion* fusion, RuntimeInfo& runtime_info) {
  std::string reason;
  auto params = innerPersistentHeuristics(
      fusion, runtime_info, rowsAndColumns(fusion, runtime_info), &reason);
  FUSER_INTERNAL_ASSERT(
      params.has_value(),
      "computeHeuristics after the run-time check: ", reason);
  return std::make_unique<InnerPersistentParams>(*params);
}

void InnerOuterPersistentScheduler::schedule(
    Fusion* fusion, const HeuristicParams& hp) {
  const auto& params = dynamic_cast<const InnerPersistentParams&>(hp);
  FUSER_INTERNAL_ASSERT(
      params.grid_blocks > 0, "inner-outer parameters without a grid");
  schedulePersistentRows(fusion, params);
}

} // namespace fuser
