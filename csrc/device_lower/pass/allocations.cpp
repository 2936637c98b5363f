// Buffers for tensors that are not in global memory, and reduction
// initializations (doc/design.md §5). A tensor inlined at position k is
// computed inside the loops of its first k loop axes, so its buffer only
// spans the axes right of k and is declared at depth k (a shared one also
// its thread-parallel axes, device_lower/analysis/buffer_shape.h).
#include <device_lower/passes.h>

#include <device_lower/analysis/buffer_shape.h>
#include <device_lower/kir_visitor.h>
#include <device_lower/lower.h>

namespace fuser {

namespace {

// A shared buffer takes the next 16-byte-aligned part of the kernel's
// dynamic shared memory (its axes are constant, buffer_shape.h).
void placeSharedBuffer(
    LoweredKernel& kernel, TensorView* tv,
    const std::vector<BufferAxis>& shape) {
  if (kernel.shared_buffer_offsets.count(tv->name()) != 0) {
    return;
  }
  int64_t bytes = dataTypeSize(tv->dtype());
  for (const BufferAxis& axis : shape) {
    FUSER_INTERNAL_ASSERT(
        axis.extent->isConstInt(), "the shared buffer of ", tv->toString(),
        " has an axis of no constant extent: ", axis.id->toString());
    bytes *= axis.extent->constIntValue();
  }
  kernel.shared_buffer_offsets[tv->name()] = kernel.shared_buffer_bytes;
  kernel.shared_buffer_bytes += (bytes + 15) / 16 * 16;
}

kir::Allocate* makeAllocation(GpuLower& lower, TensorView* tv) {
  Val* size = FusionGuard::getCurFusion()->oneVal();
  const std::vector<BufferAxis> shape = bufferShape(lower, tv);
  for (const BufferAxis& axis : shape) {
    size = IrBuilder::mulExpr(size, axis.extent);
  }
  if (tv->getMemoryType() == MemoryType::Shared) {
    placeSharedBuffer(lower.kernel(), tv, shape);
  }
  return IrBuilder::create<kir::Allocate>(tv, tv->getMemoryType(), size);
}

// `out = init` in its own loops over the iteration axes right of the first
// reduction axis.
Expr* makeReductionInit(
    GpuLower& lower, ReductionOp* rop, size_t first_reduction) {
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
    Val* extent = lower.loopExtent(loop[i]);
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
 public:
  explicit AllocationInserter(GpuLower& lower) : lower_(lower) {}

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
          static_cast<size_t>(tv->getComputeAtPosition()),
          makeAllocation(lower_, tv));
    }
    if (auto* rop = dynamic_cast<ReductionOp*>(expr)) {
      const auto& loop = tv->getLoopDomain();
      size_t first = 0;
      while (first < loop.size() && !loop[first]->isReduction()) {
        ++first;
      }
      FUSER_INTERNAL_ASSERT(first < loop.size(), "reduction without loop");
      insertBefore(first, makeReductionInit(lower_, rop, first));
    }
  }

 private:
  GpuLower& lower_;
};

} // namespace

std::vector<Expr*> insertAllocations(
    GpuLower& lower, const std::vector<Expr*>& exprs) {
  return AllocationInserter(lower).mutate(exprs);
}

} // namespace fuser
