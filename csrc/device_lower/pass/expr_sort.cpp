// Tensor exprs in execution order (doc/design.md §5). Every producer
// precedes its consumers, and the exprs that run in one loop come one
// after another: generateLoopNests can only share a loop with the exprs
// directly before it.
//
// A producer inlined at k (its compute-at position) runs in its consumer's
// loops 0..k-1, so the two share the loop at every depth d < k. Joining
// producer and consumer for every such edge gives, at each depth d, the
// sets of exprs that share one loop at depth d (connected components); the
// sets at depth d + 1 partition those at depth d. The order emits each set
// contiguously: the sets at depth 0 (loop nests) in a topological order of
// their dependences, and within each the sets at depth 1 likewise, and so
// on. So a statistic computed at depth 2 in a nest of its own closes that
// nest before the exprs that share deeper loops with a later consumer
// open theirs, whatever order the fusion lists them in. Among the sets
// ready at one depth, loads of fusion inputs into registers come first
// and reductions across threads last: a load's latency then overlaps the
// work before the barrier of the block's next reduction, and every
// partial independent of a reduction is computed before that barrier (a
// layer norm backward's two row sums read x only in the second; in fusion
// order x would be loaded after the first sum's barrier). Scalar exprs
// are not scheduled: codegen prints scalars inline.
#include <device_lower/passes.h>

#include <ir/all_nodes.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>
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

// Where a set of exprs goes among those ready with it: 0 (first) for a
// set that loads a fusion input into registers, 2 (last) for one that
// reduces across threads or blocks, 1 otherwise. (Copies into shared
// memory keep their place: their pipelines order them.)
int64_t readiness(Expr* expr) {
  if (expr->isA<ReductionOp>()) {
    for (IterDomain* id : expr->output(0)->as<TensorView>()->getLoopDomain()) {
      if (id->isReduction() && id->isThread()) {
        return 2;
      }
    }
  }
  if (expr->isA<LoadStoreOp>()) {
    auto* in = dynamic_cast<TensorView*>(expr->input(0));
    auto* out = dynamic_cast<TensorView*>(expr->output(0));
    if (in != nullptr && in->isFusionInput() && out != nullptr &&
        out->getMemoryType() == MemoryType::Local) {
      return 0;
    }
  }
  return 1;
}

class LoopOrder {
 public:
  explicit LoopOrder(const std::vector<Expr*>& exprs) : exprs_(exprs) {
    for (size_t i = 0; i < exprs_.size(); ++i) {
      index_[exprs_[i]] = i;
    }
    for (size_t i = 0; i < exprs_.size(); ++i) {
      for (Val* in : exprs_[i]->inputs()) {
        Expr* def = in->isA<TensorView>() ? in->definition() : nullptr;
        auto it = def != nullptr ? index_.find(def) : index_.end();
        if (it != index_.end()) {
          edges_.push_back({it->second, i, computeAt(def)});
        }
      }
    }
  }

  std::vector<Expr*> run() {
    std::vector<size_t> all(exprs_.size());
    std::iota(all.begin(), all.end(), 0);
    order(all, 0);
    return sorted_;
  }

 private:
  struct Edge {
    size_t producer;
    size_t consumer;
    int64_t shared; // loops the two share
  };

  // Emits `members` (indices, all sharing the loops above `depth`): their
  // sets sharing the loop at `depth`, in dependence order, each
  // recursively.
  void order(const std::vector<size_t>& members, int64_t depth) {
    if (members.size() == 1) {
      sorted_.push_back(exprs_[members.front()]);
      return;
    }
    std::unordered_map<size_t, size_t> local;
    for (size_t k = 0; k < members.size(); ++k) {
      local[members[k]] = k;
    }
    // Components joined by the edges that share the loop at `depth`.
    std::vector<size_t> parent(members.size());
    std::iota(parent.begin(), parent.end(), 0);
    std::function<size_t(size_t)> find = [&](size_t x) {
      return parent[x] == x ? x : parent[x] = find(parent[x]);
    };
    std::vector<std::pair<size_t, size_t>> dependences;
    for (const Edge& e : edges_) {
      auto p = local.find(e.producer);
      auto c = local.find(e.consumer);
      if (p == local.end() || c == local.end()) {
        continue;
      }
      if (e.shared > depth) {
        parent[find(p->second)] = find(c->second);
      } else {
        dependences.emplace_back(p->second, c->second);
      }
    }
    std::unordered_map<size_t, std::vector<size_t>> components;
    std::vector<size_t> roots; // by first member, in the given order
    for (size_t k = 0; k < members.size(); ++k) {
      auto [it, fresh] = components.try_emplace(find(k));
      if (fresh) {
        roots.push_back(find(k));
      }
      it->second.push_back(members[k]);
    }
    if (roots.size() == 1) {
      // One set shares this loop too: look one loop deeper. Past every
      // shared loop the members are their own sets.
      order(members, depth + 1);
      return;
    }
    // Components in dependence order; among ready ones, by readiness,
    // then the one whose first expr comes first in the fusion's order.
    std::unordered_map<size_t, std::unordered_set<size_t>> successors;
    std::unordered_map<size_t, int64_t> waiting;
    for (auto [p, c] : dependences) {
      const size_t a = find(p);
      const size_t b = find(c);
      if (a != b && successors[a].insert(b).second) {
        ++waiting[b];
      }
    }
    std::unordered_map<size_t, int64_t> place;
    for (size_t root : roots) {
      place[root] = placeOf(components.at(root));
    }
    auto first = [&](size_t root) { return components.at(root).front(); };
    auto later = [&](size_t a, size_t b) {
      return std::make_pair(place.at(a), first(a)) >
             std::make_pair(place.at(b), first(b));
    };
    std::priority_queue<size_t, std::vector<size_t>, decltype(later)> ready(
        later);
    for (size_t root : roots) {
      if (waiting[root] == 0) {
        ready.push(root);
      }
    }
    size_t emitted = 0;
    while (!ready.empty()) {
      const size_t root = ready.top();
      ready.pop();
      order(components.at(root), depth + 1);
      ++emitted;
      for (size_t next : successors[root]) {
        if (--waiting[next] == 0) {
          ready.push(next);
        }
      }
    }
    FUSER_CHECK(
        emitted == roots.size(),
        "The inlining of this fusion leaves no order for its loops: two "
        "groups of exprs that share a loop at depth ",
        depth,
        " each need the other's results first. Inline the producers that "
        "one of them reads less deeply.");
  }

  // A set's place among those ready with it: last when one of its exprs
  // reduces across threads, else first when one loads an input.
  int64_t placeOf(const std::vector<size_t>& members) const {
    int64_t place = 1;
    for (size_t member : members) {
      const int64_t r = readiness(exprs_[member]);
      if (r == 2) {
        return 2;
      }
      place = std::min(place, r);
    }
    return place;
  }

  const std::vector<Expr*>& exprs_;
  std::unordered_map<Expr*, size_t> index_;
  std::vector<Edge> edges_;
  std::vector<Expr*> sorted_;
};

} // namespace

std::vector<Expr*> sortExprsForInlining(const std::vector<Expr*>& exprs) {
  // `exprs` is topologically ordered (Fusion::exprs() is a post-order walk
  // from the outputs).
  std::vector<Expr*> tensor_exprs;
  for (Expr* expr : exprs) {
    if (writesTensor(expr)) {
      tensor_exprs.push_back(expr);
    }
  }
  return LoopOrder(tensor_exprs).run();
}

} // namespace fuser
