// Removes branches whose predicate is always true (their body takes their
// place) and loops left empty.
#include <device_lower/passes.h>

#include <device_lower/kernel_ir.h>

namespace fuser {

namespace {

std::vector<Expr*> clean(const std::vector<Expr*>& scope) {
  std::vector<Expr*> result;
  for (Expr* expr : scope) {
    if (auto* loop = dynamic_cast<kir::ForLoop*>(expr)) {
      loop->body().mutableExprs() = clean(loop->body().exprs());
      if (!loop->body().empty()) {
        result.push_back(loop);
      }
      continue;
    }
    if (auto* branch = dynamic_cast<kir::IfThenElse*>(expr)) {
      branch->thenBody().mutableExprs() = clean(branch->thenBody().exprs());
      branch->elseBody().mutableExprs() = clean(branch->elseBody().exprs());
      Val* predicate = branch->predicate();
      if (predicate != nullptr && predicate->isConst() &&
          predicate->value().asBool()) {
        const auto& body = branch->thenBody().exprs();
        result.insert(result.end(), body.begin(), body.end());
        continue;
      }
      if (!branch->thenBody().empty() || !branch->elseBody().empty()) {
        result.push_back(branch);
      }
      continue;
    }
    result.push_back(expr);
  }
  return result;
}

} // namespace

std::vector<Expr*> cleanUpKernel(const std::vector<Expr*>& exprs) {
  return clean(exprs);
}

} // namespace fuser
