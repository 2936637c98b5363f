// Fills in each IfThenElse placed around a tensor expr with the predicate
// of the tensor it writes (DESIGN §5, doc/indexing.md §5).
#include <device_lower/passes.h>

#include <device_lower/analysis/vectorization.h>
#include <device_lower/index/indexer.h>
#include <device_lower/lower.h>

namespace fuser {

namespace {

void fill(std::vector<Expr*>& scope, std::vector<kir::ForLoop*>& loops) {
  for (Expr* expr : scope) {
    if (auto* loop = dynamic_cast<kir::ForLoop*>(expr)) {
      loops.push_back(loop);
      fill(loop->body().mutableExprs(), loops);
      loops.pop_back();
      continue;
    }
    auto* branch = dynamic_cast<kir::IfThenElse*>(expr);
    if (branch == nullptr || branch->predicate() != nullptr) {
      continue;
    }
    FUSER_INTERNAL_ASSERT(
        branch->thenBody().exprs().size() == 1, "one expr per predicate");
    Expr* guarded = branch->thenBody().exprs()[0];
    auto* out = guarded->output(0)->as<kir::TensorIndex>();
    const bool vectorized =
        !loops.empty() && isVectorizedCopyLoop(loops.back());
    Indexer indexer(loops, vectorized);
    // An initialization (a constant copied in) runs outside the reduction
    // loops.
    const bool is_init = guarded->isA<LoadStoreOp>() &&
                         !guarded->input(0)->isA<kir::TensorIndex>() &&
                         out->view()->hasReduction();
    branch->setPredicate(indexer.predicate(out->view(), !is_init));
  }
}

} // namespace

std::vector<Expr*> generatePredicates(const std::vector<Expr*>& exprs) {
  std::vector<Expr*> result = exprs;
  std::vector<kir::ForLoop*> loops;
  fill(result, loops);
  return result;
}

} // namespace fuser
