// Buffers for tensors that are not in global memory, and reduction
// initializations (doc/design.md §5). A tensor inlined at position k is
// computed inside the loops of its first k loop axes, so its buffer only
// spans the axes right of k and is declared at depth k. Thread-parallel
// axes take no room in a register buffer (each thread has its own),
// block-parallel axes none in shared memory.
#include <device_lower/passes.h>

#include <device_lower/kir_visitor.h>
#include <device_lower/lower.h>
#include <layout/buffer_axes.h>

namespace fuser {

namespace {

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

class AllocationInserter : public kir::ExprMutator {
 protected:
  using kir::ExprMutator::handle;

  void handle(Expr* expr) override {
    auto* tv = expr->outputs().empty()
                   ? nullptr
                   : dynamic_cast<TensorView*>(expr->output(0));
    if (tv == nullptr) {
      return;
    }
    if (tv->getMemoryType() != MemoryType::Global) {
      insertBefore(
          static_cast<size_t>(tv->getComputeAtPosition()), makeAllocation(tv));
    }
    if (auto* rop = dynamic_cast<ReductionOp*>(expr)) {
      const auto& loop = tv->getLoopDomain();
      size_t first = 0;
      while (first < loop.size() && !loop[first]->isReduction()) {
        ++first;
      }
      FUSER_INTERNAL_ASSERT(first < loop.size(), "reduction without loop");
      insertBefore(first, makeReductionInit(rop, first));
    }
  }
};

} // namespace

std::vector<Expr*> insertAllocations(const std::vector<Expr*>& exprs) {
  return AllocationInserter().mutate(exprs);
}

} // namespace fuser
