#include <device_lower/analysis/launch_extents.h>

#include <device_lower/kernel_ir.h>

namespace fuser {

namespace {

void collect(
    const std::vector<Expr*>& exprs,
    std::map<ParallelType, std::vector<Val*>>& extents) {
  for (Expr* expr : exprs) {
    if (auto* loop = dynamic_cast<kir::ForLoop*>(expr)) {
      if (loop->isThreadParallel()) {
        auto& list = extents[loop->parallelType()];
        bool seen = false;
        for (Val* e : list) {
          seen |= e->sameAs(loop->stop());
        }
        if (!seen) {
          list.push_back(loop->stop());
        }
      }
      collect(loop->body().exprs(), extents);
    } else if (auto* branch = dynamic_cast<kir::IfThenElse*>(expr)) {
      collect(branch->thenBody().exprs(), extents);
      collect(branch->elseBody().exprs(), extents);
    }
  }
}

} // namespace

std::map<ParallelType, Val*> computeLaunchExtents(
    const std::vector<Expr*>& exprs) {
  std::map<ParallelType, std::vector<Val*>> extents;
  collect(exprs, extents);
  std::map<ParallelType, Val*> result;
  for (auto& [pt, list] : extents) {
    Val* extent = list.front();
    for (size_t i = 1; i < list.size(); ++i) {
      extent = IrBuilder::binaryExpr(BinaryOpType::Max, extent, list[i]);
    }
    result[pt] = extent;
  }
  return result;
}

} // namespace fuser
