#include <device_lower/analysis/parallel_reductions.h>

#include <device_lower/lower.h>
#include <ir/all_nodes.h>

#include <algorithm>
#include <unordered_set>

namespace fuser {

namespace {

constexpr ParallelType kThreads[3] = {
    ParallelType::TIDx, ParallelType::TIDy, ParallelType::TIDz};
constexpr ParallelType kBlocks[3] = {
    ParallelType::BIDx, ParallelType::BIDy, ParallelType::BIDz};

// The product of the launch extents of `types` (1 for unused ones).
Val* launchProduct(
    const LoweredKernel& kernel, const ParallelType (&types)[3]) {
  Val* product = FusionGuard::getCurFusion()->oneVal();
  for (ParallelType pt : types) {
    auto it = kernel.launch_extents.find(pt);
    if (it != kernel.launch_extents.end()) {
      product = IrBuilder::mulExpr(product, it->second);
    }
  }
  return product;
}

// Whether a tensor computed from `tv` iterates over one of the thread
// dimensions `dims` reduces: those threads use the reduced value again.
bool usedAgainByReducingThreads(TensorView* tv, const kir::ReducedDims& dims) {
  std::vector<TensorView*> stack = {tv};
  std::unordered_set<TensorView*> seen = {tv};
  while (!stack.empty()) {
    TensorView* current = stack.back();
    stack.pop_back();
    for (Expr* use : current->uses()) {
      for (Val* out_val : use->outputs()) {
        auto* out = dynamic_cast<TensorView*>(out_val);
        if (out == nullptr || !seen.insert(out).second) {
          continue;
        }
        for (IterDomain* id : out->getLoopDomain()) {
          for (int d = 0; d < 3; ++d) {
            if (dims.threads[d] && id->isIteration() &&
                id->getParallelType() == kThreads[d]) {
              return true;
            }
          }
        }
        stack.push_back(out);
      }
    }
  }
  return false;
}

} // namespace

ParallelReductions::ParallelReductions(Fusion* fusion, LoweredKernel& kernel) {
  for (Expr* expr : fusion->exprs()) {
    auto* rop = dynamic_cast<ReductionOp*>(expr);
    if (rop == nullptr) {
      continue;
    }
    auto* out = rop->out()->as<TensorView>();
    Info info;
    for (IterDomain* id : out->getLoopDomain()) {
      if (id->getParallelType() == ParallelType::Group) {
        FUSER_INTERNAL_ASSERT(
            id->extent()->isConstInt() && info.group_size == 1,
            "one Group axis of constant extent per reduction: ",
            out->toString());
        info.group_size = id->extent()->constIntValue();
      }
      if (!id->isReduction()) {
        continue;
      }
      for (int d = 0; d < 3; ++d) {
        info.dims.threads[d] |= id->getParallelType() == kThreads[d];
        info.dims.blocks[d] |= id->getParallelType() == kBlocks[d];
      }
    }
    if (!info.dims.anyThread() && !info.dims.anyBlock()) {
      FUSER_INTERNAL_ASSERT(
          info.group_size == 1,
          "Group axis on a serial reduction: ", out->toString());
      continue;
    }
    info.result_in_every_thread = usedAgainByReducingThreads(out, info.dims);
    // Across blocks, only a grid whose blocks are all resident can give
    // every thread the result (runtime gridAllReduceResident).
    FUSER_INTERNAL_ASSERT(
        !info.result_in_every_thread || !info.dims.anyBlock() ||
            kernel.cooperative_launch,
        "the result of a reduction across blocks is used again by the threads "
        "that reduced it; only reductions within a block, or across the "
        "blocks of a cooperative launch, give every thread their result: ",
        out->toString());
    // A group is reduced together: one slot per thread and value
    // (runtime/block_reduction.h, blockReduceValues).
    kernel.smem_bytes_per_thread = std::max(
        kernel.smem_bytes_per_thread,
        dataTypeSize(out->dtype()) * info.group_size);
    if (info.dims.anyBlock()) {
      info.buffer_index = static_cast<int64_t>(kernel.grid_buffers.size());
      // Every block holds an all-reduce's result: no flag.
      info.last_block =
          info.result_in_every_thread
              ? nullptr
              : IrBuilder::create<kir::NamedScalar>(
                    "last_block" + std::to_string(info.buffer_index),
                    DataType::Bool);
      // One work slot per thread of the grid and grouped value, one
      // semaphore per block (an upper bound on the groups of blocks).
      Val* blocks = launchProduct(kernel, kBlocks);
      Val* slots = IrBuilder::mulExpr(blocks, launchProduct(kernel, kThreads));
      if (info.group_size > 1) {
        slots = IrBuilder::mulExpr(
            slots, IrBuilder::create<Val>(
                       ScalarValue(info.group_size), DataType::Index));
      }
      kernel.grid_buffers.push_back(
          {out->dtype(), slots, blocks, info.last_block != nullptr});
    }
    reductions_.emplace(expr, info);
  }
  // Tensors that derive from a result only the last block holds.
  for (Expr* expr : fusion->exprs()) {
    for (Val* out_val : expr->outputs()) {
      auto* out = dynamic_cast<TensorView*>(out_val);
      if (out == nullptr) {
        continue;
      }
      auto& flags = flags_[out];
      for (Val* in : expr->inputs()) {
        auto* producer = dynamic_cast<TensorView*>(in);
        auto it = producer ? flags_.find(producer) : flags_.end();
        if (it == flags_.end()) {
          continue;
        }
        for (const auto& flag : it->second) {
          if (std::find(flags.begin(), flags.end(), flag) == flags.end()) {
            flags.push_back(flag);
          }
        }
      }
      auto it = reductions_.find(expr);
      if (it != reductions_.end() && it->second.last_block != nullptr) {
        for (int d = 0; d < 3; ++d) {
          if (it->second.dims.blocks[d]) {
            flags.emplace_back(kBlocks[d], it->second.last_block);
          }
        }
      }
    }
  }
}

const std::vector<std::pair<ParallelType, Val*>>&
ParallelReductions::lastBlockFlags(const TensorView* tv) const {
  static const std::vector<std::pair<ParallelType, Val*>> none;
  auto it = flags_.find(tv);
  return it == flags_.end() ? none : it->second;
}

} // namespace fuser
