#include <id_model/id_model.h>

#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>
#include <id_model/logical_domain_map.h>

#include <map>
#include <sstream>
#include <tuple>
#include <unordered_set>

namespace fuser {

IterDomain* DisjointIdSets::find(IterDomain* id) {
  auto it = parent_.find(id);
  if (it == parent_.end()) {
    parent_[id] = id;
    return id;
  }
  if (it->second == id) {
    return id;
  }
  IterDomain* root = find(it->second);
  parent_[id] = root;
  return root;
}

bool DisjointIdSets::join(IterDomain* a, IterDomain* b) {
  IterDomain* ra = find(a);
  IterDomain* rb = find(b);
  if (ra == rb) {
    return false;
  }
  parent_[rb] = ra;
  return true;
}

namespace {

// The Split/Merge exprs of every tensor's root -> logical, logical ->
// allocation and logical -> loop paths, without repeats.
std::vector<Expr*> collectIdExprs(Fusion* fusion) {
  std::vector<Expr*> id_exprs;
  std::unordered_set<Expr*> seen;
  for (TensorView* tv : fusion->allTvs()) {
    auto add = [&](const std::vector<IterDomain*>& from,
                   const std::vector<IterDomain*>& to) {
      for (Expr* e : getExprsBetween(from, to)) {
        if (seen.insert(e).second) {
          id_exprs.push_back(e);
        }
      }
    };
    add(tv->getMaybeRootDomain(), tv->getLogicalDomain());
    add(tv->getLogicalDomain(), tv->getMaybeAllocationDomain());
    add(tv->getLogicalDomain(), tv->getLoopDomain());
  }
  return id_exprs;
}

} // namespace

IdModel::IdModel(Fusion* fusion) {
  build(fusion, exact_, /*permissive=*/false);
  id_exprs_ = collectIdExprs(fusion);
  build(fusion, loop_, /*permissive=*/true);
}

namespace {

std::string attributeKey(Expr* expr) {
  if (auto* split = dynamic_cast<Split*>(expr)) {
    std::stringstream ss;
    ss << "split/" << split->innerSplit() << "/"
       << split->factor()->toInlineString();
    return ss.str();
  }
  return "merge";
}

} // namespace

void IdModel::build(Fusion* fusion, DisjointIdSets& sets, bool permissive) {
  const std::vector<Expr*> id_exprs = collectIdExprs(fusion);
  for (Expr* expr : fusion->exprs()) {
    for (Val* out : expr->outputs()) {
      auto* consumer = dynamic_cast<TensorView*>(out);
      if (consumer == nullptr) {
        continue;
      }
      for (Val* in : expr->inputs()) {
        auto* producer = dynamic_cast<TensorView*>(in);
        if (producer == nullptr) {
          continue;
        }
        PairwiseLogicalDomainMap map(producer, consumer);
        map.mapBroadcast(permissive);
        for (auto [p, c] : map.mapProducerToConsumer()) {
          sets.join(p, c);
        }
      }
    }
  }
  // Propagate through exprs to a fixed point.
  bool changed = true;
  while (changed) {
    changed = false;
    std::map<std::tuple<std::string, IterDomain*, IterDomain*>, Expr*> seen;
    for (Expr* expr : id_exprs) {
      if (permissive) {
        if (auto* merge = dynamic_cast<Merge*>(expr)) {
          if (merge->outer()->isBroadcast() && !merge->inner()->isBroadcast()) {
            changed |= sets.join(merge->out(), merge->inner());
          } else if (
              merge->inner()->isBroadcast() && !merge->outer()->isBroadcast()) {
            changed |= sets.join(merge->out(), merge->outer());
          }
        }
      }
      IterDomain* in0 = sets.find(expr->input(0)->as<IterDomain>());
      IterDomain* in1 = expr->inputs().size() > 1
                            ? sets.find(expr->input(1)->as<IterDomain>())
                            : nullptr;
      auto key = std::make_tuple(attributeKey(expr), in0, in1);
      auto [it, inserted] = seen.emplace(key, expr);
      if (inserted) {
        continue;
      }
      for (size_t i = 0; i < expr->outputs().size(); ++i) {
        changed |= sets.join(
            it->second->output(i)->as<IterDomain>(),
            expr->output(i)->as<IterDomain>());
      }
    }
  }
}

} // namespace fuser
