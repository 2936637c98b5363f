// The pointwise scheduler: fusions of elementwise ops, broadcasts, casts
// and permutes whose outputs all have the reference's rank.
//
// The loop follows the reference output's allocation order (an output with
// no layout of its own takes the layout of the largest permuted input), so
// NHWC and split allocations are read and written in memory order. 1-D:
// all axes merged, [BIDx, Unroll, TIDx, Vectorize]. 2-D, when inputs are
// broadcast along inner axes: [BIDy | BIDx, Unroll, TIDx, Vectorize] over
// the (outer | inner) axes. Input and output caches come from cacheInputs /
// cacheAndForkOutputs without replay_allocation: they are register buffers
// inlined into the loop, so no layout is copied onto them.
#pragma once

#include <scheduler/registry.h>

#include <vector>

namespace fuser {

class PointwiseParams : public HeuristicParamsOf<PointwiseParams> {
 public:
  // Every field (HeuristicParamsOf).
  auto fields() const {
    return std::tie(
        reference_output, loop_order, break_point, vectorize, unroll,
        threads_per_block, rows_per_block, rows_on_grid_y, vectorize_input,
        vectorize_output, output_layouts);
  }

  // Position of the reference among the fusion outputs.
  int64_t reference_output = 0;
  // Logical positions of the reference, outermost loop first.
  std::vector<int64_t> loop_order;
  // 0: one merged axis; b > 0: loop axes [0, b) are the outer part (rows:
  // blocks, unrolled, TIDy), [b, rank) the inner part (blocks, TIDx,
  // vector); doc/pointwise.md §3.
  int64_t break_point = 0;
  int64_t vectorize = 1;
  int64_t unroll = 1;
  // threadIdx.x (the inner part's vectors); threadIdx.y (rows, 2-D only).
  int64_t threads_per_block = 128;
  int64_t rows_per_block = 1;
  // 2-D: row blocks on BIDy and a row's blocks on BIDx (else the reverse).
  bool rows_on_grid_y = false;
  // Per fusion input / output: whether its accesses are vectorized.
  std::vector<bool> vectorize_input;
  std::vector<bool> vectorize_output;
  // Outputs given the layout of an input: (output position, allocation
  // order as logical positions).
  std::vector<std::pair<int64_t, std::vector<int64_t>>> output_layouts;

  std::string toString() const override;
};

class PointWiseScheduler : public Scheduler {
 public:
  SchedulerType type() const override {
    return SchedulerType::PointWise;
  }
  bool canScheduleCompileTime(Fusion* fusion, std::string* reason) override;
  bool canScheduleRunTime(
      Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) override;
  std::unique_ptr<HeuristicParams> computeHeuristics(
      Fusion* fusion, RuntimeInfo& runtime_info) override;
  void schedule(Fusion* fusion, const HeuristicParams& params) override;
};

} // namespace fuser
