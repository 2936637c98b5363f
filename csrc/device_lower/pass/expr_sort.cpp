// Tensor exprs in execution order. Fusion::exprs() is a post-order walk
// from the outputs, so every producer precedes its consumers and a producer
// that feeds one consumer sits right before it, which lets inlined exprs
// share loops. Scalar exprs are not scheduled: codegen prints scalars inline.
#include <device_lower/passes.h>

#include <ir/all_nodes.h>

namespace fuser {

std::vector<Expr*> sortExprsForInlining(const std::vector<Expr*>& exprs) {
  std::vector<Expr*> sorted;
  for (Expr* expr : exprs) {
    bool writes_tensor = false;
    for (Val* out : expr->outputs()) {
      writes_tensor |= out->isA<TensorView>();
    }
    if (writes_tensor) {
      sorted.push_back(expr);
    }
  }
  return sorted;
}

} // namespace fuser
