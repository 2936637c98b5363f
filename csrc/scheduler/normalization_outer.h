// The outer persistent scheduler (doc/normalization.md §10): fusions that
// reduce the outer axes of their input in memory and use the reduced
// values again on the input's shape (a batch norm over N, H, W of an NHWC
// tensor in training, or x - mean(x, 0)), when the whole input fits the
// registers of the blocks the device holds at once. One kernel: each
// thread holds `batch` vectors of its columns, one per row it visits; the
// rows' sums cross the threads of a block (TIDy) and the blocks (BIDx),
// and every thread receives them (runtime gridAllReduceResident, a
// cooperative launch); the outputs are computed from the registers. One
// read of the input, where the segments that serve it otherwise read it
// twice.
#pragma once

#include <scheduler/registry.h>

#include <optional>
#include <string>
#include <vector>

namespace fuser {

class OuterPersistentParams : public HeuristicParamsOf<OuterPersistentParams> {
 public:
  // Every field (HeuristicParamsOf).
  auto fields() const {
    return std::tie(
        kept_axes, reduced_axes, vectorize, threads_x, threads_y, batch,
        blocks_x, blocks_y, persistent_buffers, persistent_registers,
        registers);
  }
  // The register cap; every block needs the totals of all, so the grid
  // must be resident (cooperative).
  KernelFlags kernelFlags() const override {
    return {registers, true};
  }

  // Logical positions of the first reduction's output, in memory order.
  std::vector<int64_t> kept_axes;
  std::vector<int64_t> reduced_axes;
  // Elements per vector along the kept (innermost) axes.
  int64_t vectorize = 1;
  // Threads along the kept axes (TIDx) and along the reduced ones (TIDy).
  int64_t threads_x = 1;
  int64_t threads_y = 1;
  // Rows each thread holds (its vectors of the buffers, one per row).
  int64_t batch = 1;
  // Blocks along the reduced axes (BIDx, reduced across) and along the
  // kept ones (BIDy).
  int64_t blocks_x = 1;
  int64_t blocks_y = 1;
  // The tensors held across a reduction and the registers they take per
  // thread; the register cap of the kernel.
  std::vector<std::string> persistent_buffers;
  int64_t persistent_registers = 0;
  int64_t registers = 0;

  std::string toString() const override;
};

class OuterPersistentScheduler : public Scheduler {
 public:
  SchedulerType type() const override {
    return SchedulerType::OuterPersistent;
  }
  bool canScheduleCompileTime(Fusion* fusion, std::string* reason) override;
  bool canScheduleRunTime(
      Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) override;
  std::unique_ptr<HeuristicParams> computeHeuristics(
      Fusion* fusion, RuntimeInfo& runtime_info) override;
  void schedule(Fusion* fusion, const HeuristicParams& params) override;
};

// The parameters for `fusion`, or nullopt with `reason` when its reduced
// axes are innermost in memory, nothing is held, or the input does not
// fit the registers of the resident blocks.
std::optional<OuterPersistentParams> outerPersistentHeuristics(
    Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason);

} // namespace fuser
