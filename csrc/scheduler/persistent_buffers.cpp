#include <scheduler/persistent_buffers.h>

#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <ops/rebuild.h>
#include <scheduler/utils.h>

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace fuser {

namespace {

// Rebuilds tensors from fusion inputs and reduction results (`available`)
// through exprs cheap to compute again; tensors it cannot rebuild stay
// themselves.
class Recomputer {
 public:
  explicit Recomputer(std::unordered_set<Val*> available)
      : available_(std::move(available)) {}

  // Whether `tv` can be rebuilt; adds to `out` the fusion inputs of
  // `rank` that rebuilding it reads (those a persistent kernel would
  // then hold).
  bool inputsOf(TensorView* tv, int64_t rank, std::vector<TensorView*>* out) {
    if (tv->isFusionInput()) {
      if (scheduler_utils::rankOf(tv) == rank &&
          std::find(out->begin(), out->end(), tv) == out->end()) {
        out->push_back(tv);
      }
      return true;
    }
    if (available_.count(tv)) {
      return true;
    }
    Expr* def = tv->definition();
    if (!isCheapToRecompute(def)) {
      return false;
    }
    for (Val* in : def->inputs()) {
      if (auto* in_tv = dynamic_cast<TensorView*>(in)) {
        if (!inputsOf(in_tv, rank, out)) {
          return false;
        }
      }
    }
    return true;
  }

  // Rebuilt tensors are shared within one consumer only: shared by two,
  // one computed after a later reduction than the other, a rebuilt
  // tensor would itself be held across that reduction.
  void forget() {
    memo_.clear();
  }

  Val* rebuilt(TensorView* tv) {
    if (tv->isFusionInput() || available_.count(tv)) {
      return tv;
    }
    if (auto it = memo_.find(tv); it != memo_.end()) {
      return it->second;
    }
    Expr* def = tv->definition();
    std::vector<Val*> inputs;
    for (Val* in : def->inputs()) {
      auto* in_tv = dynamic_cast<TensorView*>(in);
      inputs.push_back(in_tv != nullptr ? rebuilt(in_tv) : in);
    }
    Val* result = rebuildPointwise(def, inputs);
    FUSER_INTERNAL_ASSERT(
        result != nullptr && result->dtype() == tv->dtype(), "rebuilding ",
        tv->toString());
    memo_[tv] = result;
    return result;
  }

 private:
  // Cheap to compute again: no transcendental function (recomputing
  // softmax's exp(x - max) would double its work).
  static bool isCheapToRecompute(Expr* expr) {
    if (auto* uop = dynamic_cast<UnaryOp*>(expr)) {
      switch (uop->opType()) {
        case UnaryOpType::Cast:
        case UnaryOpType::Neg:
        case UnaryOpType::Abs:
        case UnaryOpType::Relu:
          return true;
        default:
          return false;
      }
    }
    return canRebuildPointwise(expr);
  }

  std::unordered_set<Val*> available_;
  std::unordered_map<TensorView*, Val*> memo_;
};

// Every use of `old` (and its place among the outputs) reads `replacement`.
void replaceUses(Fusion* fusion, Val* old, Val* replacement) {
  const std::vector<Expr*> uses = old->uses();
  for (Expr* use : uses) {
    fusion->replaceInput(use, old, replacement);
  }
  if (fusion->isOutput(old)) {
    fusion->replaceOutput(old, replacement);
  }
}

// Whether a value computed from `from` by exprs other than reductions
// meets `down` (a reduction's result or what derives from it): then the
// tensor `from` was computed from is needed after the reduction. Through
// another reduction only one value per row passes, computed before the
// block's barrier (device_lower/pass/expr_sort.cpp runs every partial
// independent of a reduction before it): a layer norm backward's g feeds
// sum(g) and sum(g * xhat), and is not held across either.
bool meetsWithoutReducing(Val* from, const std::unordered_set<Val*>& down) {
  std::vector<Val*> stack = {from};
  std::unordered_set<Val*> seen = {from};
  while (!stack.empty()) {
    Val* v = stack.back();
    stack.pop_back();
    if (down.count(v)) {
      return true;
    }
    for (Expr* use : v->uses()) {
      if (use->isA<ReductionOp>()) {
        continue;
      }
      for (Val* out : use->outputs()) {
        if (out->isA<TensorView>() && seen.insert(out).second) {
          stack.push_back(out);
        }
      }
    }
  }
  return false;
}

} // namespace

bool constantAlongReducedAxes(TensorView* tv, ReductionOp* rop) {
  const auto& reduced = rop->out()->as<TensorView>()->getLogicalDomain();
  const auto& logical = tv->getLogicalDomain();
  if (logical.size() != reduced.size()) {
    return true;
  }
  for (size_t p = 0; p < reduced.size(); ++p) {
    if (reduced[p]->isReduction() && !logical[p]->isBroadcast() &&
        !logical[p]->isReduction()) {
      return false;
    }
  }
  return true;
}

namespace {

// The tensors of `fusion` in the order it defines them: its inputs in
// input order, then each expr's outputs in topological order. The
// buffers' order picks which input goes to shared memory among equal
// sizes, and a schedule must not depend on where the tensors happen to
// lie in memory.
std::vector<Val*> inDefinitionOrder(Fusion* fusion) {
  std::vector<Val*> ordered(fusion->inputs().begin(), fusion->inputs().end());
  for (Expr* expr : fusion->exprs()) {
    ordered.insert(
        ordered.end(), expr->outputs().begin(), expr->outputs().end());
  }
  return ordered;
}

} // namespace

std::vector<TensorView*> persistentBuffers(Fusion* fusion) {
  std::vector<TensorView*> buffers;
  const std::vector<Val*> ordered = inDefinitionOrder(fusion);
  for (ReductionOp* rop : scheduler_utils::reductionsOf(fusion)) {
    const std::unordered_set<Val*> up = scheduler_utils::upstreamOf(rop->in());
    const std::unordered_set<Val*> down =
        scheduler_utils::downstreamOf(fusion, rop->out());
    for (Val* v : ordered) {
      if (!up.count(v)) {
        continue;
      }
      auto* tv = v->as<TensorView>();
      if (constantAlongReducedAxes(tv, rop)) {
        continue; // one value per row, not a row
      }
      for (Expr* use : tv->uses()) {
        Val* out = use->output(0);
        if (use->isA<ReductionOp>() || up.count(out) ||
            !out->isA<TensorView>()) {
          continue;
        }
        if (meetsWithoutReducing(out, down) &&
            std::find(buffers.begin(), buffers.end(), tv) == buffers.end()) {
          buffers.push_back(tv);
        }
      }
    }
  }
  return buffers;
}

void projectPersistentBuffersToInputs(Fusion* fusion) {
  FusionGuard fg(fusion);
  const std::vector<ReductionOp*> reductions =
      scheduler_utils::reductionsOf(fusion);
  if (reductions.empty()) {
    return;
  }
  const int64_t rank = static_cast<int64_t>(
      reductions.front()->out()->as<TensorView>()->getLogicalDomain().size());
  std::unordered_set<Val*> results;
  for (ReductionOp* rop : reductions) {
    for (Val* v : scheduler_utils::downstreamOf(fusion, rop->out())) {
      results.insert(v);
    }
  }
  for (ReductionOp* rop : reductions) {
    const std::unordered_set<Val*> up = scheduler_utils::upstreamOf(rop->in());
    const std::unordered_set<Val*> down =
        scheduler_utils::downstreamOf(fusion, rop->out());
    // Available after this reduction: the results of reductions, and what
    // derives from them, except what this one reduces, unless it is one
    // value per row (softmax's exp(x - max) derives from max but is
    // summed; max and its broadcast are available).
    std::unordered_set<Val*> available;
    for (Val* v : results) {
      if (!up.count(v) || constantAlongReducedAxes(v->as<TensorView>(), rop)) {
        available.insert(v);
      }
    }
    Recomputer recomputer(std::move(available));
    // The exprs after the reduction that read a tensor from before it.
    for (Expr* expr : fusion->exprs()) {
      const auto& ins = expr->inputs();
      if (std::none_of(ins.begin(), ins.end(), [&](Val* v) {
            return down.count(v) != 0;
          })) {
        continue;
      }
      const std::vector<Val*> operands(ins.begin(), ins.end());
      recomputer.forget();
      for (Val* in : operands) {
        auto* tv = dynamic_cast<TensorView*>(in);
        if (tv == nullptr || tv->isFusionInput() || !up.count(tv) ||
            down.count(tv)) {
          continue;
        }
        std::vector<TensorView*> needed;
        if (!recomputer.inputsOf(tv, rank, &needed)) {
          continue;
        }
        int64_t needed_bytes = 0;
        for (TensorView* input : needed) {
          needed_bytes += dataTypeSize(input->dtype());
        }
        // Worth it only when the inputs are smaller than the tensor (bf16
        // for a float): recomputing from an input of its size saves no
        // register and repeats the work (softmax's exp).
        if (needed_bytes >= dataTypeSize(tv->dtype())) {
          continue;
        }
        fusion->replaceInput(expr, tv, recomputer.rebuilt(tv));
      }
    }
  }
}

void multiplyByRowReciprocals(Fusion* fusion) {
  FusionGuard fg(fusion);
  const std::vector<ReductionOp*> reductions =
      scheduler_utils::reductionsOf(fusion);
  if (reductions.empty()) {
    return;
  }
  ReductionOp* rop = reductions.front();
  for (Expr* expr : fusion->exprs()) {
    auto* bop = dynamic_cast<BinaryOp*>(expr);
    if (bop == nullptr || bop->opType() != BinaryOpType::Div ||
        !isFloatingPointType(bop->out()->dtype())) {
      continue;
    }
    auto* lhs = dynamic_cast<TensorView*>(bop->lhs());
    auto* rhs = dynamic_cast<TensorView*>(bop->rhs());
    if (lhs == nullptr || rhs == nullptr || rhs->dtype() != lhs->dtype() ||
        constantAlongReducedAxes(lhs, rop) ||
        !constantAlongReducedAxes(rhs, rop)) {
      continue;
    }
    replaceUses(fusion, bop->out(), mul(lhs, reciprocal(rhs)));
  }
}

void welfordToTwoPasses(Fusion* fusion) {
  FusionGuard fg(fusion);
  for (ReductionOp* rop : scheduler_utils::reductionsOf(fusion)) {
    auto* init = dynamic_cast<UnaryOp*>(rop->in()->definition());
    if (rop->opType() != ReductionOpType::Welford || init == nullptr ||
        init->opType() != UnaryOpType::WelfordInit) {
      continue;
    }
    auto* x = init->in()->as<TensorView>();
    const auto& logical = rop->out()->as<TensorView>()->getLogicalDomain();
    std::vector<int64_t> axes;
    std::vector<bool> flags;
    Val* count = nullptr;
    for (size_t p = 0; p < logical.size(); ++p) {
      flags.push_back(logical[p]->isReduction());
      if (logical[p]->isReduction()) {
        axes.push_back(static_cast<int64_t>(p));
        count = count == nullptr
                    ? logical[p]->extent()
                    : IrBuilder::mulExpr(count, logical[p]->extent());
      }
    }
    TensorView* mean = div(sum(x, axes), castOp(x->dtype(), count));
    TensorView* deviation = sub(x, broadcast(mean, flags));
    TensorView* var_sum = sum(mul(deviation, deviation), axes);
    // The count as a tensor of the statistics' shape (both branches are
    // the count: no element's value matters).
    TensorView* n = where(
        eq(mean, mean), castOp(DataType::Int, count),
        castOp(DataType::Int, count));
    const std::vector<Expr*> conversions = rop->out()->uses();
    for (Expr* use : conversions) {
      auto* uop = dynamic_cast<UnaryOp*>(use);
      FUSER_INTERNAL_ASSERT(uop != nullptr, "a Welford state's use");
      TensorView* replacement = uop->opType() == UnaryOpType::WelfordAvg ? mean
                                : uop->opType() == UnaryOpType::WelfordVarSum
                                    ? var_sum
                                    : n;
      replaceUses(fusion, uop->out(), replacement);
    }
  }
}

void recomputeReductionInputs(
    Fusion* fusion, const std::vector<ReductionOp*>& reductions) {
  FusionGuard fg(fusion);
  // Tensors computed after a reduction not among `reductions`.
  std::unordered_set<Val*> after_rows;
  for (ReductionOp* rop : scheduler_utils::reductionsOf(fusion)) {
    if (std::find(reductions.begin(), reductions.end(), rop) ==
        reductions.end()) {
      for (Val* v : scheduler_utils::downstreamOf(fusion, rop->out())) {
        after_rows.insert(v);
      }
    }
  }
  std::unordered_map<Val*, Val*> copies;
  std::function<Val*(Val*)> copy = [&](Val* v) -> Val* {
    auto* tv = dynamic_cast<TensorView*>(v);
    if (tv == nullptr || tv->isFusionInput() || after_rows.count(tv) ||
        !canRebuildPointwise(tv->definition())) {
      return v;
    }
    auto it = copies.find(v);
    if (it != copies.end()) {
      return it->second;
    }
    std::vector<Val*> inputs;
    for (Val* in : tv->definition()->inputs()) {
      inputs.push_back(copy(in));
    }
    Val* rebuilt = rebuildPointwise(tv->definition(), inputs);
    copies.emplace(v, rebuilt);
    return rebuilt;
  };
  for (ReductionOp* rop : reductions) {
    Val* in = rop->in();
    Val* rebuilt = copy(in);
    if (rebuilt != in) {
      fusion->replaceInput(rop, in, rebuilt);
    }
  }
}

void broadcastSideInputsFirst(Fusion* fusion) {
  FusionGuard fg(fusion);
  for (Expr* expr : fusion->exprs()) {
    auto* bcast = dynamic_cast<BroadcastOp*>(expr);
    if (bcast == nullptr || fusion->isOutput(bcast->out())) {
      continue;
    }
    // The unary chain from a fusion input to the broadcast, each link
    // read only by the next.
    std::vector<Expr*> chain;
    auto* tv = bcast->in()->as<TensorView>();
    while (!tv->isFusionInput()) {
      Expr* def = tv->definition();
      const bool unary =
          def->isA<UnaryOp>() ||
          (def->isA<LoadStoreOp>() &&
           def->as<LoadStoreOp>()->opType() == LoadStoreOpType::Set);
      if (!unary || tv->uses().size() != 1 || fusion->isOutput(tv)) {
        break;
      }
      chain.push_back(def);
      tv = def->input(0)->as<TensorView>();
    }
    if (chain.empty() || !tv->isFusionInput()) {
      continue;
    }
    Val* value = broadcast(tv, bcast->getBroadcastDimFlags());
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      value = rebuildPointwise(*it, {value});
    }
    replaceUses(fusion, bcast->out(), value);
  }
}

void prepareForPersistence(Fusion* fusion) {
  scheduler_utils::removeDeadExprs(fusion);
  broadcastSideInputsFirst(fusion);
  welfordToTwoPasses(fusion);
  projectPersistentBuffersToInputs(fusion);
  multiplyByRowReciprocals(fusion);
  scheduler_utils::removeDeadExprs(fusion);
}

HeldBuffers heldBuffers(const Fusion* fusion) {
  Fusion rewritten(*fusion);
  prepareForPersistence(&rewritten);
  HeldBuffers held;
  for (TensorView* tv : persistentBuffers(&rewritten)) {
    held.names.push_back(tv->toString());
    held.element_bytes.push_back(dataTypeSize(tv->dtype()));
    const auto& inputs = rewritten.inputs();
    auto input = std::find(inputs.begin(), inputs.end(), tv);
    held.input_positions.push_back(
        input == inputs.end() ? -1 : std::distance(inputs.begin(), input));
  }
  return held;
}

} // namespace fuser
