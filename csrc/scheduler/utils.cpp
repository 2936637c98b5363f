#include <scheduler/utils.h>

#include <id_model/id_model.h>
#include <ir/all_nodes.h>
#include <scheduler/resize_in_place.h>
#include <transform/inlining.h>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace fuser::scheduler_utils {

std::unordered_set<Val*> upstreamOf(Val* from) {
  std::unordered_set<Val*> seen = {from};
  std::vector<Val*> stack = {from};
  while (!stack.empty()) {
    Val* v = stack.back();
    stack.pop_back();
    if (Expr* def = v->definition()) {
      for (Val* in : def->inputs()) {
        if (in->isA<TensorView>() && seen.insert(in).second) {
          stack.push_back(in);
        }
      }
    }
  }
  return seen;
}

namespace {

// An op on complex values that only ATen computes (ir/type.h).
bool complexOpOnlyATenComputes(const Expr* expr) {
  const bool complex_operand = std::any_of(
      expr->inputs().begin(), expr->inputs().end(),
      [](const Val* v) { return isComplexType(v->dtype()); });
  if (!complex_operand) {
    return false;
  }
  if (auto* uop = dynamic_cast<const UnaryOp*>(expr)) {
    return uop->opType() != UnaryOpType::Cast &&
           !kernelsTakeComplex(uop->opType());
  }
  if (auto* bop = dynamic_cast<const BinaryOp*>(expr)) {
    return !kernelsTakeComplex(bop->opType());
  }
  return false;
}

} // namespace

bool isPointwiseExpr(const Expr* expr) {
  if (complexOpOnlyATenComputes(expr)) {
    return false;
  }
  return expr->isA<UnaryOp>() || expr->isA<BinaryOp>() ||
         expr->isA<TernaryOp>() || expr->isA<LoadStoreOp>() ||
         expr->isA<BroadcastOp>() || expr->isA<ExpandOp>() ||
         expr->isA<FullOp>() || expr->isA<IotaOp>() || expr->isA<RNGOp>() ||
         !expr->output(0)->isA<TensorView>();
}

bool hasDefaultLayout(const TensorView* tv) {
  return !tv->hasAllocation() ||
         (tv->getAllocationDomain() == tv->getLogicalDomain() &&
          tv->getContiguity() == TensorDomain::getContiguityFilledWith(
                                     tv->getLogicalDomain(), true));
}

std::vector<ReductionOp*> reductionsOf(Fusion* fusion) {
  std::vector<ReductionOp*> found;
  for (Expr* expr : fusion->exprs()) {
    if (auto* rop = dynamic_cast<ReductionOp*>(expr)) {
      found.push_back(rop);
    }
  }
  std::stable_partition(found.begin(), found.end(), [](ReductionOp* rop) {
    return !reducesOneElement(rop);
  });
  return found;
}

bool reducesOneElement(ReductionOp* rop) {
  // The root of an rFactor's product lines up with its input's axes.
  const auto in_ids = TensorDomain::noReductions(
      rop->in()->as<TensorView>()->getLogicalDomain());
  const auto& out_ids = rop->out()->as<TensorView>()->getMaybeRootDomain();
  for (size_t i = 0; i < out_ids.size(); ++i) {
    if (out_ids[i]->isReduction() && !in_ids.at(i)->isBroadcast()) {
      return false;
    }
  }
  return true;
}

std::vector<TensorView*> tensorInputs(Fusion* fusion) {
  std::vector<TensorView*> tvs;
  for (Val* input : fusion->inputs()) {
    if (auto* tv = dynamic_cast<TensorView*>(input)) {
      tvs.push_back(tv);
    }
  }
  return tvs;
}

bool isUnscheduled(Fusion* fusion, std::string* reason) {
  for (TensorView* tv : fusion->allTvs()) {
    if (!tv->isFusionInput() && tv->getLoopDomain() != tv->getLogicalDomain()) {
      *reason = tv->toString() + " is already scheduled";
      return false;
    }
  }
  return true;
}

std::unordered_set<Val*> downstreamOf(Fusion* fusion, Val* from) {
  std::unordered_set<Val*> down = {from};
  for (Expr* expr : fusion->exprs()) {
    for (Val* in : expr->inputs()) {
      if (down.count(in)) {
        for (Val* out : expr->outputs()) {
          down.insert(out);
        }
        break;
      }
    }
  }
  return down;
}

std::string selfMappedTensor(Fusion* fusion) {
  IdModel id_model(fusion);
  for (TensorView* tv : fusion->allTvs()) {
    std::unordered_map<IterDomain*, IterDomain*> seen;
    for (IterDomain* id : TensorDomain::noReductions(tv->getLogicalDomain())) {
      if (id->isBroadcast()) {
        continue;
      }
      auto [it, fresh] = seen.emplace(id_model.exactGroup(id), id);
      if (!fresh) {
        return tv->toString() + " (axes " + it->second->toString() + " and " +
               id->toString() + " come from one axis)";
      }
    }
  }
  return "";
}

