// The matmul scheduler (doc/matmul.md §2): one MmaOp of half or bfloat16
// operands that are fusion inputs, followed by elementwise epilogue ops on
// its [batch, M, N] shape (bias, activation, residual, cast), on a Hopper
// GPU (sm_90a).
//
// It is the one scheduler that caches its inputs with replay_allocation:
// each operand's shared-memory cache takes the operand's allocation layout,
// because the bulk copy engine writes tiles into shared memory in the
// order they lie in global memory. The output tile of a block is
// tile.m x tile.n; the blocks (at most one per SM) walk the tiles in a
// persistent loop; a producer warpgroup loads the operands' tiles and
// tile.m / 64 consumer warpgroups multiply them with wgmma, then run the
// epilogue from their accumulator registers.
#pragma once

#include <scheduler/registry.h>

#include <ir/mma_op.h>

namespace fuser {

class MatmulParams : public HeuristicParamsOf<MatmulParams> {
 public:
  // Every field (HeuristicParamsOf).
  auto fields() const {
    return std::tie(
        tile.m, tile.n, tile.k, tile.stages, tile.cluster, grid, m_group,
        vectorize);
  }

  MmaTileConfig tile;
  // Blocks of the persistent grid.
  int64_t grid = 132;
  // Tiles are walked in groups of `m_group` M-tiles (all N-tiles of a
  // group before the next), so that the tiles of one wave share operand
  // panels in L2. 1: row by row.
  int64_t m_group = 1;
  // Elements per store of the outputs laid out along N: a thread's two
  // adjacent columns of the accumulator (doc/matmul.md §2), or 1.
  int64_t vectorize = 1;

  std::string toString() const override;
};

class MatmulScheduler : public Scheduler {
 public:
  SchedulerType type() const override {
    return SchedulerType::Matmul;
  }
  bool canScheduleCompileTime(Fusion* fusion, std::string* reason) override;
  bool canScheduleRunTime(
      Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) override;
  std::unique_ptr<HeuristicParams> computeHeuristics(
      Fusion* fusion, RuntimeInfo& runtime_info) override;
  void schedule(Fusion* fusion, const HeuristicParams& params) override;
};

} // namespace fuser
