#include <segmentation/segmenter.h>

#include <ir/all_nodes.h>
#include <ops/alias.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace fuser {

namespace {

// Whether `exprs` only slice or permute: ATen runs them as views (no
// kernel, no copy), or a kernel beside them reads their input in place
// (doc/segmentation.md §2).
bool onlySlicesAndPermutes(const std::vector<Expr*>& exprs) {
  return std::all_of(exprs.begin(), exprs.end(), [](const Expr* e) {
    auto* resize = dynamic_cast<const ResizeOp*>(e);
    return (resize != nullptr && resize->opType() == ResizeOpType::Slice) ||
           permutationOf(e).has_value();
  });
}

// One edge of the group graph: the producer's values the consumer reads.
struct Edge {
  size_t producer = 0;
  size_t consumer = 0;
  int64_t bytes = 0;
  // A segment_set output: never merged.
  bool cut = false;
};

class Segmenter {
 public:
  Segmenter(
      const Fusion* complete, const std::vector<Expr*>& exprs,
      SegmentScheduling& scheduling)
      : complete_(complete), exprs_(exprs), scheduling_(scheduling) {
    live_.insert(exprs_.begin(), exprs_.end());
    for (size_t i = 0; i < exprs_.size(); ++i) {
      position_[exprs_[i]] = i;
    }
  }

  std::vector<std::vector<Expr*>> run() {
    if (exprs_.empty()) {
      return {};
    }
    // One group per expr, except that a value no tensor can hold between
    // segments (a Welford state) keeps its producer and readers together.
    for (std::vector<Expr*>&exprs :
         connectedGroups(exprs_, [](const Val*value, const Expr*) {
           return isWelfordType(value->dtype());
         })) {
      // Views of what ATen computes stay ATen's views (no copy kernel).
      const bool aten_view =
          onlySlicesAndPermutes(exprs) && viewsAnAtenResult(exprs);
      const bool compiled =
          !aten_view && accepts(exprs) && !roundsAnAtenProduct(exprs);
      const bool views_only = !aten_view && onlySlicesAndPermutes(exprs);
      addNode(std::move(exprs), compiled, views_only);
    }
    while (mergeOnce()) {
    }
    std::vector<std::vector<Expr*>> groups;
    for (const Node& node : nodes_) {
      if (node.alive) {
        groups.push_back(node.exprs);
      }
    }
    return groups;
  }

 private:
  struct Node {
    std::vector<Expr*> exprs; // topologically
    // Some scheduler other than ExprEval takes it.
    bool compiled = false;
    // It only slices or permutes: merged with a kernel, the kernel reads
    // its input in place (doc/ops.md, "Slicing, padding and
    // concatenation"); merged with ATen's groups, ATen's views (a permuted
    // operand of a product is no copy: cuBLAS reads it transposed).
    bool views_only = false;
    bool alive = true;

    bool fusable() const {
      return compiled || views_only;
    }
  };

  // Whether `exprs` is the cast that rounds a product no kernel computes
  // to its operands' type, or the copy a float product is handed on
  // through (onlyResultExpr): ATen then computes the product in that type
  // (half the bytes written and no kernel for the cast; no copy kernel),
  // so it joins the product's segment.
  bool roundsAnAtenProduct(const std::vector<Expr*>& exprs) const {
    if (exprs.size() != 1) {
      return false;
    }
    auto* mma = dynamic_cast<MmaOp*>(exprs[0]->input(0)->definition());
    return mma != nullptr && onlyResultExpr(mma) == exprs[0] &&
           node_of_.count(mma) && !nodes_[node_of_.at(mma)].compiled;
  }

  // Whether `exprs` (slices and permutes) view only what ATen's groups
  // compute: they stay on ATen's side, whose views later kernels read
  // through their strides (runtime/handed_views.h), so that every reader
  // of the view reads it in place. Joined to one kernel instead, a view
  // that other groups also read would be written out by that kernel (a
  // permute of a product's heads, whose halves the rotation reads).
  bool viewsAnAtenResult(const std::vector<Expr*>& exprs) const {
    bool any = false;
    for (Expr* expr : exprs) {
      for (Val* in : expr->inputs()) {
        if (!in->isA<TensorView>()) {
          continue;
        }
        Expr* def = in->definition();
        if (def == nullptr || !live_.count(def)) {
          return false; // a fusion input: a kernel reads it in place
        }
        auto it = node_of_.find(def);
        if (it == node_of_.end()) {
          continue; // within `exprs`
        }
        const Node& producer = nodes_[it->second];
        if (producer.compiled || producer.views_only) {
          return false;
        }
        any = true;
      }
    }
    return any;
  }

