// Removes branches whose predicate is always true (their body takes their
// place) and loops and branches left empty.
#include <device_lower/passes.h>

#include <device_lower/kir_visitor.h>

namespace fuser {

namespace {

class Cleaner : public kir::ExprMutator {
 protected:
  using kir::ExprMutator::handle;

  void handle(kir::ForLoop* loop) override {
    kir::ExprMutator::handle(loop);
    if (loop->body().empty()) {
      replaceCurrent({});
    }
  }

  void handle(kir::IfThenElse* branch) override {
    kir::ExprMutator::handle(branch);
    Val* predicate = branch->predicate();
    if (predicate != nullptr && predicate->isConst() &&
        predicate->value().asBool()) {
      replaceCurrent(branch->thenBody().exprs());
    } else if (branch->thenBody().empty() && branch->elseBody().empty()) {
      replaceCurrent({});
    }
  }
};

} // namespace

std::vector<Expr*> cleanUpKernel(const std::vector<Expr*>& exprs) {
  return Cleaner().mutate(exprs);
}

} // namespace fuser
