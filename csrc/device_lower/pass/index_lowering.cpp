// Tensor operands -> TensorIndex (DESIGN §5). Every tensor a tensor expr
// reads or writes becomes an element access at the offset the indexer
// computes from the enclosing loops; copies that only move data (set,
// broadcast, permute, reshape) become plain element copies.
#include <device_lower/passes.h>

#include <device_lower/analysis/vectorization.h>
#include <device_lower/index/indexer.h>
#include <device_lower/lower.h>

#include <algorithm>

namespace fuser {

namespace {

// A kernel only sees its rank's shard of a device-sharded tensor, so an
// expr touching one must run on the same shard (a device-parallel loop).
// Reading it from an unsharded loop needs a collective first (DESIGN §7).
void checkShardedAccess(
    TensorView* tv, Expr* expr, const std::vector<kir::ForLoop*>& loops) {
  if (tv->getMemoryType() != MemoryType::Global) {
    return;
  }
  const auto& allocation = tv->getMaybeAllocationDomain();
  const bool sharded = std::any_of(
      allocation.begin(), allocation.end(),
      [](IterDomain* id) { return id->isDeviceDim(); });
  const bool device_loop = std::any_of(
      loops.begin(), loops.end(),
      [](kir::ForLoop* loop) { return loop->isDeviceParallel(); });
  FUSER_CHECK(
      !sharded || device_loop, tv->toString(),
      " is sharded across devices, but ", expr->toString(),
      " runs over the whole tensor on every device. Shard the consumer the "
      "same way (split its loop and parallelize the outer part with DIDx), "
      "or gather the tensor first (resharding needs a collective).");
}

Expr* lowerExpr(Expr* expr, const std::vector<kir::ForLoop*>& loops) {
  GpuLower* lower = GpuLower::current();
  const bool vectorized = !loops.empty() && isVectorizedCopyLoop(loops.back());
  Indexer indexer(loops, vectorized);
  auto lowerOperand = [&](Val* v) -> Val* {
    if (auto* ti = dynamic_cast<kir::TensorIndex*>(v)) {
      if (ti->index() != nullptr) {
        return ti;
      }
      return IrBuilder::create<kir::TensorIndex>(
          ti->view(), indexer.index(ti->view()));
    }
    if (auto* tv = dynamic_cast<TensorView*>(v)) {
      if (vectorized) {
        bookVectorizedAccess(loops.back(), tv);
      }
      checkShardedAccess(tv, expr, loops);
      return IrBuilder::create<kir::TensorIndex>(tv, indexer.index(tv));
    }
    return lower->resolveExtent(v);
  };
  Val* out = lowerOperand(expr->output(0));
  if (auto* uop = dynamic_cast<UnaryOp*>(expr)) {
    return IrBuilder::create<UnaryOp>(
        uop->opType(), out, lowerOperand(uop->in()));
  }
  if (auto* bop = dynamic_cast<BinaryOp*>(expr)) {
    return IrBuilder::create<BinaryOp>(
        bop->opType(), out, lowerOperand(bop->lhs()), lowerOperand(bop->rhs()));
  }
  if (auto* top = dynamic_cast<TernaryOp*>(expr)) {
    return IrBuilder::create<TernaryOp>(
        top->opType(), out, lowerOperand(top->input(0)),
        lowerOperand(top->input(1)), lowerOperand(top->input(2)));
  }
  if (auto* rop = dynamic_cast<ReductionOp*>(expr)) {
    return IrBuilder::create<ReductionOp>(
        rop->opType(), lower->resolveExtent(rop->init()), out,
        lowerOperand(rop->in()));
  }
  CacheOp cache_op = CacheOp::Unspecified;
  if (auto* ldst = dynamic_cast<LoadStoreOp*>(expr)) {
    cache_op = ldst->cacheOp();
  } else {
    FUSER_INTERNAL_ASSERT(
        expr->isA<BroadcastOp>() || expr->isA<ViewOp>(), "cannot lower ",
        expr->toString());
  }
  return IrBuilder::create<LoadStoreOp>(
      LoadStoreOpType::Set, out, lowerOperand(expr->input(0)), cache_op);
}

void lowerScope(std::vector<Expr*>& scope, std::vector<kir::ForLoop*>& loops) {
  for (Expr*& expr : scope) {
    if (auto* loop = dynamic_cast<kir::ForLoop*>(expr)) {
      loops.push_back(loop);
      lowerScope(loop->body().mutableExprs(), loops);
      loops.pop_back();
    } else if (auto* branch = dynamic_cast<kir::IfThenElse*>(expr)) {
      lowerScope(branch->thenBody().mutableExprs(), loops);
      lowerScope(branch->elseBody().mutableExprs(), loops);
    } else if (!expr->isA<kir::Allocate>() && !expr->isA<kir::BlockSync>()) {
      expr = lowerExpr(expr, loops);
    }
  }
}

} // namespace

std::vector<Expr*> lowerIndices(const std::vector<Expr*>& exprs) {
  std::vector<Expr*> result = exprs;
  std::vector<kir::ForLoop*> loops;
  lowerScope(result, loops);
  return result;
}

} // namespace fuser