  bool accepts(const std::vector<Expr*>& exprs) {
    SegmentedGroup group(complete_, exprs, live_);
    return scheduling_.compiledScheduler(group).has_value();
  }

  size_t addNode(std::vector<Expr*> exprs, bool compiled, bool views_only) {
    const size_t id = nodes_.size();
    for (Expr* expr : exprs) {
      node_of_[expr] = id;
    }
    nodes_.push_back(Node{std::move(exprs), compiled, views_only, true});
    return id;
  }

  // The edges between the live groups, each producer-consumer pair once.
  std::vector<Edge> edges() {
    std::map<std::pair<size_t, size_t>, Edge> found;
    std::set<std::pair<size_t, const Val*>> counted;
    for (size_t c = 0; c < nodes_.size(); ++c) {
      if (!nodes_[c].alive) {
        continue;
      }
      for (Expr* expr : nodes_[c].exprs) {
        for (Val* in : expr->inputs()) {
          Expr* def = in->definition();
          if (!in->isA<TensorView>() || def == nullptr || !live_.count(def) ||
              node_of_.at(def) == c) {
            continue;
          }
          const size_t p = node_of_.at(def);
          Edge& edge = found[{p, c}];
          edge.producer = p;
          edge.consumer = c;
          edge.cut |= isSegmenterSet(def);
          if (counted.emplace(c, in).second) {
            edge.bytes += scheduling_.bytes(in->as<TensorView>());
          }
        }
      }
    }
    std::vector<Edge> result;
    for (auto& [key, edge] : found) {
      result.push_back(edge);
    }
    return result;
  }

  // The groups on some path from `from` to `to`, both included.
  std::vector<size_t> between(
      const std::vector<Edge>& edges, size_t from, size_t to) const {
    auto reach = [&](size_t start, bool forward) {
      std::unordered_set<size_t> seen{start};
      std::vector<size_t> stack{start};
      while (!stack.empty()) {
        const size_t n = stack.back();
        stack.pop_back();
        for (const Edge& e : edges) {
          const size_t a = forward ? e.producer : e.consumer;
          const size_t b = forward ? e.consumer : e.producer;
          if (a == n && seen.insert(b).second) {
            stack.push_back(b);
          }
        }
      }
      return seen;
    };
    const std::unordered_set<size_t> after = reach(from, true);
    const std::unordered_set<size_t> before = reach(to, false);
    std::vector<size_t> result;
    for (size_t n : after) {
      if (before.count(n)) {
        result.push_back(n);
      }
    }
    std::sort(result.begin(), result.end());
    return result;
  }

  // Whether a merge of the `compiled` pass may take the group: a compiled
  // one may take slices and permutes (which a kernel then reads in place);
  // an ATen one takes the groups not compiled, and slices and permutes.
  bool joins(size_t id, bool compiled) const {
    return compiled ? nodes_[id].fusable()
                    : !nodes_[id].compiled || nodes_[id].views_only;
  }

  // Whether the groups can become one: all joining the `compiled` pass's
  // merges, and no segment_set edge among them.
  bool mergeable(
      const std::vector<Edge>& edges, const std::vector<size_t>& ids,
      bool compiled) const {
    const std::unordered_set<size_t> members(ids.begin(), ids.end());
    for (size_t id : ids) {
      if (!joins(id, compiled)) {
        return false;
      }
    }
    return std::none_of(edges.begin(), edges.end(), [&](const Edge& e) {
      return e.cut && members.count(e.producer) && members.count(e.consumer);
    });
  }

  size_t firstPosition(size_t id) const {
    return position_.at(nodes_[id].exprs.front());
  }

  // Tries the candidate merges of compiled groups, largest intermediate
  // first, then of groups run through ATen (one segment evaluates them
  // together: fewer launches, and a view between them stays a view);
  // true when one was accepted.
  bool mergeOnce() {
    return mergeOnce(/*compiled=*/true) || mergeSiblings() ||
           mergeOnce(/*compiled=*/false);
  }

  // The tensors the group reads from outside it.
  std::set<const Val*> readsOf(size_t id) const {
    std::set<const Val*> reads;
    for (Expr* expr : nodes_[id].exprs) {
      for (Val* in : expr->inputs()) {
        Expr* def = in->definition();
        if (in->isA<TensorView>() &&
            (def == nullptr || !live_.count(def) || node_of_.at(def) != id)) {
          reads.insert(in);
        }
      }
    }
    return reads;
  }