bool expandsShareLoopsWithOutputs(Fusion* fusion, std::string* reason) {
  std::optional<IdModel> ids;
  for (Expr* expr : fusion->exprs()) {
    auto* expand = dynamic_cast<ExpandOp*>(expr);
    if (expand == nullptr) {
      continue;
    }
    const std::unordered_set<Val*> down = downstreamOf(fusion, expand->out());
    const auto expanded = TensorDomain::noReductions(
        expand->out()->as<TensorView>()->getLogicalDomain());
    for (Val* out : fusion->outputs()) {
      if (down.count(out) != 0) {
        continue;
      }
      if (!ids.has_value()) {
        ids.emplace(fusion);
      }
      const auto& axes = out->as<TensorView>()->getLogicalDomain();
      for (int64_t p : expand->expandedAxes()) {
        IterDomain* id = expanded[static_cast<size_t>(p)];
        if (std::none_of(axes.begin(), axes.end(), [&](IterDomain* a) {
              return ids->exactMapped(id, a);
            })) {
          *reason = "axis " + std::to_string(p) + " of " +
                    expand->out()->toString() +
                    " (an expand) shares no loop with output " +
                    out->toString() + "; the segments write them apart";
          return false;
        }
      }
    }
  }
  return true;
}

std::vector<TensorView*> cacheInputs(
    Fusion* fusion, bool unroll, bool replay_allocation) {
  FUSER_CHECK(fusion != nullptr, "cacheInputs: null fusion.");
  std::vector<TensorView*> caches;
  // Copy: caching appends exprs but never changes the inputs list.
  const std::vector<Val*> inputs = fusion->inputs();
  for (Val* input : inputs) {
    auto* tv = dynamic_cast<TensorView*>(input);
    if (tv == nullptr || tv->uses().empty() || isReadOnlyThroughResize(tv)) {
      continue;
    }
    CacheOp cache_op = unroll ? CacheOp::AllLevels : CacheOp::Unspecified;
    TensorView* cache =
        tv->cacheAfter(LoadStoreOpType::Set, cache_op, replay_allocation);
    // Slices, pads and cats read the input itself, at shifted positions.
    const std::vector<Expr*> cache_uses = cache->uses();
    for (Expr* use : cache_uses) {
      if (use->isA<ResizeOp>()) {
        fusion->replaceInput(use, cache, tv);
      }
    }
    caches.push_back(cache);
  }
  return caches;
}

bool isReadOnce(TensorView* input, TensorView* reference) {
  const auto& logical = input->getLogicalDomain();
  return logical.size() == reference->getLogicalDomain().size() &&
         std::none_of(logical.begin(), logical.end(), [](IterDomain* id) {
           return id->isBroadcast() || id->isReduction();
         });
}

std::vector<std::pair<TensorView*, TensorView*>> cacheAndForkOutputs(
    Fusion* fusion, bool unroll) {
  (void)unroll;
  FUSER_CHECK(fusion != nullptr, "cacheAndForkOutputs: null fusion.");
  std::vector<std::pair<TensorView*, TensorView*>> cached;
  const std::vector<Val*> outputs = fusion->outputs();
  for (Val* output : outputs) {
    auto* tv = dynamic_cast<TensorView*>(output);
    if (tv == nullptr || tv->definition() == nullptr || tv->isFusionInput()) {
      continue;
    }
    if (!tv->uses().empty()) {
      // The forked copy is the new output; tv stays as its cache.
      cached.emplace_back(tv, tv->cacheFork());
    } else {
      cached.emplace_back(tv->cacheBefore(), tv);
    }
  }
  return cached;
}

void removeDeadExprs(Fusion* fusion) {
  const std::vector<Expr*> live_exprs = fusion->exprs();
  const std::unordered_set<Expr*> live(live_exprs.begin(), live_exprs.end());
  for (Expr* expr : fusion->unorderedExprs()) {
    const bool writes_tensor = std::any_of(
        expr->outputs().begin(), expr->outputs().end(),
        [](Val* v) { return v->isA<TensorView>(); });
    if (writes_tensor && !live.count(expr)) {
      fusion->removeExpr(expr);
    }
  }
}

int64_t readOnceInputBytes(
    Fusion* fusion, TensorView* reference, RuntimeInfo& runtime_info) {
  int64_t bytes = 0;
  for (TensorView* input : tensorInputs(fusion)) {
    if (!input->uses().empty() && isReadOnce(input, reference)) {
      bytes += runtime_info.numel(input) * dataTypeSize(input->dtype());
    }
  }
  return bytes;
}

std::vector<TensorView*> cacheInputsReadOnce(
    Fusion* fusion, TensorView* reference, CacheOp policy) {
  std::vector<TensorView*> caches;
  for (TensorView* input : tensorInputs(fusion)) {
    if (!input->uses().empty() && isReadOnce(input, reference)) {
      caches.push_back(input->cacheAfter(LoadStoreOpType::Set, policy));
    }
  }
  return caches;
}

