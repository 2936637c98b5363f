#include <segmentation/segmented_fusion.h>

#include <ir/all_nodes.h>
#include <ir/cloner.h>

#include <algorithm>
#include <numeric>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace fuser {

namespace {

bool writesTensor(const Expr* expr) {
  return std::any_of(
      expr->outputs().begin(), expr->outputs().end(),
      [](Val* out) { return out->isA<TensorView>(); });
}

bool isSegmenterSet(const Expr* expr) {
  auto* ldst = dynamic_cast<const LoadStoreOp*>(expr);
  return ldst != nullptr && ldst->opType() == LoadStoreOpType::SegmenterSet;
}

void appendUnique(std::vector<Val*>& values, Val* value) {
  if (std::find(values.begin(), values.end(), value) == values.end()) {
    values.push_back(value);
  }
}

// The fusion inputs a scalar is computed from.
void appendScalarInputs(Val* scalar, std::vector<Val*>& inputs) {
  if (scalar->isFusionInput()) {
    appendUnique(inputs, scalar);
    return;
  }
  if (Expr* def = scalar->definition()) {
    for (Val* in : def->inputs()) {
      appendScalarInputs(in, inputs);
    }
  }
}

int64_t findRoot(std::vector<int64_t>& parent, int64_t i) {
  while (parent[static_cast<size_t>(i)] != i) {
    i = parent[static_cast<size_t>(i)] =
        parent[static_cast<size_t>(parent[static_cast<size_t>(i)])];
  }
  return i;
}

} // namespace

SegmentedFusion::SegmentedFusion(const Fusion* fusion)
    : complete_(std::make_unique<Fusion>(*fusion)) {
  std::vector<Expr*> tensor_exprs;
  for (Expr* expr : complete_->exprs()) {
    if (writesTensor(expr)) {
      tensor_exprs.push_back(expr);
    }
  }
  const bool has_cuts =
      std::any_of(tensor_exprs.begin(), tensor_exprs.end(), isSegmenterSet);
  if (!has_cuts) {
    // One group: the fusion as it is, inputs and outputs in its order.
    auto group = std::make_unique<SegmentedGroup>();
    group->complete_ = complete_.get();
    group->exprs_ = tensor_exprs;
    group->inputs_ = complete_->inputs();
    group->outputs_ = complete_->outputs();
    groups_.push_back(std::move(group));
    group_pointers_.push_back(groups_.back().get());
    return;
  }

  // Union the exprs connected by an edge that is not the output of a
  // segment_set.
  std::unordered_map<const Expr*, int64_t> position;
  for (size_t i = 0; i < tensor_exprs.size(); ++i) {
    position[tensor_exprs[i]] = static_cast<int64_t>(i);
  }
  std::vector<int64_t> parent(tensor_exprs.size());
  std::iota(parent.begin(), parent.end(), 0);
  for (Expr* expr : tensor_exprs) {
    for (Val* in : expr->inputs()) {
      Expr* def = in->isA<TensorView>() ? in->definition() : nullptr;
      if (def == nullptr || isSegmenterSet(def) || !position.count(def)) {
        continue;
      }
      parent[static_cast<size_t>(findRoot(parent, position.at(expr)))] =
          findRoot(parent, position.at(def));
    }
  }
  // Groups in topological order: a group is ready once every group it
  // reads from is placed; among ready ones, the one whose first expr comes
  // first.
  std::unordered_map<int64_t, std::vector<Expr*>> members;
  for (Expr* expr : tensor_exprs) {
    members[findRoot(parent, position.at(expr))].push_back(expr);
  }
  auto root_of = [&](const Expr* expr) {
    return findRoot(parent, position.at(expr));
  };
  std::vector<int64_t> roots;
  for (Expr* expr : tensor_exprs) {
    const int64_t root = root_of(expr);
    if (std::find(roots.begin(), roots.end(), root) == roots.end()) {
      roots.push_back(root);
    }
  }
  std::unordered_set<int64_t> placed;
  std::unordered_map<int64_t, SegmentedGroup*> group_of_root;
  while (placed.size() < roots.size()) {
    int64_t next = -1;
    for (int64_t root : roots) {
      if (placed.count(root)) {
        continue;
      }
      bool ready = true;
      for (Expr* expr : members.at(root)) {
        for (Val* in : expr->inputs()) {
          Expr* def = in->definition();
          ready &= def == nullptr || !position.count(def) ||
              root_of(def) == root || placed.count(root_of(def)) > 0;
        }
      }
      if (ready) {
        next = root;
        break;
      }
    }
    FUSER_INTERNAL_ASSERT(next >= 0, "a cycle among the segments");
    placed.insert(next);
    auto group = std::make_unique<SegmentedGroup>();
    group->complete_ = complete_.get();
    group->index_ = static_cast<int64_t>(groups_.size());
    group->exprs_ = members.at(next);
    group_of_root[next] = group.get();
    groups_.push_back(std::move(group));
    group_pointers_.push_back(groups_.back().get());
  }

  // Inputs and outputs of each group.
  for (auto& group : groups_) {
    const int64_t root = root_of(group->exprs_.front());
    for (Expr* expr : group->exprs_) {
      for (Val* in : expr->inputs()) {
        if (!in->isA<TensorView>()) {
          appendScalarInputs(in, group->inputs_);
          continue;
        }
        Expr* def = in->definition();
        if (def == nullptr || root_of(def) != root) {
          appendUnique(group->inputs_, in);
        }
      }
      for (Val* out : expr->outputs()) {
        bool read_elsewhere = out->isFusionOutput();
        for (Expr* use : out->uses()) {
          read_elsewhere |= position.count(use) && root_of(use) != root;
        }
        if (read_elsewhere) {
          appendUnique(group->outputs_, out);
        }
      }
    }
  }
  // The producer writes an intermediate in the layout its consumers read.
  for (auto& group : groups_) {
    for (Val* out : group->outputs_) {
      auto* tv = out->as<TensorView>();
      if (isIntermediate(tv) && !tv->hasAllocation()) {
        tv->setAllocationDomain(tv->getLogicalDomain(), true);
      }
    }
  }
}

