#include <segmentation/input_views.h>

#include <ir/all_nodes.h>
#include <ops/alias.h>
#include <segmentation/segmented_fusion.h>

#include <algorithm>
#include <unordered_set>

namespace fuser {

bool isViewOp(const Expr* expr) {
  if (auto* resize = dynamic_cast<const ResizeOp*>(expr)) {
    return resize->opType() == ResizeOpType::Slice;
  }
  // A plain set is a copy the user asked for; a permute is a view.
  return permutationOf(expr).has_value() || expr->isA<ViewOp>() ||
         expr->isA<BroadcastOp>() || expr->isA<ExpandOp>();
}

namespace {

bool hasOwnLayout(const Val* out) {
  auto* tv = dynamic_cast<const TensorView*>(out);
  return tv != nullptr && tv->hasAllocation();
}

} // namespace

std::vector<Expr*> returnedInputViews(const std::vector<Expr*>& tensor_exprs) {
  const std::unordered_set<const Expr*> live(
      tensor_exprs.begin(), tensor_exprs.end());
  // Forward: the tensors that view an input.
  std::unordered_set<const Val*> views;
  std::unordered_set<const Expr*> viewing;
  for (Expr* expr : tensor_exprs) {
    if (!isViewOp(expr)) {
      continue;
    }
    Val* in = expr->input(0);
    if (in->isFusionInput() || views.count(in)) {
      viewing.insert(expr);
      views.insert(expr->output(0));
    }
  }
  // Backward: those read only by returned views, or returned themselves.
  std::unordered_set<const Expr*> returned;
  for (auto it = tensor_exprs.rbegin(); it != tensor_exprs.rend(); ++it) {
    Expr* expr = *it;
    if (!viewing.count(expr)) {
      continue;
    }
    Val* out = expr->output(0);
    bool read = out->isFusionOutput();
    bool read_by_other = out->isFusionOutput() && hasOwnLayout(out);
    for (Expr* use : out->uses()) {
      if (live.count(use)) {
        read = true;
        read_by_other |= !returned.count(use);
      }
    }
    if (read && !read_by_other) {
      returned.insert(expr);
    }
  }
  std::vector<Expr*> result;
  std::copy_if(
      tensor_exprs.begin(), tensor_exprs.end(), std::back_inserter(result),
      [&](Expr* expr) { return returned.count(expr) > 0; });
  return result;
}

bool onlyViews(
    const std::vector<Expr*>& exprs, const std::vector<Val*>& outputs) {
  bool any = false;
  for (const Expr* expr : exprs) {
    if (writesTensor(expr)) {
      if (!isViewOp(expr)) {
        return false;
      }
      any = true;
    }
  }
  return any && std::none_of(outputs.begin(), outputs.end(), hasOwnLayout);
}

} // namespace fuser
