// The inner persistent scheduler (doc/normalization.md): fusions that
// reduce the innermost axes of their input and use the reduced values
// again on the input's shape (softmax, layer norm, RMS norm and their
// input gradients). Each row is loaded once: a block's threads (TIDx) hold
// the row in registers, `batch` vectors per thread, reduce it (every
// thread receives the result, runtime blockAllReduce) and compute the
// outputs from the registers, one pass over global memory. Rows that do
// not fit the registers are declined (ExprEval runs them).
#pragma once

#include <scheduler/registry.h>

#include <string>
#include <vector>

namespace fuser {

class InnerPersistentParams : public HeuristicParams {
 public:
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

} // namespace fuser
