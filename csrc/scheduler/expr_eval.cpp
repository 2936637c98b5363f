#include <scheduler/expr_eval.h>

#include <base/options.h>
#include <ir/all_nodes.h>

namespace fuser {

bool ExprEvalScheduler::canScheduleCompileTime(
    Fusion* fusion, std::string* reason) {
  if (!isDisabled(DisableOption::MatmulExprEval)) {
    return true;
  }
  for (Expr* expr : fusion->exprs()) {
    if (expr->isA<MmaOp>()) {
      *reason =
          "matrix products are not evaluated with ATen under the option "
          "matmul_expr_eval (disabled)";
      return false;
    }
  }
  return true;
}

} // namespace fuser
