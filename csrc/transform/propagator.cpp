#include <transform/propagator.h>

#include <id_model/logical_domain_map.h>
#include <ir/all_nodes.h>
#include <transform_replay.h>

#include <algorithm>
#include <queue>
#include <tuple>
#include <unordered_map>

namespace fuser {

MaxLogicalDomainInfoSpanningTree::MaxLogicalDomainInfoSpanningTree(
    TensorView* reference, const std::unordered_set<TensorView*>* selected)
    : reference_(reference) {
  FUSER_CHECK(reference != nullptr, "Spanning tree from a null reference.");
  if (selected != nullptr) {
    selected_ = *selected;
    has_selection_ = true;
    FUSER_CHECK(
        selected_.count(reference), "The reference ", reference->toString(),
        " must be among the selected tensors.");
  }
}

namespace {

// For each reference logical axis still represented, the ID that stands for
// it in one tensor.
using AxisInfo = std::unordered_map<IterDomain*, IterDomain*>;

// What of `info` (about `from`) survives the edge to `to`.
AxisInfo carry(
    const AxisInfo& info, TensorView* from, TensorView* to,
    bool to_is_consumer) {
  IdMap map = to_is_consumer
                  ? PairwiseLogicalDomainMap(from, to).mapProducerToConsumer()
                  : PairwiseLogicalDomainMap(to, from).mapConsumerToProducer();
  const auto& to_logical = to->getLogicalDomain();
  AxisInfo result;
  for (auto [ref_id, id] : info) {
    auto it = map.find(id);
    if (it == map.end()) {
      continue;
    }
    IterDomain* image = it->second;
    // Through a reshape the axis is no longer a whole logical axis; a
    // reduced axis no longer carries the reference's iteration.
    if (std::find(to_logical.begin(), to_logical.end(), image) ==
            to_logical.end() ||
        image->isReduction()) {
      continue;
    }
    result[ref_id] = image;
  }
  return result;
}

} // namespace

void MaxLogicalDomainInfoSpanningTree::traverse(Propagator* propagator) {
  struct Edge {
    size_t score;
    int64_t order; // earlier edges first among equal scores
    TensorView* from;
    TensorView* to;
    bool to_is_consumer;
  };
  auto less = [](const Edge& a, const Edge& b) {
    return std::tie(a.score, b.order) < std::tie(b.score, a.order);
  };
  std::priority_queue<Edge, std::vector<Edge>, decltype(less)> queue(less);
  std::unordered_map<TensorView*, AxisInfo> info;
  int64_t order = 0;

  auto allowed = [&](TensorView* tv) {
    return !has_selection_ || selected_.count(tv) != 0;
  };
  auto push_edges = [&](TensorView* tv) {
    // Consumers.
    for (Expr* use : tv->uses()) {
      for (Val* out : use->outputs()) {
        auto* c = dynamic_cast<TensorView*>(out);
        if (c != nullptr && !info.count(c) && allowed(c)) {
          queue.push(
              {carry(info[tv], tv, c, true).size(), order++, tv, c, true});
        }
      }
    }
    // Producers.
    if (Expr* def = tv->definition()) {
      for (Val* in : def->inputs()) {
        auto* p = dynamic_cast<TensorView*>(in);
        if (p != nullptr && !info.count(p) && allowed(p)) {
          queue.push(
              {carry(info[tv], tv, p, false).size(), order++, tv, p, false});
        }
      }
    }
  };

  AxisInfo reference_info;
  for (IterDomain* id : reference_->getLogicalDomain()) {
    if (!id->isReduction()) {
      reference_info[id] = id;
    }
  }
  info[reference_] = reference_info;
  push_edges(reference_);
  while (!queue.empty()) {
    Edge edge = queue.top();
    queue.pop();
    if (info.count(edge.to)) {
      continue;
    }
    info[edge.to] =
        carry(info[edge.from], edge.from, edge.to, edge.to_is_consumer);
    if (edge.to_is_consumer) {
      propagator->propagateP2C(edge.from, edge.to);
    } else {
      propagator->propagateC2P(edge.from, edge.to);
    }
    push_edges(edge.to);
  }
}

void TransformPropagator::propagateC2P(TensorView* from, TensorView* to) {
  TransformReplay::replayPasC(to, from, -1);
}

void TransformPropagator::propagateP2C(TensorView* from, TensorView* to) {
  TransformReplay::replayCasP(to, from, -1);
}

} // namespace fuser
