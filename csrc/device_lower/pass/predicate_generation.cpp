// Fills in each IfThenElse placed around a tensor expr with the predicate
// of the tensor it writes (doc/design.md §5, doc/indexing.md §5), which
// index lowering computed with the same indexer as the expr's indices.
#include <device_lower/passes.h>

#include <device_lower/kir_visitor.h>
#include <device_lower/lower.h>

namespace fuser {

namespace {

class PredicateFiller : public kir::IrVisitor {
 public:
  explicit PredicateFiller(const GpuLower& lower) : lower_(lower) {}

 protected:
  using kir::IrVisitor::handle;

  void handle(kir::IfThenElse* branch) override {
    if (branch->predicate() == nullptr) {
      FUSER_INTERNAL_ASSERT(
          branch->thenBody().exprs().size() == 1, "one expr per predicate");
      branch->setPredicate(lower_.predicateOf(branch->thenBody().exprs()[0]));
    }
    kir::IrVisitor::handle(branch);
  }

  void handle(kir::ParallelReduction* reduction) override {
    reduction->setPredicate(lower_.predicateOf(reduction));
  }

 private:
  const GpuLower& lower_;
};

} // namespace

std::vector<Expr*> generatePredicates(
    const GpuLower& lower, const std::vector<Expr*>& exprs) {
  PredicateFiller(lower).traverse(exprs);
  return exprs;
}

} // namespace fuser
