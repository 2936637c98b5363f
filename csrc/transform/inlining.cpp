#include <transform/inlining.h>

#include <id_model/id_model.h>
#include <ir/all_nodes.h>

#include <algorithm>
#include <sstream>
#include <unordered_set>

namespace fuser {

namespace {

std::vector<TensorView*> consumersOf(TensorView* tv) {
  std::vector<TensorView*> consumers;
  for (Expr* use : tv->uses()) {
    for (Val* out : use->outputs()) {
      if (auto* c = dynamic_cast<TensorView*>(out)) {
        consumers.push_back(c);
      }
    }
  }
  return consumers;
}

// `tv` and every tensor computed from it.
std::unordered_set<TensorView*> descendantsOf(TensorView* tv) {
  std::unordered_set<TensorView*> seen = {tv};
  std::vector<TensorView*> stack = {tv};
  while (!stack.empty()) {
    TensorView* current = stack.back();
    stack.pop_back();
    for (TensorView* consumer : consumersOf(current)) {
      if (seen.insert(consumer).second) {
        stack.push_back(consumer);
      }
    }
  }
  return seen;
}

// Whether `tv` or a tensor computed from it is also computed from
// `reducing`: then `tv` runs in the loops of an expr after the reduction
// (x - broadcast(sum(x)), or (x + bias) - broadcast(sum(x)), where x + bias
// itself does not depend on the sum but is inlined into what does). Not
// when `tv` feeds the reduction: it runs before it.
bool meetsResultOf(TensorView* tv, TensorView* reducing) {
  const std::unordered_set<TensorView*> after = descendantsOf(reducing);
  if (after.count(tv)) {
    return true;
  }
  const std::unordered_set<TensorView*> from_tv = descendantsOf(tv);
  return !from_tv.count(reducing) &&
         std::any_of(from_tv.begin(), from_tv.end(), [&](TensorView* d) {
           return after.count(d) != 0;
         });
}

// `tv` and the tensors computed from it that a reduction defines.
std::vector<TensorView*> reductionsFrom(TensorView* tv) {
  std::vector<TensorView*> found;
  for (TensorView* d : descendantsOf(tv)) {
    if (d->definition() != nullptr && d->definition()->isA<ReductionOp>()) {
      found.push_back(d);
    }
  }
  // In creation order, so that the reason reported does not depend on
  // pointer hashing.
  std::sort(found.begin(), found.end(), [](TensorView* a, TensorView* b) {
    return a->name() < b->name();
  });
  return found;
}

// Largest position and the reason it stops there.
int64_t maxInlinePosition(
    TensorView* tv, IdModel& id_model, std::string* reason) {
  if (tv->isFusionInput()) {
    if (reason) {
      *reason = "it is a fusion input, which is read, not computed";
    }
    return 0;
  }
  const auto& loop = tv->getLoopDomain();
  int64_t limit = tv->nDims();
  for (int64_t i = 0; i < tv->nDims(); ++i) {
    IterDomain* id = loop[static_cast<size_t>(i)];
    if (id->isReduction()) {
      limit = i;
      if (reason) {
        *reason = "loop axis " + std::to_string(i) + " (" + id->toString() +
                  ") is a reduction axis";
      }
      break;
    }
    const ParallelType pt = id->getParallelType();
    if (pt == ParallelType::Vectorize || pt == ParallelType::Group ||
        pt == ParallelType::Mma) {
      limit = i;
      if (reason) {
        *reason = "loop axis " + std::to_string(i) + " is " +
                  (pt == ParallelType::Group
                       ? "grouped"
                       : (pt == ParallelType::Mma ? "a tensor-core axis"
                                                  : "vectorized"));
      }
      break;
    }
  }
  for (TensorView* consumer : consumersOf(tv)) {
    const auto& consumer_loop = consumer->getLoopDomain();
    int64_t mapped = 0;
    // A vectorized (grouped) consumer axis must stay a loop of its own copy
    // (reduction).
    auto own_loop = [&](int64_t k) {
      const ParallelType pt =
          consumer_loop[static_cast<size_t>(k)]->getParallelType();
      return pt == ParallelType::Vectorize || pt == ParallelType::Group;
    };
    while (mapped < limit && mapped < consumer->nDims() && !own_loop(mapped) &&
           id_model.loopMapped(
               loop[static_cast<size_t>(mapped)],
               consumer_loop[static_cast<size_t>(mapped)])) {
      ++mapped;
    }
    if (mapped < limit) {
      limit = mapped;
      if (reason) {
        std::stringstream ss;
        ss << "loop axis " << mapped << " of " << tv->toString()
           << " does not map to loop axis " << mapped << " of consumer "
           << consumer->toString()
           << " (schedule them alike, e.g. with TransformPropagator)";
        *reason = ss.str();
      }
    }
  }
  // A reduction with its loop at axis r (a consumer of `tv`, or computed
  // from one) finishes that loop before anything that depends on its
  // result runs. If another consumer of `tv` meets its result (x -
  // broadcast(sum(x)), or x * rsqrt(mean(x * x))), the two run in
  // different loops from axis r on, and `tv` can be computed inside both
  // only above r: it is held across the reduction (doc/normalization.md).
  const std::vector<TensorView*> consumers = consumersOf(tv);
  for (TensorView* first : consumers) {
    for (TensorView* reducing : reductionsFrom(first)) {
      const auto& reducing_loop = reducing->getLoopDomain();
      int64_t r = 0;
      while (r < reducing->nDims() &&
             !reducing_loop[static_cast<size_t>(r)]->isReduction()) {
        ++r;
      }
      if (r >= limit) {
        continue;
      }
      for (TensorView* other : consumers) {
        if (other != first && other != reducing &&
            meetsResultOf(other, reducing)) {
          limit = r;
          if (reason) {
            *reason = "its consumer " + other->toString() +
                      " depends on the reduction " + reducing->toString() +
                      " (at loop axis " + std::to_string(r) +
                      ") that its consumer " + first->toString() +
                      " feeds, so the two cannot share that loop";
          }
          break;
        }
      }
    }
  }
  return limit;
}

void inlineAtImpl(
    TensorView* tv, int64_t pos, bool best_effort, IdModel& id_model) {
  const int64_t n = tv->nDims();
  FUSER_CHECK(
      pos >= -n - 1 && pos <= n, "inlineAt(", pos, ") of ", tv->toString(),
      ": position out of range [", -n - 1, ", ", n, "].");
  if (pos < 0) {
    pos += n + 1;
  }
  std::string reason;
  int64_t max_pos = maxInlinePosition(tv, id_model, &reason);
  if (pos > max_pos) {
    FUSER_CHECK(
        best_effort, "Cannot inline ", tv->toString(), " at position ", pos,
        ": the most allowed is ", max_pos, " because ", reason, ".");
    pos = max_pos;
  }
  // Keep an earlier, deeper inlining only if it is still valid.
  pos = std::max(pos, std::min(tv->getComputeAtPosition(), max_pos));
  tv->setComputeAt(pos);
  for (TensorView* consumer : consumersOf(tv)) {
    consumer->setMaxProducer(std::max(consumer->getMaxProducerPosition(), pos));
  }
}

// Whether `consumer`'s compute-at position caps its producers'. Not when
// it is not inlined (a loop nest owner), nor when it stops at a reduction
// axis of its own: its producers run inside the loop it reduces, its
// readers after it (maxInlinePosition keeps a producer's consumers that
// meet its result out of that loop). An inner-outer kernel's column
// partial stops at the loop over the rows, whose buffers its producers
// read (doc/normalization.md §9).
bool capsProducers(TensorView* consumer) {
  const int64_t pos = consumer->getComputeAtPosition();
  return pos > 0 &&
         !(pos < consumer->nDims() && consumer->axis(pos)->isReduction());
}

// A producer is computed no deeper than the shallowest of its consumers
// that cap it (capsProducers): its inner loops past that point would have
// to be shared by exprs that other loops (a vectorized output copy, say)
// can separate. Only axes of constant extent are given up this way, so
// the register buffer stays of constant size. A cap reaches the producers
// of the capped tensor in turn: repeated until nothing changes, so the
// result does not depend on the order of `tvs` (a scheduler that listed
// them from a pointer-keyed set left a producer deeper than its consumer,
// and the loop nests could not be built).
void capToConsumers(const std::vector<TensorView*>& tvs) {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (auto it = tvs.rbegin(); it != tvs.rend(); ++it) {
      TensorView* tv = *it;
      if (tv->isFusionInput()) {
        continue;
      }
      int64_t cap = tv->getComputeAtPosition();
      for (TensorView* consumer : consumersOf(tv)) {
        if (capsProducers(consumer)) {
          cap = std::min(cap, consumer->getComputeAtPosition());
        }
      }
      for (int64_t i = cap; i < tv->getComputeAtPosition(); ++i) {
        if (!tv->axis(i)->extent()->isConstInt()) {
          cap = tv->getComputeAtPosition();
          break;
        }
      }
      if (cap < tv->getComputeAtPosition()) {
        tv->setComputeAt(cap);
        changed = true;
        again = true;
      }
    }
  }
  if (!changed) {
    return;
  }
  // Produce positions follow from the producers' compute-at positions.
  for (TensorView* tv : tvs) {
    int64_t produce = 0;
    if (Expr* def = tv->definition()) {
      for (Val* in : def->inputs()) {
        if (auto* producer = dynamic_cast<TensorView*>(in)) {
          produce = std::max(produce, producer->getComputeAtPosition());
        }
      }
    }
    tv->setMaxProducer(produce);
  }
}

} // namespace

int64_t getMaxInlinePosition(TensorView* tv) {
  IdModel id_model(tv->fusion());
  return maxInlinePosition(tv, id_model, nullptr);
}

void inlineMost(const std::vector<TensorView*>& tvs) {
  if (tvs.empty()) {
    return;
  }
  IdModel id_model(tvs.front()->fusion());
  for (TensorView* tv : tvs) {
    if (!tv->isFusionInput()) {
      inlineAtImpl(tv, -1, /*best_effort=*/true, id_model);
    }
  }
  capToConsumers(tvs);
}

void inlineMost(Fusion* fusion) {
  inlineMost(fusion->allTvs());
}

void TensorView::inlineAt(int64_t pos, bool best_effort) {
  IdModel id_model(fusion());
  inlineAtImpl(this, pos, best_effort, id_model);
}

} // namespace fuser
