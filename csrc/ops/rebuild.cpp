#include <ops/rebuild.h>

#include <ir/all_nodes.h>
#include <ops/alias.h>
#include <ops/arith.h>

namespace fuser {

bool canRebuildPointwise(const Expr* expr) {
  if (auto* top = dynamic_cast<const TernaryOp*>(expr)) {
    return top->opType() == TernaryOpType::Where;
  }
  if (auto* ldst = dynamic_cast<const LoadStoreOp*>(expr)) {
    // A plain copy; a permute (a root domain) is not set() again.
    auto* out = dynamic_cast<TensorView*>(ldst->out());
    return ldst->opType() == LoadStoreOpType::Set && out != nullptr &&
           ldst->in()->isA<TensorView>() && !out->hasRoot();
  }
  return expr->isA<UnaryOp>() || expr->isA<BinaryOp>() ||
         expr->isA<BroadcastOp>();
}

Val* rebuildPointwise(Expr* expr, const std::vector<Val*>& inputs) {
  if (!canRebuildPointwise(expr)) {
    return nullptr;
  }
  if (auto* uop = dynamic_cast<UnaryOp*>(expr)) {
    if (uop->opType() == UnaryOpType::Cast) {
      return castOp(uop->out()->dtype(), inputs[0]);
    }
    return unaryOp(uop->opType(), inputs[0]);
  }
  if (auto* bop = dynamic_cast<BinaryOp*>(expr)) {
    return binaryOp(bop->opType(), inputs[0], inputs[1]);
  }
  if (expr->isA<TernaryOp>()) {
    return where(inputs[0], inputs[1], inputs[2]);
  }
  if (auto* bcast = dynamic_cast<BroadcastOp*>(expr)) {
    return broadcast(
        inputs[0]->as<TensorView>(), bcast->getBroadcastDimFlags());
  }
  return set(inputs[0]->as<TensorView>());
}

} // namespace fuser
