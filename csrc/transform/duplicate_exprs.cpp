#include <transform/duplicate_exprs.h>

#include <ir/all_nodes.h>
#include <ops/rebuild.h>

#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace fuser {

namespace {

// What `expr` computes, as a key equal for exprs that compute the same
// values: its op and attributes, its output's dtype and its inputs.
std::optional<std::string> whatItComputes(const Expr* expr) {
  auto* out = dynamic_cast<const TensorView*>(expr->output(0));
  if (out == nullptr || expr->outputs().size() != 1 ||
      !canRebuildPointwise(expr)) {
    return std::nullopt;
  }
  std::stringstream key;
  key << expr->getOpString() << ':' << out->dtype();
  if (auto* uop = dynamic_cast<const UnaryOp*>(expr)) {
    key << ':' << toString(uop->opType());
  } else if (auto* bop = dynamic_cast<const BinaryOp*>(expr)) {
    key << ':' << toString(bop->opType());
  } else if (auto* bcast = dynamic_cast<const BroadcastOp*>(expr)) {
    for (bool flag : bcast->getBroadcastDimFlags()) {
      key << (flag ? 'b' : 'i');
    }
  }
  for (const Val* in : expr->inputs()) {
    if (in->isConst()) {
      key << "|c:" << in->dtype() << ':' << in->toString();
    } else {
      key << "|v:" << static_cast<const void*>(in);
    }
  }
  return key.str();
}

} // namespace

int64_t mergeDuplicateExprs(Fusion* fusion) {
  FusionGuard fg(fusion);
  std::unordered_map<std::string, Val*> first;
  int64_t merged = 0;
  // Topological: a merge rewires the readers before they are keyed, so a
  // chain's copies merge link by link.
  for (Expr* expr : fusion->exprs()) {
    const std::optional<std::string> key = whatItComputes(expr);
    if (!key.has_value()) {
      continue;
    }
    auto* out = expr->output(0)->as<TensorView>();
    auto [it, inserted] = first.emplace(*key, out);
    if (inserted || out->isFusionOutput() || out->hasAllocation()) {
      continue;
    }
    for (Expr* use : std::vector<Expr*>(out->uses())) {
      fusion->replaceInput(use, out, it->second);
    }
    fusion->removeExpr(expr);
    ++merged;
  }
  return merged;
}

} // namespace fuser
