#include <device_lower/kir_visitor.h>

namespace fuser::kir {

void IrVisitor::traverse(const std::vector<Expr*>& exprs) {
  // A copy: a visitor may change a scope it is walking.
  const std::vector<Expr*> copy = exprs;
  for (Expr* expr : copy) {
    dispatch(expr);
  }
}

void IrVisitor::dispatch(Expr* expr) {
  if (auto* loop = dynamic_cast<ForLoop*>(expr)) {
    handle(loop);
  } else if (auto* branch = dynamic_cast<IfThenElse*>(expr)) {
    handle(branch);
  } else if (auto* reduction = dynamic_cast<ParallelReduction*>(expr)) {
    handle(reduction);
  } else {
    handle(expr);
  }
}

void IrVisitor::handle(ForLoop* loop) {
  for_loops_.push_back(loop);
  traverse(loop->body().exprs());
  for_loops_.pop_back();
}

void IrVisitor::handle(IfThenElse* branch) {
  traverse(branch->thenBody().exprs());
  traverse(branch->elseBody().exprs());
}

void IrVisitor::handle(ParallelReduction* reduction) {
  handle(static_cast<Expr*>(reduction));
}

void IrVisitor::handle(Expr*) {}

std::vector<Expr*> ExprMutator::mutate(const std::vector<Expr*>& exprs) {
  std::vector<Expr*> top = exprs;
  mutateScope(top);
  return top;
}

void ExprMutator::mutateScope(std::vector<Expr*>& scope) {
  frames_.emplace_back();
  const size_t frame = frames_.size() - 1;
  const std::vector<Expr*> original = scope;
  for (Expr* expr : original) {
    frames_[frame].replaced = false;
    frames_[frame].replacement.clear();
    dispatch(expr);
    Frame& f = frames_[frame];
    f.result.insert(f.result.end(), f.pending.begin(), f.pending.end());
    f.pending.clear();
    if (f.replaced) {
      f.result.insert(
          f.result.end(), f.replacement.begin(), f.replacement.end());
    } else {
      f.result.push_back(expr);
    }
  }
  scope = std::move(frames_[frame].result);
  frames_.pop_back();
}

void ExprMutator::handle(ForLoop* loop) {
  loop_frames_.push_back(frames_.size() - 1);
  for_loops_.push_back(loop);
  mutateScope(loop->body().mutableExprs());
  for_loops_.pop_back();
  loop_frames_.pop_back();
}

void ExprMutator::handle(IfThenElse* branch) {
  mutateScope(branch->thenBody().mutableExprs());
  mutateScope(branch->elseBody().mutableExprs());
}

void ExprMutator::replaceCurrent(std::vector<Expr*> replacement) {
  Frame& f = frames_.back();
  f.replaced = true;
  f.replacement = std::move(replacement);
}

void ExprMutator::insertBefore(size_t depth, Expr* expr) {
  FUSER_INTERNAL_ASSERT(
      depth <= loop_frames_.size(), "inserting below the current expr");
  const size_t frame =
      depth == loop_frames_.size() ? frames_.size() - 1 : loop_frames_[depth];
  frames_[frame].pending.push_back(expr);
}

} // namespace fuser::kir
