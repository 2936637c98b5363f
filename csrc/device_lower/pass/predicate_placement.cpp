// Every tensor expr goes inside an IfThenElse whose predicate
// generatePredicates fills in once indices exist (DESIGN §5).
#include <device_lower/passes.h>

#include <device_lower/kernel_ir.h>

namespace fuser {

namespace {

void wrap(std::vector<Expr*>& scope) {
  for (Expr*& expr : scope) {
    if (auto* loop = dynamic_cast<kir::ForLoop*>(expr)) {
      wrap(loop->body().mutableExprs());
      continue;
    }
    if (expr->isA<kir::Allocate>() || expr->isA<kir::BlockSync>() ||
        expr->isA<kir::IfThenElse>()) {
      continue;
    }
    auto* branch = IrBuilder::create<kir::IfThenElse>(nullptr);
    branch->thenBody().push_back(expr);
    expr = branch;
  }
}

} // namespace

std::vector<Expr*> placePredicates(const std::vector<Expr*>& exprs) {
  std::vector<Expr*> result = exprs;
  wrap(result);
  return result;
}

} // namespace fuser
