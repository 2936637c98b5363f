#include <transform/redundant_expands.h>

#include <ir/all_nodes.h>

#include <vector>

namespace fuser {

namespace {

// Whether `use`, reading `expand`'s output, has another
// tensor operand of the same rank with an Iteration axis wherever the
// expand made one from a broadcast.
bool expandedAxesJoinedElsewhere(Expr* use, const ExpandOp* expand) {
  if (!use->isA<BinaryOp>() && !use->isA<TernaryOp>()) {
    return false;
  }
  auto* expanded = expand->out()->as<TensorView>();
  const auto out_ids = TensorDomain::noReductions(expanded->getLogicalDomain());
  for (const int64_t axis : expand->expandedAxes()) {
    bool joined = false;
    for (Val* in : use->inputs()) {
      auto* other = dynamic_cast<TensorView*>(in);
      if (other == nullptr || other == expanded) {
        continue;
      }
      const auto ids = TensorDomain::noReductions(other->getLogicalDomain());
      joined |= ids.size() == out_ids.size() &&
                !ids[static_cast<size_t>(axis)]->isBroadcast();
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
    Val* expanded = expand->out();
    // A copy: replaceInput edits the uses.
    const std::vector<Expr*> uses = expanded->uses();
    for (Expr* use : uses) {
      if (expandedAxesJoinedElsewhere(use, expand)) {
        fusion->replaceInput(use, expanded, expand->in());
        ++changed;
      }
    }
  }
  return changed;
}

} // namespace fuser
