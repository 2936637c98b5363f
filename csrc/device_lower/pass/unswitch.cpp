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
#include <functional>
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

// A copy of the nest `exprs` with each branch's predicate rewritten by
// `rewrite`: a branch whose predicate becomes true is replaced by its body.
// Loops are copied; other exprs are shared with the original.
std::vector<Expr*> copyNest(
    const std::vector<Expr*>& exprs, const std::function<Val*(Val*)>& rewrite) {
  std::vector<Expr*> out;
  for (Expr* expr : exprs) {
    if (auto* loop = dynamic_cast<kir::ForLoop*>(expr)) {
      auto* copy = IrBuilder::create<kir::ForLoop>(
          loop->iterDomain(), loop->parallelType(), loop->index(),
          loop->start(), loop->stop());
      for (Expr* e : copyNest(loop->body().exprs(), rewrite)) {
        copy->body().push_back(e);
      }
      out.push_back(copy);
    } else if (auto* branch = dynamic_cast<kir::IfThenElse*>(expr)) {
      Val* predicate = rewrite(branch->predicate());
      std::vector<Expr*> body = copyNest(branch->thenBody().exprs(), rewrite);
      if (predicate->isConst() && predicate->value().asBool()) {
        out.insert(out.end(), body.begin(), body.end());
        continue;
      }
      auto* copy = IrBuilder::create<kir::IfThenElse>(predicate);
      for (Expr* e : body) {
        copy->thenBody().push_back(e);
      }
      out.push_back(copy);
    } else {
      out.push_back(expr);
    }
  }
  return out;
}

// `exprs` with every branch replaced by its body (the nest's copy for
// when every predicate holds).
std::vector<Expr*> withoutBranches(const std::vector<Expr*>& exprs) {
  return copyNest(exprs, [](Val*) {
    return IrBuilder::create<Val>(ScalarValue(true), DataType::Bool);
  });
}

// The conjuncts of a predicate (its tree of logical ands, flattened).
void conjunctsOf(Val* predicate, std::vector<Val*>* out) {
  auto* bop = dynamic_cast<BinaryOp*>(predicate->definition());
  if (bop != nullptr && bop->opType() == BinaryOpType::LogicalAnd) {
    conjunctsOf(bop->lhs(), out);
    conjunctsOf(bop->rhs(), out);
    return;
  }
  out->push_back(predicate);
}

// `predicate` with each conjunct the same as `conjunct` set to `value`.
Val* withConjunct(Val* predicate, Val* conjunct, bool value) {
  if (predicate->sameAs(conjunct)) {
    return IrBuilder::create<Val>(ScalarValue(value), DataType::Bool);
  }
  auto* bop = dynamic_cast<BinaryOp*>(predicate->definition());
  if (bop == nullptr || bop->opType() != BinaryOpType::LogicalAnd) {
    return predicate;
  }
  return IrBuilder::binaryExpr(
      BinaryOpType::LogicalAnd, withConjunct(bop->lhs(), conjunct, value),
      withConjunct(bop->rhs(), conjunct, value));
}

// A copy of `exprs` for when `conjunct` is `value`: the branches it
// decides become unconditional (true) or keep a false predicate (so that
// the writes they skip stay visible to whoever reads the kernel IR; the
// CUDA compiler removes them).
std::vector<Expr*> assuming(
    const std::vector<Expr*>& exprs, Val* conjunct, bool value) {
  return copyNest(exprs, [&](Val* predicate) {
    return simplifyExpr(withConjunct(predicate, conjunct, value));
  });
}

// The predicated nest, split on each conjunct that no loop of the nest
// changes (a row of a persistent kernel past the last row): each copy
// tests only what varies within it. One predicated copy with every
// conjunct per element needs registers for the values of each
// combination (ptxas allocated 203 where the unpredicated copy takes 127,
// for a layer norm backward; doc/indexing.md §6).
std::vector<Expr*> splitOnInvariants(
    const std::vector<Expr*>& nest, const std::vector<Val*>& invariants,
    size_t first) {
  if (first == invariants.size()) {
    return nest;
  }
  Val* conjunct = invariants[first];
  auto* branch = IrBuilder::create<kir::IfThenElse>(conjunct);
  for (Expr* e : splitOnInvariants(
           assuming(nest, conjunct, true), invariants, first + 1)) {
    branch->thenBody().push_back(e);
  }
  for (Expr* e : assuming(nest, conjunct, false)) {
    branch->elseBody().push_back(e);
  }
  return {branch};
}

// The conjuncts of `predicates` that depend on no loop of `last`, each
// once; none when no conjunct depends on one (then the unswitched test
// is the conjunction of them all, and the predicated copy runs when one
// fails: splitting it would only copy it).
std::vector<Val*> invariantConjuncts(
    const std::vector<Val*>& predicates, const LastValues& last) {
  std::vector<Val*> invariants;
  bool varying = false;
  for (Val* predicate : predicates) {
    std::vector<Val*> conjuncts;
    conjunctsOf(predicate, &conjuncts);
    for (Val* c : conjuncts) {
      if (dependsOn(c, last)) {
        varying = true;
        continue;
      }
      if (c->isConst() || std::any_of(
                              invariants.begin(), invariants.end(),
                              [&](Val* seen) { return seen->sameAs(c); })) {
        continue;
      }
      invariants.push_back(c);
    }
  }
  return varying ? invariants : std::vector<Val*>{};
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
  for (Expr* e : splitOnInvariants(
           {loop}, invariantConjuncts(scan.predicates, scan.last), 0)) {
    branch->elseBody().push_back(e);
  }
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
