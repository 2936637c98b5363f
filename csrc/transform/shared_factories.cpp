#include <transform/shared_factories.h>

#include <ir/all_nodes.h>
#include <ops/all_ops.h>

#include <vector>

namespace fuser {

namespace {

// A new tensor computed as `factory` computes its output.
TensorView* copyOf(Expr* factory) {
  auto* out = factory->output(0)->as<TensorView>();
  if (auto* iota_op = dynamic_cast<IotaOp*>(factory)) {
    return iota(
        iota_op->length(), iota_op->start(), iota_op->step(), out->dtype());
  }
  auto* full_op = factory->as<FullOp>();
  std::vector<Val*> shape;
  for (IterDomain* id : out->getLogicalDomain()) {
    shape.push_back(id->extent());
  }
  return full(shape, full_op->fillValue(), out->dtype());
}

} // namespace

int64_t copySharedFactories(Fusion* fusion) {
  FusionGuard fg(fusion);
  int64_t changed = 0;
  for (Expr* expr : fusion->exprs()) {
    if (!expr->isA<IotaOp>() && !expr->isA<FullOp>()) {
      continue;
    }
    auto* out = expr->output(0)->as<TensorView>();
    const std::vector<Expr*> uses = out->uses();
    for (size_t i = 1; i < uses.size(); ++i) {
      fusion->replaceInput(uses[i], out, copyOf(expr));
      ++changed;
    }
  }
  return changed;
}

} // namespace fuser
