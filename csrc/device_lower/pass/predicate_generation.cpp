// Fills in each IfThenElse placed around a tensor expr with the predicate
// of the tensor it writes (doc/design.md §5, doc/indexing.md §5), which
// index lowering computed with the same indexer as the expr's indices.
#include <device_lower/passes.h>

#include <device_lower/kir_visitor.h>
#include <device_lower/lower.h>

namespace fuser {

namespace {

class PredicateFiller : public kir::IrVisitor {
 protected:
  using kir::IrVisitor::handle;

  void handle(kir::IfThenElse* branch) override {
    if (branch->predicate() == nullptr) {
      FUSER_INTERNAL_ASSERT(
          branch->thenBody().exprs().size() == 1, "one expr per predicate");
      branch->setPredicate(
          GpuLower::current()->predicateOf(branch->thenBody().exprs()[0]));
    }
    kir::IrVisitor::handle(branch);
  }

  void handle(kir::ParallelReduction* reduction) override {
    reduction->setPredicate(GpuLower::current()->predicateOf(reduction));
  }
};

} // namespace

std::vector<Expr*> generatePredicates(const std::vector<Expr*>& exprs) {
  PredicateFiller().traverse(exprs);
  return exprs;
}

} // namespace fuser
