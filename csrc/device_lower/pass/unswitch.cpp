// Unswitches unrolled loop nests: one test for the whole nest picks a copy
// without per-element predicates, when every element is in bounds, or the
// predicated nest (doc/indexing.md §6).
#include <device_lower/passes.h>

#include <device_lower/kir_mma.h>
#include <device_lower/kir_visitor.h>
#include <device_lower/lower.h>
#include <expr/simplifier.h>
#include <ir/all_nodes.h>

#include <algorithm>
#include <unordered_map>

namespace fuser {

namespace {

// Each loop index of a nest, to its last value.
using LastValues = std::unordered_map<const Val*, Val*>;

bool dependsOn(Val* v, const LastValues& last) {
  if (last.count(v)) {
    return true;
  }
  Expr* def = v->definition();
  if (def == nullptr) {
    return false;
  }
  for (Val* in : def->inputs()) {
    if (dependsOn(in, last)) {
      return true;
    }
  }
  return false;
}

// `v` at the last iteration of every loop of `last`, or nullptr when `v`
// may decrease as one of those indices grows (then its value at the last
// iteration does not bound the others). Index math made of sums,
// products and quotients of non-negative values only grows with each
// index.
Val* atLastIteration(Val* v, const LastValues& last) {
  if (auto it = last.find(v); it != last.end()) {
    return it->second;
  }
  if (!dependsOn(v, last)) {
    return v;
  }
  auto* bop = dynamic_cast<BinaryOp*>(v->definition());
  if (bop == nullptr) {
    return nullptr;
  }
  Val* lhs = bop->lhs();
  Val* rhs = bop->rhs();
  const ValueRanges none;
  auto nonNegative = [&](Val* x) { return provenNonNegative(x, none); };
  switch (bop->opType()) {
    case BinaryOpType::Add:
    case BinaryOpType::Max:
    case BinaryOpType::Min:
      break;
    case BinaryOpType::Mul:
      if (!nonNegative(lhs) || !nonNegative(rhs)) {
        return nullptr;
      }
      break;
    case BinaryOpType::Div:
    case BinaryOpType::CeilDiv:
      if (dependsOn(rhs, last) || !nonNegative(lhs) || !nonNegative(rhs)) {
        return nullptr;
      }
      break;
    case BinaryOpType::Sub:
      if (dependsOn(rhs, last)) {
        return nullptr;
      }
      break;
    default:
      return nullptr;
  }
  Val* a = atLastIteration(lhs, last);
  Val* b = atLastIteration(rhs, last);
  if (a == nullptr || b == nullptr) {
    return nullptr;
  }
  return IrBuilder::binaryExpr(bop->opType(), a, b);
}

// A predicate that holds at every iteration of the loops of `last` when it
// holds at their last one, or nullptr when no such is known: conjunctions
// of `index < bound` with growing indices and bounds the loops leave
// alone.
Val* unswitchedPredicate(Val* predicate, const LastValues& last) {
  if (!dependsOn(predicate, last)) {
    return predicate;
  }
  auto* bop = dynamic_cast<BinaryOp*>(predicate->definition());
  if (bop == nullptr) {
    return nullptr;
  }
  switch (bop->opType()) {
    case BinaryOpType::LogicalAnd: {
      Val* a = unswitchedPredicate(bop->lhs(), last);
      Val* b = unswitchedPredicate(bop->rhs(), last);
      return a == nullptr || b == nullptr
                 ? nullptr
                 : IrBuilder::binaryExpr(BinaryOpType::LogicalAnd, a, b);
    }
    case BinaryOpType::Lt:
    case BinaryOpType::Le: {
      if (dependsOn(bop->rhs(), last)) {
        return nullptr;
      }
      Val* index = atLastIteration(bop->lhs(), last);
      return index == nullptr
                 ? nullptr
                 : IrBuilder::binaryExpr(bop->opType(), index, bop->rhs());
    }
    default:
      return nullptr;
  }
}

// Gathers what unswitching a nest needs, or finds that it cannot be:
// collective exprs (every thread must reach a block reduction or a
// barrier), branches with an else, or a predicate of unknown trend.
struct NestScan {
  LastValues last;
  std::vector<Val*> predicates;
  bool ok = true;

