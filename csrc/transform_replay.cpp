#include <transform_replay.h>

#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>

#include <algorithm>
#include <sstream>
#include <unordered_set>

namespace fuser {

namespace {

bool contains(const std::vector<IterDomain*>& ids, const IterDomain* id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Makes the same kind of expr as `expr` on `inputs`, reusing an identical
// expr made earlier in the same replay so loop and allocation share IDs
// where the source shared them.
std::vector<IterDomain*> makeLike(
    Expr* expr, const std::vector<IterDomain*>& inputs,
    std::vector<Expr*>& created) {
  for (Expr* candidate : created) {
    if (candidate->getOpString() != expr->getOpString() ||
        !candidate->attributesMatch(expr)) {
      continue;
    }
    bool same_inputs = candidate->inputs().size() == inputs.size();
    for (size_t i = 0; same_inputs && i < inputs.size(); ++i) {
      same_inputs = candidate->input(i) == inputs[i];
    }
    if (same_inputs) {
      std::vector<IterDomain*> outputs;
      for (Val* out : candidate->outputs()) {
        outputs.push_back(out->as<IterDomain>());
      }
      return outputs;
    }
  }
  if (auto* split = dynamic_cast<Split*>(expr)) {
    auto [outer, inner] =
        IterDomain::split(inputs[0], split->factor(), split->innerSplit());
    created.push_back(outer->definition());
    return {outer, inner};
  }
  auto* merge = dynamic_cast<Merge*>(expr);
  FUSER_INTERNAL_ASSERT(merge != nullptr, "cannot replay ", expr->toString());
  IterDomain* out = IterDomain::merge(inputs[0], inputs[1]);
  created.push_back(out->definition());
  return {out};
}

// Replays `exprs` and records the target exprs it created.
std::vector<Expr*> replayExprsImpl(
    const std::vector<Expr*>& exprs, IdMap& id_map, bool forward_broadcast,
    std::vector<Expr*>& created) {
  std::vector<Expr*> skipped;
  for (Expr* expr : exprs) {
    std::vector<IterDomain*> inputs;
    std::vector<IterDomain*> unmapped;
    for (Val* input : expr->inputs()) {
      auto* id = input->as<IterDomain>();
      auto it = id_map.find(id);
      if (it == id_map.end()) {
        unmapped.push_back(id);
      } else {
        inputs.push_back(it->second);
      }
    }
    if (unmapped.empty()) {
      auto outputs = makeLike(expr, inputs, created);
      for (size_t i = 0; i < outputs.size(); ++i) {
        id_map[expr->output(i)->as<IterDomain>()] = outputs[i];
      }
      continue;
    }
    // A merge with a broadcast the target lacks: the target axis stands in
    // for the merged one.
    if (forward_broadcast && expr->isA<Merge>() && unmapped.size() == 1 &&
        unmapped[0]->isBroadcast() && inputs.size() == 1) {
      id_map[expr->output(0)->as<IterDomain>()] = inputs[0];
      continue;
    }
    skipped.push_back(expr);
  }
  return skipped;
}

[[noreturn]] void failAllocationReplay(
    TensorView* source, TensorView* target, const std::string& why) {
  std::stringstream ss;
  ss << "Cannot replay the allocation domain of " << source->toString()
     << " onto " << target->toString() << " (replay_allocation=true): " << why
     << " Set " << target->toString()
     << "'s allocation explicitly with setAllocationDomain, or replay "
        "without replay_allocation.";
  FUSER_CHECK(false, ss.str());
  FUSER_ERROR("unreachable");
}

// Replays source logical -> allocation onto the target's logical IDs.
// `seed` maps source logical IDs to target logical IDs.
void replayAllocation(
    TensorView* source, TensorView* target, const IdMap& seed,
    std::vector<IterDomain*>& allocation, Contiguity& contiguity,
    std::vector<Expr*>& created) {
  if (source->hasReduction() || target->hasReduction()) {
    failAllocationReplay(
        source, target,
        "the two are connected by a reduction, whose reduced axes have no "
        "layout to carry.");
  }
  IdMap id_map;
  for (auto [s, t] : seed) {
    if (contains(source->getLogicalDomain(), s) &&
        contains(target->getLogicalDomain(), t)) {
      id_map[s] = t;
    }
  }
  const auto& source_alloc = source->getMaybeAllocationDomain();
  auto skipped = replayExprsImpl(
      getExprsBetween(source->getLogicalDomain(), source_alloc), id_map,
      /*forward_broadcast=*/false, created);
  if (!skipped.empty()) {
    failAllocationReplay(
        source, target,
        skipped.front()->toString() +
            " uses an axis that has no "
            "counterpart in the target (a reshape or broadcast between them "
            "does not carry it).");
  }
  allocation.clear();
  contiguity.clear();
  const auto& source_contiguity = source->getContiguity();
  for (size_t i = 0; i < source_alloc.size(); ++i) {
    IterDomain* s = source_alloc[i];
    auto it = id_map.find(s);
    if (it == id_map.end()) {
      if (s->isBroadcast()) {
        continue; // a broadcast the target lacks takes no memory
      }
      failAllocationReplay(
          source, target,
          s->toString() + " has no counterpart in " + target->toString() +
              " (a reshape between them does not carry it).");
    }
    IterDomain* t = it->second;
    allocation.push_back(t);
    if (t->isBroadcast()) {
      contiguity.push_back(std::nullopt);
    } else {
      contiguity.push_back(source_contiguity[i].value_or(false));
    }
    if (s->getParallelType() != ParallelType::Serial) {
      t->parallelize(s->getParallelType());
    }
  }
  // Target axes the source lacks: broadcasts take no memory and go last.
  std::unordered_set<IterDomain*> images;
  for (auto [s, t] : id_map) {
    images.insert(t);
  }
  for (IterDomain* t : target->getLogicalDomain()) {
    if (images.count(t)) {
      continue;
    }
    if (!t->isBroadcast()) {
      failAllocationReplay(
          source, target,
          t->toString() + " of the target has no counterpart in the source.");
    }
    allocation.push_back(t);
    contiguity.push_back(std::nullopt);
  }
  if (allocation == target->getLogicalDomain()) {
    allocation.clear(); // the logical order: no allocation domain needed
  }
}

int64_t normalizePos(TensorView* tv, int64_t pos) {
  const int64_t n = tv->nDims();
  FUSER_CHECK(
      pos >= -n - 1 && pos <= n, "Replay position ", pos,
      " is out of range for ", tv->toString(), " with ", n,
      " loop axes; use a value in [", -n - 1, ", ", n, "] (-1 = all).");
  return pos < 0 ? pos + n + 1 : pos;
}

// Where the replay of `source`'s transforms starts: its logical domain, or
// its root when the seed maps root IDs (a consumer replayed onto its
// producer: the consumer's root -> logical transforms, an rFactor's split
// reduction say, apply to the producer too).
const std::vector<IterDomain*>& sourceStart(
    TensorView* source, const IdMap& seed) {
  if (source->hasRoot()) {
    for (IterDomain* id : source->getRootDomain()) {
      if (seed.count(id) && !contains(source->getLogicalDomain(), id)) {
        return source->getRootDomain();
      }
    }
  }
  return source->getLogicalDomain();
}

// Replays `source`'s loop [0, pos) onto `target` through `seed` (source
// logical/root ID -> target root ID), then the allocation if asked.
std::pair<TensorDomain*, int64_t> replay(
    TensorView* target, TensorView* source, int64_t pos, const IdMap& seed,
    const TransformReplayOptions& opt) {
  FUSER_CHECK(
      target->getComputeAtPosition() == 0 &&
          target->getMaxProducerPosition() == 0,
      "Cannot replay ", source->toString(), " onto ", target->toString(),
      ": the target is already inlined. Replay before inlining.");
  FusionGuard fg(target->fusion());
  pos = normalizePos(source, pos);

  const auto& target_logical = target->getLogicalDomain();
  IdMap id_map;
  for (auto [s, t] : seed) {
    if (contains(target_logical, t)) {
      id_map[s] = t;
    }
  }
  const auto& source_loop = source->getLoopDomain();
  std::vector<IterDomain*> wanted(
      source_loop.begin(), source_loop.begin() + pos);
  std::vector<Expr*> created;
  replayExprsImpl(
      getExprsBetween(sourceStart(source, seed), wanted), id_map,
      /*forward_broadcast=*/true, created);

  std::vector<IterDomain*> loop;
  for (IterDomain* s : wanted) {
    auto it = id_map.find(s);
    if (it != id_map.end() && !contains(loop, it->second)) {
      loop.push_back(it->second);
    }
  }
  const auto target_pos = static_cast<int64_t>(loop.size());
  for (IterDomain* t : applyExprsToFrontier(target_logical, created)) {
    if (!contains(loop, t)) {
      loop.push_back(t);
    }
  }

  std::vector<IterDomain*> allocation = target->getAllocationDomain();
  Contiguity contiguity = target->getContiguity();
  if (opt.replay_allocation) {
    // An allocation equal to the logical order comes back empty (unset);
    // its contiguity is then already in logical order.
    replayAllocation(source, target, seed, allocation, contiguity, created);
  }
  auto* domain = IrBuilder::create<TensorDomain>(
      target->getRootDomain(), target_logical, allocation, loop, contiguity);
  target->setDomain(domain);
  return {domain, target_pos};
}

} // namespace

std::vector<Expr*> TransformReplay::replayExprs(
    const std::vector<Expr*>& exprs, IdMap& id_map, bool forward_broadcast) {
  std::vector<Expr*> created;
  return replayExprsImpl(exprs, id_map, forward_broadcast, created);
}

std::pair<TensorDomain*, int64_t> TransformReplay::replayPasC(
    TensorView* producer, TensorView* consumer, int64_t pos,
    const TransformReplayOptions& opt) {
  IdMap seed =
      PairwiseLogicalDomainMap(producer, consumer).mapConsumerToProducer();
  return replay(producer, consumer, pos, seed, opt);
}

std::pair<TensorDomain*, int64_t> TransformReplay::replayCasP(
    TensorView* consumer, TensorView* producer, int64_t pos,
    const TransformReplayOptions& opt) {
  IdMap seed =
      PairwiseLogicalDomainMap(producer, consumer).mapProducerToConsumer();
  return replay(consumer, producer, pos, seed, opt);
}

} // namespace fuser
