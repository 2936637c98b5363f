// Loop nests from loop domains (doc/design.md §5). Each tensor expr runs inside
// one loop per loop ID of its output. Its outer loops, up to its produce
// position or its own compute-at position (whichever is larger), may be
// ones opened before it: an open loop at depth i is shared when an expr that
// ran in it is inlined deeper than i, the loop maps to the output's loop ID
// in the IdModel loop map, and no producer of the expr was computed in that
// loop past its own compute-at position (it must be complete before it is
// read). The compute-at position counts because an expr inlined into a
// consumer runs in the consumer's loops, which a sibling producer inlined
// into the same consumer may have opened already (a + broadcast(b): the
// copy of a and the broadcast of b share the consumer's loops, though
// neither has an inlined producer).
//
// Each new loop runs over the ID loop promotion gives it
// (device_lower/analysis/loop_promotion.h), with the parallel type of the
// expr's own ID.
#include <device_lower/passes.h>

#include <device_lower/lower.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace fuser {

namespace {

Val* loopIndexFor(IterDomain* id, ParallelType pt, Val* extent) {
  if (isParallelTypeThreadDim(pt) || isParallelTypeBlockDim(pt)) {
    return kir::parallelIndex(pt);
  }
  // A grouped reduction handles every iteration in one call (at index 0),
  // and so does a matrix product its tensor-core axes.
  if (isParallelTypeDeviceDim(pt) || pt == ParallelType::Group ||
      pt == ParallelType::Mma || id->isBroadcast() ||
      (extent->isConstInt() && extent->constIntValue() == 1)) {
    return FusionGuard::getCurFusion()->zeroVal();
  }
  return IrBuilder::create<Val>(DataType::Index);
}

// A loop over `id` with the parallel type `pt` of the expr that opens it.
kir::ForLoop* makeLoop(GpuLower& lower, IterDomain* id, ParallelType pt) {
  Val* extent = lower.loopExtent(id);
  return IrBuilder::create<kir::ForLoop>(
      id, pt, loopIndexFor(id, pt, extent),
      FusionGuard::getCurFusion()->zeroVal(), extent);
}

TensorView* outputTv(Expr* expr) {
  for (Val* out : expr->outputs()) {
    if (auto* tv = dynamic_cast<TensorView*>(out)) {
      return tv;
    }
  }
  FUSER_ERROR("tensor expr without tensor output: ", expr->toString());
}

} // namespace

std::vector<Expr*> generateLoopNests(
    GpuLower& lower, const std::vector<Expr*>& exprs) {
  IdModel& id_model = lower.idModel();
  const LoopPromotion& promotion = lower.loopPromotion();
  std::vector<Expr*> top_level;
  std::vector<kir::ForLoop*> open;
  // Whether open[i] may be shared (an expr in it is inlined past depth i).
  std::vector<bool> shareable;
  // The tensors computed inside open[i] so far.
  std::vector<std::unordered_set<TensorView*>> computed;
  // The loops a tensor was computed in, up to its compute-at position.
  std::unordered_map<TensorView*, std::vector<kir::ForLoop*>> computed_in;
  for (Expr* expr : exprs) {
    TensorView* out = outputTv(expr);
    const auto& loop = out->getLoopDomain();
    const size_t share_pos = LoopPromotion::sharePosition(out);
    // Whether a producer of `expr` was computed in open[depth] without
    // being inlined that deep.
    auto reads_unfinished = [&](size_t depth) {
      for (Val* in : expr->inputs()) {
        auto* producer = dynamic_cast<TensorView*>(in);
        if (producer != nullptr && computed[depth].count(producer) &&
            static_cast<int64_t>(depth) >= producer->getComputeAtPosition()) {
          return true;
        }
      }
      return false;
    };
    // A loop over a broadcast ID runs once where the expr's own loop would
    // run over a full axis: an expr past its share position keeps loops
    // over its own IDs (LoopPromotion::loopId), and a [rows, 1] output's
    // copy, written first, left loops over its broadcast IDs that the row's
    // exprs after it are loop-mapped to. Sharing them, the row's exprs
    // found no index for their columns.
    auto runs_over_broadcast = [&](size_t depth) {
      return open[depth]->iterDomain()->isBroadcast() &&
             !promotion.loopId(out, depth)->isBroadcast();
    };
    size_t reuse = 0;
    while (reuse < open.size() && reuse < share_pos && reuse < loop.size() &&
           shareable[reuse] &&
           id_model.loopMapped(open[reuse]->iterDomain(), loop[reuse]) &&
           !runs_over_broadcast(reuse) && !reads_unfinished(reuse)) {
      ++reuse;
    }
    open.resize(reuse);
    shareable.resize(reuse);
    computed.resize(reuse);
    for (size_t i = reuse; i < loop.size(); ++i) {
      IterDomain* id = promotion.loopId(out, i);
      const ParallelType pt = loop[i]->getParallelType();
      kir::ForLoop* new_loop = makeLoop(lower, id, pt);
      if (open.empty()) {
        top_level.push_back(new_loop);
      } else {
        open.back()->body().push_back(new_loop);
      }
      open.push_back(new_loop);
      shareable.push_back(false);
      computed.emplace_back();
    }
    for (auto& tensors : computed) {
      tensors.insert(out);
    }
    // A buffer inlined at k only holds what one iteration of its first k
    // loops computes: a consumer must run inside those very loops.
    for (Val* in : expr->inputs()) {
      auto* producer = dynamic_cast<TensorView*>(in);
      if (producer == nullptr ||
          producer->getMemoryType() == MemoryType::Global) {
        continue;
      }
      auto it = computed_in.find(producer);
      if (it == computed_in.end()) {
        continue;
      }
      const std::vector<kir::ForLoop*>& loops = it->second;
      const bool same = loops.size() <= open.size() &&
                        std::equal(loops.begin(), loops.end(), open.begin());
      FUSER_CHECK(
          same, producer->toString(), " is inlined at position ", loops.size(),
          ", but its consumer ", out->toString(),
          " cannot run inside the loops it is computed in (another expr "
          "between them needs those loops to finish first). Inline ",
          producer->toString(), " less deeply.");
    }
    computed_in[out] = std::vector<kir::ForLoop*>(
        open.begin(), open.begin() + std::min<int64_t>(
                                         static_cast<int64_t>(open.size()),
                                         out->getComputeAtPosition()));
    for (size_t i = 0; i < static_cast<size_t>(out->getComputeAtPosition());
         ++i) {
      shareable[i] = true;
    }
    if (open.empty()) {
      top_level.push_back(expr);
    } else {
      open.back()->body().push_back(expr);
    }
  }
  return top_level;
}

} // namespace fuser
