#include <transform/input_forwarding.h>

#include <ir/all_nodes.h>
#include <ops/arith.h>

#include <unordered_set>
#include <vector>

namespace fuser {

namespace {

// A new chain computing what `tv` computes from its fusion input.
Val* copyOfChain(TensorView* tv) {
  auto* uop = tv->definition()->as<UnaryOp>();
  Val* in = uop->in();
  if (!in->isFusionInput()) {
    in = copyOfChain(in->as<TensorView>());
  }
  return uop->opType() == UnaryOpType::Cast ? castOp(tv->dtype(), in)
                                            : unaryOp(uop->opType(), in);
}

} // namespace

int64_t forwardUnaryChainsFromInputs(Fusion* fusion) {
  FusionGuard fg(fusion);
  // Tensors computed from a fusion input by UnaryOps alone.
  std::unordered_set<Val*> forwardable;
  std::vector<TensorView*> order;
  for (Expr* expr : fusion->exprs()) {
    auto* uop = dynamic_cast<UnaryOp*>(expr);
    if (uop == nullptr || !uop->out()->isA<TensorView>() ||
        !uop->in()->isA<TensorView>()) {
      continue;
    }
    if (uop->in()->isFusionInput() || forwardable.count(uop->in())) {
      forwardable.insert(uop->out());
      order.push_back(uop->out()->as<TensorView>());
    }
  }
  int64_t copies = 0;
  for (TensorView* tv : order) {
    // A layout the user gave an intermediate is one to write it in.
    if (tv->isFusionOutput() || tv->hasAllocation() || tv->uses().size() < 2) {
      continue;
    }
    // A copy: replaceInput edits the uses.
    const std::vector<Expr*> uses = tv->uses();
    for (size_t i = 1; i < uses.size(); ++i) {
      fusion->replaceInput(uses[i], tv, copyOfChain(tv));
      ++copies;
    }
  }
  return copies;
}

} // namespace fuser
