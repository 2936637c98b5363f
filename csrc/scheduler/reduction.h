// The reduction scheduler (doc/reduction.md): fusions with one reduction
// (sum, prod, max, min), or several of the same axes reading a common
// input, pointwise ops before them (on the input's shape) and after them
// (on the output's shape).
//
// The kept and the reduced axes are each merged, in the memory order of
// the largest input, into one axis; the reduction is "inner" when the
// innermost axis in memory is reduced, "outer" otherwise. Inner: threads
// (TIDx) walk the reduced axis in vectors, a serial loop covers the rest,
// and a block reduction combines the threads; several rows share a block
// (TIDy) when rows are short. Outer: threads (TIDx) walk the kept axis in
// vectors, TIDy and a serial loop cover the reduced one, and a block
// reduction over TIDy combines them. When there are too few kept elements
// to fill the GPU, the reduced axis is split across blocks (BIDy) and a
// grid reduction combines them in the same kernel. The serial part is an
// rFactor: each thread accumulates its elements first.
#pragma once

#include <scheduler/registry.h>

#include <string>
#include <vector>

namespace fuser {

class ReductionParams : public HeuristicParamsOf<ReductionParams> {
 public:
  // Every field (HeuristicParamsOf).
  auto fields() const {
    return std::tie(
        inner, kept_axes, reduced_axes, vectorize, threads_x, threads_y,
        grid_split, unroll, vectorize_output, stream_inputs);
  }

  // Whether the innermost axis in memory is reduced.
  bool inner = true;
  // Logical positions of the reduction's output (reductions included), in
  // memory order: the kept ones and the reduced ones.
  std::vector<int64_t> kept_axes;
  std::vector<int64_t> reduced_axes;
  // Elements per load along the innermost axis.
  int64_t vectorize = 1;
  int64_t threads_x = 128;
  int64_t threads_y = 1;
  // Blocks that share one reduction (a grid reduction when > 1).
  int64_t grid_split = 1;
  int64_t unroll = 1;
  // Whether the outputs are written in vectors (outer reductions).
  bool vectorize_output = false;
  // Whether the inputs read once are loaded evict-first (CacheOp::Streaming)
  // rather than with the default policy (doc/reduction.md §5.6).
  bool stream_inputs = false;

  // An outer reduction across threads (TIDy) or blocks reduces each
  // thread's vector of kept elements in one call (ParallelType::Group),
  // sharing its synchronizations.
  bool grouped() const {
    return !inner && vectorize > 1 && (grid_split > 1 || threads_y > 1);
  }

  std::string toString() const override;
};

class ReductionScheduler : public Scheduler {
 public:
  SchedulerType type() const override {
    return SchedulerType::Reduction;
  }
  bool canScheduleCompileTime(Fusion* fusion, std::string* reason) override;
  bool canScheduleRunTime(
      Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) override;
  std::unique_ptr<HeuristicParams> computeHeuristics(
      Fusion* fusion, RuntimeInfo& runtime_info) override;
  void schedule(Fusion* fusion, const HeuristicParams& params) override;
};

} // namespace fuser