  void scan(const std::vector<Expr*>& exprs) {
    for (Expr* expr : exprs) {
      if (!ok) {
        return;
      }
      if (auto* loop = dynamic_cast<kir::ForLoop*>(expr)) {
        if (!loop->isThreadParallel() && !loop->isDeviceParallel() &&
            !loop->index()->isConst()) {
          if (dependsOn(loop->stop(), last)) {
            ok = false;
            return;
          }
          last[loop->index()] = simplifyExpr(
              IrBuilder::subExpr(loop->stop(), IrBuilder::indexConst(1)));
        }
        scan(loop->body().exprs());
      } else if (auto* branch = dynamic_cast<kir::IfThenElse*>(expr)) {
        if (!branch->elseBody().empty() || branch->predicate() == nullptr) {
          ok = false;
          return;
        }
        predicates.push_back(branch->predicate());
        scan(branch->thenBody().exprs());
      } else if (
          expr->isA<kir::ParallelReduction>() || expr->isA<kir::BlockSync>() ||
          expr->isA<MmaOp>() || expr->isA<kir::MmaTile>()) {
        ok = false;
      }
    }
  }
};

// `exprs` with every branch replaced by its body (the nest's copy for
// when every predicate holds).
std::vector<Expr*> withoutBranches(const std::vector<Expr*>& exprs) {
  std::vector<Expr*> out;
  for (Expr* expr : exprs) {
    if (auto* loop = dynamic_cast<kir::ForLoop*>(expr)) {
      auto* copy = IrBuilder::create<kir::ForLoop>(
          loop->iterDomain(), loop->parallelType(), loop->index(),
          loop->start(), loop->stop());
      for (Expr* e : withoutBranches(loop->body().exprs())) {
        copy->body().push_back(e);
      }
      out.push_back(copy);
    } else if (auto* branch = dynamic_cast<kir::IfThenElse*>(expr)) {
      for (Expr* e : withoutBranches(branch->thenBody().exprs())) {
        out.push_back(e);
      }
    } else {
      out.push_back(expr);
    }
  }
  return out;
}

// `loop`'s unswitched form, or nullptr when it keeps its predicates.
Expr* unswitch(kir::ForLoop* loop) {
  NestScan scan;
  scan.scan({loop});
  if (!scan.ok || scan.predicates.empty()) {
    return nullptr;
  }
  Val* all = IrBuilder::create<Val>(ScalarValue(true), DataType::Bool);
  std::vector<Val*> seen;
  for (Val* predicate : scan.predicates) {
    if (predicate->isConst() && predicate->value().asBool()) {
      continue;
    }
    Val* unswitched = unswitchedPredicate(predicate, scan.last);
    if (unswitched == nullptr) {
      return nullptr;
    }
    unswitched = simplifyExpr(unswitched);
    if (std::any_of(seen.begin(), seen.end(), [&](Val* s) {
          return s->sameAs(unswitched);
        })) {
      continue;
    }
    seen.push_back(unswitched);
    all = IrBuilder::binaryExpr(BinaryOpType::LogicalAnd, all, unswitched);
  }
  if (seen.empty()) {
    return nullptr;
  }
  auto* branch = IrBuilder::create<kir::IfThenElse>(simplifyExpr(all));
  for (Expr* e : withoutBranches({loop})) {
    branch->thenBody().push_back(e);
  }
  branch->elseBody().push_back(loop);
  return branch;
}

class Unswitcher : public kir::ExprMutator {
 protected:
  using kir::ExprMutator::handle;

  void handle(kir::ForLoop* loop) override {
    if (loop->parallelType() == ParallelType::Unroll) {
      if (Expr* unswitched = unswitch(loop)) {
        replaceCurrent({unswitched});
        return;
      }
    }
    kir::ExprMutator::handle(loop);
  }
};

} // namespace

std::vector<Expr*> unswitchUnrolledLoops(const std::vector<Expr*>& exprs) {
  return Unswitcher().mutate(exprs);
}

} // namespace fuser
