// Reductions across threads and blocks (doc/reduction.md): which reductions
// of a kernel span thread- or block-parallel axes, what each needs (shared
// memory, and across blocks a work buffer, semaphores and a flag saying
// which block holds the result), and which tensors derive from a result
// that only the last block of a group holds. Part of lowering's analysis
// phase; index lowering turns these reductions into
// kir::ParallelReduction.
#pragma once

#include <device_lower/kernel_ir.h>
#include <fusion.h>

#include <unordered_map>
#include <utility>
#include <vector>

namespace fuser {

struct LoweredKernel;

class ParallelReductions {
 public:
  // Books the shared memory and grid buffers in `kernel` (its launch
  // extents must be known).
  ParallelReductions(Fusion* fusion, LoweredKernel& kernel);

  // Whether `expr` reduces across threads or blocks.
  bool isParallel(const Expr* expr) const {
    return reductions_.count(expr) != 0;
  }
  struct Info {
    kir::ReducedDims dims;
    Val* last_block = nullptr; // across blocks only
    int64_t buffer_index = -1;
    int64_t group_size = 1; // the extent of the output's Group axis
    // Whether the threads that reduce use the result again (a tensor
    // derived from it has a loop axis on a reduced thread dimension): then
    // every thread of the segment receives it (doc/normalization.md §2).
    bool result_in_every_thread = false;
  };
  const Info& info(const Expr* expr) const {
    return reductions_.at(expr);
  }

  // For a tensor whose value derives from a reduction across blocks: the
  // block dimensions reduced and the flag of the last block that holds the
  // result (its writes where others can see them happen only there).
  const std::vector<std::pair<ParallelType, Val*>>& lastBlockFlags(
      const TensorView* tv) const;

 private:
  std::unordered_map<const Expr*, Info> reductions_;
  std::unordered_map<
      const TensorView*, std::vector<std::pair<ParallelType, Val*>>>
      flags_;
};

} // namespace fuser