  // When no producer and consumer merge: two compiled groups that read a
  // common tensor and lie on no path between each other, largest common
  // read first. One kernel then reads it once (a layer norm backward's
  // weight and bias gradients both reduce dy over the rows; batch norm
  // backward's two per-channel sums read dy and x).
  bool mergeSiblings() {
    const std::vector<Edge> all = edges();
    struct Pair {
      size_t a = 0;
      size_t b = 0;
      int64_t bytes = 0;
    };
    std::vector<Pair> pairs;
    std::vector<size_t> live_ids;
    std::unordered_map<size_t, std::set<const Val*>> reads;
    for (size_t id = 0; id < nodes_.size(); ++id) {
      if (nodes_[id].alive && nodes_[id].compiled) {
        live_ids.push_back(id);
        reads[id] = readsOf(id);
      }
    }
    for (size_t i = 0; i < live_ids.size(); ++i) {
      for (size_t j = i + 1; j < live_ids.size(); ++j) {
        const size_t a = live_ids[i];
        const size_t b = live_ids[j];
        int64_t bytes = 0;
        for (const Val* v : reads[a]) {
          if (reads[b].count(v)) {
            bytes += scheduling_.bytes(v->as<TensorView>());
          }
        }
        if (bytes > 0 && between(all, a, b).empty() &&
            between(all, b, a).empty()) {
          pairs.push_back({a, b, bytes});
        }
      }
    }
    std::stable_sort(
        pairs.begin(), pairs.end(),
        [](const Pair& x, const Pair& y) { return x.bytes > y.bytes; });
    for (const Pair& pair : pairs) {
      if (tryMerge(all, {pair.a, pair.b}, /*compiled=*/true)) {
        return true;
      }
    }
    return false;
  }

  bool mergeOnce(bool compiled) {
    std::vector<Edge> all = edges();
    std::vector<Edge> candidates;
    for (const Edge& e : all) {
      if (!e.cut && joins(e.producer, compiled) &&
          joins(e.consumer, compiled)) {
        candidates.push_back(e);
      }
    }
    std::stable_sort(
        candidates.begin(), candidates.end(),
        [&](const Edge& a, const Edge& b) {
          if (a.bytes != b.bytes) {
            return a.bytes > b.bytes;
          }
          return std::make_pair(
                     firstPosition(a.producer), firstPosition(a.consumer)) <
                 std::make_pair(
                     firstPosition(b.producer), firstPosition(b.consumer));
        });
    for (const Edge& e : candidates) {
      if (tryMerge(all, between(all, e.producer, e.consumer), compiled)) {
        return true;
      }
    }
    return false;
  }

  // Merges the groups `ids` into one when they may become one and, for
  // the `compiled` pass, a compiled scheduler takes the union (a rejected
  // union is remembered and not tried again).
  bool tryMerge(
      const std::vector<Edge>& all, const std::vector<size_t>& ids,
      bool compiled) {
    if (failed_.count(ids) || !mergeable(all, ids, compiled)) {
      return false;
    }
    std::vector<Expr*> exprs;
    for (size_t id : ids) {
      exprs.insert(
          exprs.end(), nodes_[id].exprs.begin(), nodes_[id].exprs.end());
    }
    std::sort(exprs.begin(), exprs.end(), [&](Expr* a, Expr* b) {
      return position_.at(a) < position_.at(b);
    });
    // Views alone make no kernel: a copy where ATen's view costs nothing.
    const bool views_only = onlySlicesAndPermutes(exprs);
    if (compiled && (views_only || !accepts(exprs))) {
      failed_.insert(ids);
      return false;
    }
    for (size_t id : ids) {
      nodes_[id].alive = false;
    }
    addNode(std::move(exprs), compiled, views_only);
    return true;
  }

  const Fusion* complete_;
  const std::vector<Expr*>& exprs_;
  SegmentScheduling& scheduling_;
  std::unordered_set<const Expr*> live_;
  std::unordered_map<const Expr*, size_t> position_;
  std::vector<Node> nodes_;
  std::unordered_map<const Expr*, size_t> node_of_;
  // Unions no scheduler took (by the groups they were made of).
  std::set<std::vector<size_t>> failed_;
};

} // namespace

bool takenWhole(
    const Fusion* complete, const std::vector<Expr*>& tensor_exprs,
    SegmentScheduling& scheduling) {
  if (tensor_exprs.empty() ||
      std::any_of(tensor_exprs.begin(), tensor_exprs.end(), isSegmenterSet)) {
    return false;
  }
  const std::unordered_set<const Expr*> live(
      tensor_exprs.begin(), tensor_exprs.end());
  SegmentedGroup group(complete, tensor_exprs, live);
  return scheduling.compiledScheduler(group).has_value();
}

std::vector<std::vector<Expr*>> segmentExprs(
    const Fusion* complete, const std::vector<Expr*>& tensor_exprs,
    SegmentScheduling& scheduling) {
  return Segmenter(complete, tensor_exprs, scheduling).run();
}

} // namespace fuser
