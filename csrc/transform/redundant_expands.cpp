#include <transform/redundant_expands.h>

#include <ir/all_nodes.h>

#include <vector>

namespace fuser {

namespace {

// Whether `use`, reading `expanded` (an ExpandOp's output), has another
// tensor operand of the same rank with an Iteration axis wherever the
// expand made one from a broadcast.
bool expandedAxesJoinedElsewhere(
    Expr* use, TensorView* expanded, TensorView* source) {
  if (!use->isA<BinaryOp>() && !use->isA<TernaryOp>()) {
    return false;
  }
  const auto out_ids = TensorDomain::noReductions(expanded->getLogicalDomain());
  const auto in_ids = TensorDomain::noReductions(source->getLogicalDomain());
  for (size_t axis = 0; axis < out_ids.size(); ++axis) {
    if (!in_ids[axis]->isBroadcast() || out_ids[axis]->isBroadcast()) {
      continue; // not expanded here
    }
    bool joined = false;
    for (Val* in : use->inputs()) {
      auto* other = dynamic_cast<TensorView*>(in);
      if (other == nullptr || other == expanded) {
        continue;
      }
      const auto ids = TensorDomain::noReductions(other->getLogicalDomain());
      joined |= ids.size() == out_ids.size() && !ids[axis]->isBroadcast();
    }
    if (!joined) {
      return false;
    }
  }
  return true;
}

} // namespace

int64_t bypassRedundantExpands(Fusion* fusion) {
  int64_t changed = 0;
  for (Expr* expr : fusion->exprs()) {
    auto* expand = dynamic_cast<ExpandOp*>(expr);
    if (expand == nullptr) {
      continue;
    }
    auto* expanded = expand->out()->as<TensorView>();
    auto* source = expand->in()->as<TensorView>();
    // A copy: replaceInput edits the uses.
    const std::vector<Expr*> uses = expanded->uses();
    for (Expr* use : uses) {
      if (expandedAxesJoinedElsewhere(use, expanded, source)) {
        fusion->replaceInput(use, expanded, source);
        ++changed;
      }
    }
  }
  return changed;
}

} // namespace fuser
