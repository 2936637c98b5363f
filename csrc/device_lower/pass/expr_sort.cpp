// Tensor exprs in execution order. Every producer precedes its consumers,
// and the producers inlined into an expr (compute-at position > 0, so they
// share its outer loops) sit right before it: generateLoopNests can only
// share a loop with the exprs directly before it, so an expr computed in a
// nest of its own (a producer that is not inlined) must come before the
// whole group of exprs that share loops, not in the middle of it, and
// within the group shallower exprs come first. Scalar exprs are not
// scheduled: codegen prints scalars inline.
#include <device_lower/passes.h>

#include <ir/all_nodes.h>

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace fuser {

namespace {

bool writesTensor(Expr* expr) {
  for (Val* out : expr->outputs()) {
    if (out->isA<TensorView>()) {
      return true;
    }
  }
  return false;
}

// How many of its consumers' loops `expr`'s output is computed in (0 for
// a tensor nothing reads, whatever its compute-at position says).
int64_t computeAt(Expr* expr) {
  int64_t pos = 0;
  for (Val* out : expr->outputs()) {
    auto* tv = dynamic_cast<TensorView*>(out);
    if (tv != nullptr && !tv->uses().empty()) {
      pos = std::max(pos, tv->getComputeAtPosition());
    }
  }
  return pos;
}

// Whether `expr`'s output is computed inside its consumers' loops.
bool isInlined(Expr* expr) {
  return computeAt(expr) > 0;
}

} // namespace

std::vector<Expr*> sortExprsForInlining(const std::vector<Expr*>& exprs) {
  // `exprs` is topologically ordered (Fusion::exprs() is a post-order walk
  // from the outputs).
  std::vector<Expr*> tensor_exprs;
  std::unordered_set<Expr*> is_tensor_expr;
  for (Expr* expr : exprs) {
    if (writesTensor(expr)) {
      tensor_exprs.push_back(expr);
      is_tensor_expr.insert(expr);
    }
  }
  auto producers = [&](Expr* expr) {
    std::vector<Expr*> result;
    for (Val* in : expr->inputs()) {
      Expr* def = in->isA<TensorView>() ? in->definition() : nullptr;
      if (def != nullptr && is_tensor_expr.count(def)) {
        result.push_back(def);
      }
    }
    return result;
  };

  std::vector<Expr*> sorted;
  std::unordered_set<Expr*> emitted;
  // Emits `root` with the producers inlined into it (transitively), after
  // everything they read from other loop nests.
  std::function<void(Expr*)> emit_group = [&](Expr* root) {
    if (emitted.count(root)) {
      return;
    }
    std::vector<Expr*> group; // post-order: producers first
    std::unordered_set<Expr*> in_group;
    std::function<void(Expr*)> collect = [&](Expr* expr) {
      if (!in_group.insert(expr).second) {
        return;
      }
      for (Expr* producer : producers(expr)) {
        if (!emitted.count(producer) && isInlined(producer)) {
          collect(producer);
        }
      }
      group.push_back(expr);
    };
    collect(root);
    for (Expr* expr : group) {
      for (Expr* producer : producers(expr)) {
        if (!in_group.count(producer)) {
          emit_group(producer);
        }
      }
    }
    // The group in a topological order that opens shallow loops first: of
    // the exprs whose producers are out, the one with the smallest
    // compute-at position goes next (ties: post-order). An expr inlined at
    // k shares k loops; one that shares fewer placed after it would close
    // its inner loops before their consumer runs in them.
    std::vector<bool> placed(group.size(), false);
    for (size_t n = 0; n < group.size(); ++n) {
      size_t best = group.size();
      for (size_t i = 0; i < group.size(); ++i) {
        if (placed[i]) {
          continue;
        }
        bool ready = true;
        for (Expr* producer : producers(group[i])) {
          ready &= !in_group.count(producer) || emitted.count(producer);
        }
        if (ready && (best == group.size() ||
                      computeAt(group[i]) < computeAt(group[best]))) {
          best = i;
        }
      }
      FUSER_INTERNAL_ASSERT(best < group.size(), "cycle among tensor exprs");
      placed[best] = true;
      if (emitted.insert(group[best]).second) {
        sorted.push_back(group[best]);
      }
    }
  };
  // Each expr that is not inlined roots a loop nest of its own.
  for (Expr* expr : tensor_exprs) {
    if (!isInlined(expr)) {
      emit_group(expr);
    }
  }
  for (Expr* expr : tensor_exprs) {
    emit_group(expr);
  }
  return sorted;
}

} // namespace fuser
