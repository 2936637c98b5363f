// cacheBefore, cacheAfter and cacheFork (doc/design.md §4). A cache is a new
// tensor; it gets the original's allocation layout only when the caller
// passes replay_allocation = true. Fusion inputs and outputs always keep
// the layout the user gave them.
#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>
#include <transform_replay.h>

#include <algorithm>

namespace fuser {

namespace {

// A new tensor with fresh copies of `tv`'s logical IDs (reductions left
// out) and no definition.
TensorView* freshLogicalCopy(TensorView* tv) {
  std::vector<IterDomain*> ids;
  for (IterDomain* id : TensorDomain::noReductions(tv->getLogicalDomain())) {
    ids.push_back(IrBuilder::create<IterDomain>(
        id->start(), id->extent(), id->getIterType()));
  }
  auto* domain = IrBuilder::create<TensorDomain>(
      ids, TensorDomain::getContiguityFilledWith(ids, true));
  return IrBuilder::create<TensorView>(domain, tv->dtype());
}

// Fresh copies of `tv`'s root and logical domains, with the root -> logical
// exprs (permute, reshape) replayed on the copies.
TensorDomain* freshRootAndLogicalCopy(TensorView* tv) {
  const auto& root = tv->getMaybeRootDomain();
  IdMap id_map;
  std::vector<IterDomain*> new_root;
  for (IterDomain* id : root) {
    auto* copy = IrBuilder::create<IterDomain>(
        id->start(), id->extent(), id->getIterType());
    id_map[id] = copy;
    new_root.push_back(copy);
  }
  if (!tv->hasRoot()) {
    return IrBuilder::create<TensorDomain>(
        new_root, TensorDomain::getContiguityFilledWith(new_root, true));
  }
  auto skipped = TransformReplay::replayExprs(
      getExprsBetween(root, tv->getLogicalDomain()), id_map,
      /*forward_broadcast=*/false);
  FUSER_INTERNAL_ASSERT(skipped.empty(), "root -> logical replay failed");
  std::vector<IterDomain*> new_logical;
  for (IterDomain* id : tv->getLogicalDomain()) {
    new_logical.push_back(id_map.at(id));
  }
  return IrBuilder::create<TensorDomain>(
      new_root, new_logical, std::vector<IterDomain*>{}, new_logical,
      TensorDomain::getContiguityFilledWith(new_logical, true));
}

// Whether every root ancestor of `id` is a reduction axis.
bool derivesOnlyFromReductions(IterDomain* id) {
  if (id->definition() == nullptr) {
    return id->isReduction();
  }
  for (Val* in : id->definition()->inputs()) {
    if (!derivesOnlyFromReductions(in->as<IterDomain>())) {
      return false;
    }
  }
  return true;
}

void checkCacheable(TensorView* tv, const char* what) {
  FUSER_CHECK(
      tv->getComputeAtPosition() == 0 && tv->getMaxProducerPosition() == 0,
      what, " of ", tv->toString(),
      ": the tensor is already inlined; create caches before inlining.");
}

} // namespace

TensorView* TensorView::cacheBefore(
    LoadStoreOpType op_type, bool replay_allocation) {
  checkCacheable(this, "cacheBefore");
  Expr* def = definition();
  FUSER_CHECK(
      def != nullptr && !isFusionInput(), "cacheBefore of ", toString(),
      ": the tensor has no definition to cache (fusion inputs use "
      "cacheAfter).");
  // Checked before anything changes, so a rejected call leaves the fusion
  // as it was.
  FUSER_CHECK(
      !replay_allocation || !hasReduction(),
      "Cannot replay the allocation domain of ", toString(),
      " onto its cache (replay_allocation=true): the cache computes a "
      "reduction, whose reduced axes have no layout to carry. Call "
      "cacheBefore without replay_allocation and set the cache's allocation "
      "explicitly.");
  FUSER_CHECK(
      !hasAllocation() || !hasReduction(), "cacheBefore of ", toString(),
      ": a reduction with an allocation domain cannot be cached; set the "
      "allocation on the cache instead.");
  FusionGuard fg(fusion());

  // The cache takes over the definition with a copy of this tensor's full
  // structure (reductions, root -> logical).
  auto* cache =
      IrBuilder::create<TensorView>(freshRootAndLogicalCopy(this), dtype());
  fusion()->replaceOutputOfExpr(def, this, cache);

  // This tensor becomes a plain copy of the cache: it keeps its logical IDs
  // (minus reductions) and its allocation.
  std::vector<IterDomain*> logical =
      TensorDomain::noReductions(getLogicalDomain());
  // The loop without its reduction axes, when those derive only from
  // reduction axes (a merge with a broadcast can tie the two together);
  // otherwise the loop restarts from logical.
  std::vector<IterDomain*> loop;
  for (IterDomain* id : getLoopDomain()) {
    if (!id->isReduction()) {
      loop.push_back(id);
    } else if (!derivesOnlyFromReductions(id)) {
      loop = logical;
      break;
    }
  }
  Contiguity contiguity;
  if (hasAllocation()) {
    contiguity = getContiguity();
  } else {
    for (size_t i = 0; i < getLogicalDomain().size(); ++i) {
      if (!getLogicalDomain()[i]->isReduction()) {
        contiguity.push_back(getContiguity()[i]);
      }
    }
  }
  TensorDomain* kept = IrBuilder::create<TensorDomain>(
      std::vector<IterDomain*>{}, logical, getAllocationDomain(), loop,
      contiguity);
  // The domain's logical IDs change (root and reductions dropped), so set
  // it directly rather than through setDomain's logical check.
  domain_ = kept;
  kept->owner_ = this;
  IrBuilder::create<LoadStoreOp>(op_type, this, cache);

  // The cache computes in this tensor's loop order.
  TransformReplayOptions opt;
  opt.replayAllocation(replay_allocation);
  TransformReplay::replayPasC(cache, this, -1, opt);
  return cache;
}

TensorView* TensorView::cacheAfter(
    LoadStoreOpType op_type, CacheOp cache_op, bool replay_allocation) {
  checkCacheable(this, "cacheAfter");
  FUSER_CHECK(
      !uses().empty(), "cacheAfter of ", toString(),
      ": the tensor has no uses to read from a cache.");
  FusionGuard fg(fusion());
  auto* cache = freshLogicalCopy(this);
  // Redirect every use to the cache before the cache reads this tensor.
  std::vector<Expr*> uses_before = uses();
  for (Expr* use : uses_before) {
    fusion()->replaceInput(use, this, cache);
  }
  IrBuilder::create<LoadStoreOp>(op_type, cache, this, cache_op);
  TransformReplayOptions opt;
  opt.replayAllocation(replay_allocation);
  TransformReplay::replayCasP(cache, this, -1, opt);
  return cache;
}

TensorView* TensorView::cacheFork(bool replay_allocation) {
  checkCacheable(this, "cacheFork");
  FUSER_CHECK(
      isFusionOutput() && !uses().empty(), "cacheFork of ", toString(),
      ": only a fusion output that is also used by other exprs can be "
      "forked.");
  FUSER_CHECK(
      !hasAllocation() || !hasReduction(), "cacheFork of ", toString(),
      ": a reduction with an allocation domain cannot be forked; set the "
      "allocation on the fork instead.");
  FusionGuard fg(fusion());
  // The new tensor becomes the fusion output and keeps the user's layout;
  // this one stays an intermediate and keeps the layout only on request.
  auto* output = freshLogicalCopy(this);
  IrBuilder::create<LoadStoreOp>(LoadStoreOpType::Set, output, this);
  fusion()->replaceOutput(this, output);
  setMemoryType(MemoryType::Local);
  TransformReplay::replayCasP(
      output, this, -1,
      TransformReplayOptions().replayAllocation(hasAllocation()));
  if (!replay_allocation && hasAllocation()) {
    domain_ = IrBuilder::create<TensorDomain>(
        getRootDomain(), getLogicalDomain(), std::vector<IterDomain*>{},
        getLoopDomain(),
        TensorDomain::getContiguityFilledWith(getLogicalDomain(), true));
    domain_->owner_ = this;
  }
  return output;
}

} // namespace fuser
