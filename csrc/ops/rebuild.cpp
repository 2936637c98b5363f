#include <ops/rebuild.h>

#include <ir/all_nodes.h>
#include <ops/alias.h>
#include <ops/arith.h>

namespace fuser {

Val* rebuildPointwise(Expr* expr, const std::vector<Val*>& inputs) {
  if (auto* uop = dynamic_cast<UnaryOp*>(expr)) {
    if (uop->opType() == UnaryOpType::Cast) {
      return castOp(uop->out()->dtype(), inputs[0]);
    }
    return unaryOp(uop->opType(), inputs[0]);
  }
  if (auto* bop = dynamic_cast<BinaryOp*>(expr)) {
    return binaryOp(bop->opType(), inputs[0], inputs[1]);
  }
  if (auto* top = dynamic_cast<TernaryOp*>(expr)) {
    if (top->opType() == TernaryOpType::Where) {
      return where(inputs[0], inputs[1], inputs[2]);
    }
    return nullptr;
  }
  if (auto* bcast = dynamic_cast<BroadcastOp*>(expr)) {
    return broadcast(
        inputs[0]->as<TensorView>(), bcast->getBroadcastDimFlags());
  }
  if (auto* ldst = dynamic_cast<LoadStoreOp*>(expr)) {
    if (ldst->opType() == LoadStoreOpType::Set &&
        inputs[0]->isA<TensorView>()) {
      return set(inputs[0]->as<TensorView>());
    }
  }
  return nullptr;
}

} // namespace fuser
