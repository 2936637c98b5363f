// The inner persistent scheduler (doc/normalization.md): fusions that
// reduce the innermost axes of their input and use the reduced values
// again on the input's shape (softmax, layer norm, RMS norm and their
// input gradients). Each row is loaded once: a block's threads (TIDx) hold
// the row in registers, `batch` vectors per thread, reduce it (every
// thread receives the result, runtime blockAllReduce) and compute the
// outputs from the registers, one pass over global memory. Inputs' rows
// that do not fit the registers are held in shared memory
// (doc/normalization.md §11); rows that fit neither are declined (the
// segmenter splits the fusion).
//
// The inner-outer persistent scheduler (normalization_inner_outer.h)
// shares the heuristics and the schedule of the rows declared at the end.
#pragma once

#include <ir/internal_nodes.h>
#include <scheduler/registry.h>

#include <optional>
#include <string>
#include <vector>

namespace fuser {

class InnerPersistentParams : public HeuristicParamsOf<InnerPersistentParams> {
 public:
  // Every field (HeuristicParamsOf).
  auto fields() const {
    return std::tie(
        kept_axes, reduced_axes, vectorize, batch, threads_x, threads_y,
        persistent_buffers, persistent_registers, shared_inputs, shared_bytes,
        partial_workspace_bytes, narrow_buffers, grid_blocks, registers);
  }
  // The register cap; an inner-outer grid is cooperative.
  KernelFlags kernelFlags() const override {
    return {registers, grid_blocks > 0};
  }

  // Logical positions of the first reduction's output, in memory order.
  std::vector<int64_t> kept_axes;
  std::vector<int64_t> reduced_axes;
  int64_t vectorize = 1;
  // Vectors of each row a thread holds (the persistent batch).
  int64_t batch = 1;
  // Threads along a row (ceil(vectors per row / batch)), launched in whole
  // warps (or the power of two above it, below a warp), and rows per block.
  int64_t threads_x = 32;
  int64_t threads_y = 1;
  // The tensors held across a reduction (doc/normalization.md §1) and the
  // registers they take per thread.
  std::vector<std::string> persistent_buffers;
  int64_t persistent_registers = 0;
  // The inputs (positions among the fusion's inputs) whose buffers are in
  // shared memory instead, and the bytes they take per block
  // (doc/normalization.md §11).
  std::vector<int64_t> shared_inputs;
  int64_t shared_bytes = 0;
  // Inner-outer: the shared memory of the partials' reduction across the
  // block's threads (one slot per thread and column of the group).
  int64_t partial_workspace_bytes = 0;
  // Whether every buffer is narrower than float (half or bfloat16 inputs):
  // the float values computed from them are then not held in a buffer.
  bool narrow_buffers = false;
  // Inner-outer only (0 otherwise): the blocks of the grid, each looping
  // over its share of the rows, threads_y at a time.
  int64_t grid_blocks = 0;
  // The kernel's registers per thread (its cap, doc/normalization.md §4,
  // §9).
  int64_t registers = 0;

  // The launch multiple of TIDx.
  int64_t paddedMultiple() const;
  std::string toString() const override;
};

class InnerPersistentScheduler : public Scheduler {
 public:
  SchedulerType type() const override {
    return SchedulerType::InnerPersistent;
  }
  bool canScheduleCompileTime(Fusion* fusion, std::string* reason) override;
  bool canScheduleRunTime(
      Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) override;
  std::unique_ptr<HeuristicParams> computeHeuristics(
      Fusion* fusion, RuntimeInfo& runtime_info) override;
  void schedule(Fusion* fusion, const HeuristicParams& params) override;
};

// The fusion's reductions by the axes they reduce: `inner` ones reduce
// `reduced_axes` (logical positions), `outer` ones the others.
struct RowReductions {
  std::vector<ReductionOp*> inner;
  std::vector<ReductionOp*> outer;
};
RowReductions rowReductions(
    Fusion* fusion, const std::vector<int64_t>& reduced_axes);

// Whether the fusion is one the persistent schedules take: reductions of
// one rank reducing one set of axes, or (`with_outer`) two complementary
// sets; pointwise ops; tensors of the row's, the reduced or the
// normalized axes' rank; outputs without an allocation domain.
bool persistentRowsCompileTimeCheck(
    Fusion* fusion, bool with_outer, std::string* reason);

// The parameters for the rows `rows.inner` reduce (with `rows.outer`,
// inner-outer's: their partials count as buffers, and the grid is set),
// or nullopt with `reason` when those axes are not innermost in memory or
// a row does not fit.
std::optional<InnerPersistentParams> innerPersistentHeuristics(
    Fusion* fusion, RuntimeInfo& runtime_info, const RowReductions& rows,
    std::string* reason);

// Schedules the fusion as `params` say (doc/normalization.md §4, §9).
void schedulePersistentRows(
    Fusion* fusion, const InnerPersistentParams& params);

} // namespace fuser
