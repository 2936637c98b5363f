// Warp specialization of a kernel with a matrix product (doc/matmul.md
// §3): one warpgroup (threadIdx.y == the consumers' count) only copies the
// operands' tiles; the others multiply them and run everything else. The
// producer walks the same tile loops as the consumers, so both meet the
// same tiles in the same order: its code is the chain of loops around the
// product with the product's copies in them.
#include <device_lower/passes.h>

#include <device_lower/kir_mma.h>
#include <device_lower/lower.h>

namespace fuser {

namespace {

// The loops around the first MmaTile in `exprs` (outermost first) and the
// tile; null when there is none.
kir::MmaTile* findTile(
    const std::vector<Expr*>& exprs, std::vector<kir::ForLoop*>& loops) {
  for (Expr* expr : exprs) {
    if (auto* tile = dynamic_cast<kir::MmaTile*>(expr)) {
      return tile;
    }
    if (auto* loop = dynamic_cast<kir::ForLoop*>(expr)) {
      loops.push_back(loop);
      if (kir::MmaTile* tile = findTile(loop->body().exprs(), loops)) {
        return tile;
      }
      loops.pop_back();
    }
  }
  return nullptr;
}

} // namespace

std::vector<Expr*> specializeWarps(
    const LoweredKernel& kernel, const std::vector<Expr*>& exprs) {
  if (!kernel.mma.has_value()) {
    return exprs;
  }
  std::vector<kir::ForLoop*> loops;
  kir::MmaTile* tile = findTile(exprs, loops);
  FUSER_INTERNAL_ASSERT(tile != nullptr, "no matrix product in the kernel IR");
  Expr* producer = tile->withRole(kir::MmaTile::Role::Load);
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    kir::ForLoop* loop = *it;
    auto* copy = IrBuilder::create<kir::ForLoop>(
        loop->iterDomain(), loop->parallelType(), loop->index(), loop->start(),
        loop->stop());
    copy->body().push_back(producer);
    producer = copy;
  }
  const int64_t consumers = kernel.mma->consumers;
  Val* is_producer = IrBuilder::binaryExpr(
      BinaryOpType::Eq, kir::parallelIndex(ParallelType::TIDy),
      IrBuilder::create<Val>(consumers, DataType::Index));
  auto* roles = IrBuilder::create<kir::IfThenElse>(is_producer);
  roles->thenBody().push_back(IrBuilder::create<kir::MmaRoleStart>(true));
  roles->thenBody().push_back(producer);
  roles->elseBody().push_back(IrBuilder::create<kir::MmaRoleStart>(false));
  for (Expr* expr : exprs) {
    roles->elseBody().push_back(expr);
  }
  return {
      IrBuilder::create<kir::MmaPipelineInit>(),
      IrBuilder::create<kir::BlockSync>(), roles};
}

} // namespace fuser