bool SegmentedFusion::isIntermediate(const Val* val) const {
  for (const auto& group : groups_) {
    const auto& inputs = group->inputs();
    if (std::find(inputs.begin(), inputs.end(), val) != inputs.end() &&
        val->definition() != nullptr) {
      return true;
    }
  }
  return false;
}

std::unique_ptr<Fusion> SegmentedGroup::makeFusion() const {
  auto fusion = std::make_unique<Fusion>();
  IrCloner cloner = Fusion::copy(complete_, fusion.get());
  const std::unordered_set<const Expr*> mine(exprs_.begin(), exprs_.end());
  const std::vector<Expr*> all = complete_->exprs();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (writesTensor(*it) && !mine.count(*it)) {
      fusion->removeExpr(cloner.clone(*it));
    }
  }
  for (Val* in : std::vector<Val*>(fusion->inputs())) {
    fusion->removeInput(in);
  }
  for (Val* out : std::vector<Val*>(fusion->outputs())) {
    fusion->removeOutput(out);
  }
  for (Val* in : inputs_) {
    fusion->addInput(cloner.clone(in));
  }
  for (Val* out : outputs_) {
    fusion->addOutput(cloner.clone(out));
  }
  return fusion;
}

std::string SegmentedGroup::toString() const {
  auto names = [](const std::vector<Val*>& values) {
    std::stringstream ss;
    for (size_t i = 0; i < values.size(); ++i) {
      ss << (i ? ", " : "") << values[i]->toString();
    }
    return ss.str();
  };
  std::stringstream ss;
  ss << "group " << index_ << " (" << scheduler_type_ << "): " << exprs_.size()
     << " exprs; inputs " << names(inputs_) << "; outputs "
     << names(outputs_);
  return ss.str();
}

std::string SegmentedFusion::toString() const {
  std::stringstream ss;
  ss << "Segmented fusion: " << groups_.size() << " groups\n";
  for (const auto& group : groups_) {
    ss << "  " << group->toString() << "\n";
  }
  for (const auto& producer : groups_) {
    for (Val* out : producer->outputs()) {
      for (const auto& consumer : groups_) {
        const auto& ins = consumer->inputs();
        if (std::find(ins.begin(), ins.end(), out) != ins.end()) {
          ss << "  edge " << out->toString() << ": group " << producer->index_
             << " -> group " << consumer->index_ << "\n";
        }
      }
    }
  }
  return ss.str();
}

} // namespace fuser