void parallelizeAllLike(
    TensorView* reference, const std::vector<TensorView*>& tvs,
    const std::unordered_set<ParallelType>& parallel_types) {
  FUSER_CHECK(reference != nullptr, "parallelizeAllLike: null reference.");
  Fusion* fusion = reference->fusion();
  IdModel id_model(fusion);
  std::vector<TensorView*> targets = tvs.empty() ? fusion->allTvs() : tvs;
  for (TensorView* tv : targets) {
    if (tv == reference || tv->isFusionInput()) {
      continue;
    }
    for (IterDomain* id : tv->getLoopDomain()) {
      for (IterDomain* ref_id : reference->getLoopDomain()) {
        ParallelType pt = ref_id->getParallelType();
        if (!parallel_types.empty() && !parallel_types.count(pt)) {
          continue;
        }
        if (id_model.loopMapped(id, ref_id)) {
          if (id->isReduction() && pt == ParallelType::Vectorize) {
            continue;
          }
          id->parallelize(pt);
          if (ref_id->isThread()) {
            id->padToMultipleOf(ref_id->paddedMultiple());
            id->setExtentBound(ref_id->extentBound());
          }
          break;
        }
      }
    }
  }
}

std::vector<TensorView*> outputsOfRank(Fusion* fusion, int64_t rank) {
  std::vector<TensorView*> outs;
  for (Val* out : fusion->outputs()) {
    auto* tv = out->as<TensorView>();
    if (rankOf(tv) == rank) {
      outs.push_back(tv);
    }
  }
  return outs;
}

std::vector<TensorView*> inputsBelowRank(Fusion* fusion, int64_t rank) {
  std::vector<TensorView*> ins;
  for (TensorView* tv : tensorInputs(fusion)) {
    if (!tv->uses().empty() && rankOf(tv) < rank) {
      ins.push_back(tv);
    }
  }
  return ins;
}

void vectorizeLastAxes(
    Fusion* fusion, const std::vector<TensorView*>& input_caches,
    int64_t n_dims, int64_t rank, int64_t vectorize) {
  if (vectorize == 1) {
    return;
  }
  auto vectorize_last = [&](TensorView* tv) {
    // A 0-dim tensor (a full reduction's result) has no axis to vectorize.
    if (tv->nDims() != n_dims || n_dims == 0) {
      return;
    }
    IterDomain* last = tv->axis(-1);
    if (last->isIteration() && last->extent()->isConstInt() &&
        last->extent()->constIntValue() == vectorize) {
      last->parallelize(ParallelType::Vectorize);
    }
  };
  for (TensorView* cache : input_caches) {
    vectorize_last(cache);
  }
  for (Val* out : fusion->outputs()) {
    vectorize_last(out->as<TensorView>());
  }
  for (TensorView* in : inputsBelowRank(fusion, rank)) {
    for (Expr* use : in->uses()) {
      if (use->isA<BroadcastOp>()) {
        vectorize_last(use->output(0)->as<TensorView>());
      }
    }
  }
}

std::pair<std::vector<TensorView*>, std::vector<TensorView*>>
splitByBroadcastAxes(
    Fusion* fusion, int64_t n_dims, int64_t first, int64_t last) {
  std::pair<std::vector<TensorView*>, std::vector<TensorView*>> groups;
  for (TensorView* tv : fusion->allTvs()) {
    const auto& loop = tv->getLoopDomain();
    const bool broadcast =
        !tv->isFusionInput() && !tv->isFusionOutput() &&
        static_cast<int64_t>(loop.size()) == n_dims &&
        std::all_of(
            loop.begin() + first, loop.begin() + last,
            [](IterDomain* id) { return id->isBroadcast(); });
    (broadcast ? groups.first : groups.second).push_back(tv);
  }
  return groups;
}

std::vector<int64_t> reducedPositions(ReductionOp* rop) {
  std::vector<int64_t> positions;
  const auto& logical = rop->out()->as<TensorView>()->getLogicalDomain();
  for (size_t p = 0; p < logical.size(); ++p) {
    if (logical[p]->isReduction()) {
      positions.push_back(static_cast<int64_t>(p));
    }
  }
  return positions;
}

bool reductionInputIsEmpty(
    Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) {
  auto* in = reductionsOf(fusion).front()->in()->as<TensorView>();
  if (runtime_info.numel(in) != 0) {
    return false;
  }
  *reason = "the reduction's input is empty";
  return true;
}

void inlineMostLoadingFirst(
    Fusion* fusion, const std::vector<TensorView*>& caches,
    int64_t unrolled_axis) {
  const std::unordered_set<TensorView*> is_cache(caches.begin(), caches.end());
  std::vector<TensorView*> others;
  for (TensorView* tv : fusion->allTvs()) {
    if (is_cache.count(tv) == 0) {
      others.push_back(tv);
    }
  }
  inlineMost(others);
  for (TensorView* cache : caches) {
    cache->inlineAt(
        std::min(unrolled_axis, getMaxInlinePosition(cache)),
        /*best_effort=*/true);
  }
}

} // namespace fuser::scheduler_utils
