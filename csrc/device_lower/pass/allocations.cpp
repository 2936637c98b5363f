// Buffers for tensors that are not in global memory, and reduction
// initializations (DESIGN §5). A tensor inlined at position k is computed
// inside the loops of its first k loop axes, so its buffer only spans the
// axes right of k and is declared at depth k. Thread-parallel axes take no
// room in a register buffer (each thread has its own), block-parallel axes
// none in shared memory.
#include <device_lower/passes.h>

#include <device_lower/lower.h>

#include <map>

namespace fuser {

namespace {

using Requests = std::map<size_t, std::vector<Expr*>>;

bool occupiesBuffer(IterDomain* id, MemoryType memory_type) {
  if (id->isReduction() || id->isBroadcast() || id->isDeviceDim()) {
    return false;
  }
  if (memory_type == MemoryType::Local && id->isThread()) {
    return false;
  }
  if (memory_type == MemoryType::Shared && id->isBlockDim()) {
    return false;
  }
  return true;
}

kir::Allocate* makeAllocation(TensorView* tv) {
  GpuLower* lower = GpuLower::current();
  Val* size = FusionGuard::getCurFusion()->oneVal();
  const auto& loop = tv->getLoopDomain();
  for (size_t i = static_cast<size_t>(tv->getComputeAtPosition());
       i < loop.size(); ++i) {
    if (occupiesBuffer(loop[i], tv->getMemoryType())) {
      size = IrBuilder::mulExpr(size, lower->loopExtent(loop[i]));
    }
  }
  return IrBuilder::create<kir::Allocate>(tv, tv->getMemoryType(), size);
}

// `out = init` in its own loops over the iteration axes right of the first
// reduction axis.
Expr* makeReductionInit(ReductionOp* rop, size_t first_reduction) {
  GpuLower* lower = GpuLower::current();
  auto* out = rop->out()->as<TensorView>();
  // The output is named through an unindexed TensorIndex: the tensor keeps
  // its one definition, and lowerIndices fills in the index.
  Expr* init = IrBuilder::create<LoadStoreOp>(
      LoadStoreOpType::Set, IrBuilder::create<kir::TensorIndex>(out, nullptr),
      rop->init());
  const auto& loop = out->getLoopDomain();
  for (size_t i = loop.size(); i-- > first_reduction + 1;) {
    if (loop[i]->isReduction()) {
      continue;
    }
    Val* extent = lower->loopExtent(loop[i]);
    Val* index = loop[i]->isThread()
                     ? kir::parallelIndex(loop[i]->getParallelType())
                     : IrBuilder::create<Val>(DataType::Index);
    auto* for_loop = IrBuilder::create<kir::ForLoop>(
        loop[i], index, FusionGuard::getCurFusion()->zeroVal(), extent);
    for_loop->body().push_back(init);
    init = for_loop;
  }
  return init;
}

Requests process(std::vector<Expr*>& scope, size_t depth) {
  Requests upward;
  std::vector<Expr*> result;
  for (Expr* expr : scope) {
    Requests here;
    if (auto* loop = dynamic_cast<kir::ForLoop*>(expr)) {
      here = process(loop->body().mutableExprs(), depth + 1);
    } else if (
        auto* tv = expr->outputs().empty()
                       ? nullptr
                       : dynamic_cast<TensorView*>(expr->output(0))) {
      if (tv->getMemoryType() != MemoryType::Global) {
        here[static_cast<size_t>(tv->getComputeAtPosition())].push_back(
            makeAllocation(tv));
      }
      if (auto* rop = dynamic_cast<ReductionOp*>(expr)) {
        const auto& loop = tv->getLoopDomain();
        size_t first = 0;
        while (first < loop.size() && !loop[first]->isReduction()) {
          ++first;
        }
        FUSER_INTERNAL_ASSERT(first < loop.size(), "reduction without loop");
        here[first].push_back(makeReductionInit(rop, first));
      }
    }
    for (auto& [at, exprs] : here) {
      if (at == depth) {
        result.insert(result.end(), exprs.begin(), exprs.end());
      } else {
        FUSER_INTERNAL_ASSERT(at < depth, "allocation below its expr");
        auto& up = upward[at];
        up.insert(up.end(), exprs.begin(), exprs.end());
      }
    }
    result.push_back(expr);
  }
  scope = std::move(result);
  return upward;
}

} // namespace

std::vector<Expr*> insertAllocations(const std::vector<Expr*>& exprs) {
  std::vector<Expr*> top = exprs;
  Requests leftover = process(top, 0);
  FUSER_INTERNAL_ASSERT(leftover.empty(), "allocation above the kernel");
  return top;
}

} // namespace fuser
