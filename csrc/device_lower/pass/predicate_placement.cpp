// Every tensor expr goes inside an IfThenElse whose predicate
// generatePredicates fills in once indices exist (doc/design.md §5).
#include <device_lower/passes.h>

#include <device_lower/kir_visitor.h>
#include <device_lower/lower.h>

namespace fuser {

namespace {

class PredicatePlacer : public kir::ExprMutator {
 protected:
  using kir::ExprMutator::handle;

  void handle(Expr* expr) override {
    // Every thread must reach a reduction across threads: its predicate
    // is an argument instead.
    // So must every thread of a warpgroup reach a matrix product (its
    // tile's validity is part of it).
    if (expr->isA<kir::Allocate>() || expr->isA<kir::BlockSync>() ||
        expr->isA<MmaOp>() ||
        GpuLower::current()->parallelReductions().isParallel(expr)) {
      return;
    }
    auto* branch = IrBuilder::create<kir::IfThenElse>(nullptr);
    branch->thenBody().push_back(expr);
    replaceCurrent({branch});
  }
};

} // namespace

std::vector<Expr*> placePredicates(const std::vector<Expr*>& exprs) {
  return PredicatePlacer().mutate(exprs);
}

} // namespace fuser
