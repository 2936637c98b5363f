#include <scheduler/utils.h>

#include <id_model/id_model.h>
#include <ir/all_nodes.h>

#include <algorithm>

namespace fuser::scheduler_utils {

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

std::vector<TensorView*> cacheInputs(
    Fusion* fusion, bool unroll, bool replay_allocation) {
  FUSER_CHECK(fusion != nullptr, "cacheInputs: null fusion.");
  std::vector<TensorView*> caches;
  // Copy: caching appends exprs but never changes the inputs list.
  const std::vector<Val*> inputs = fusion->inputs();
  for (Val* input : inputs) {
    auto* tv = dynamic_cast<TensorView*>(input);
    if (tv == nullptr || tv->uses().empty()) {
      continue;
    }
    CacheOp cache_op = unroll ? CacheOp::AllLevels : CacheOp::Unspecified;
    caches.push_back(
        tv->cacheAfter(LoadStoreOpType::Set, cache_op, replay_allocation));
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
          break;
        }
      }
    }
  }
}

} // namespace fuser::scheduler_utils
