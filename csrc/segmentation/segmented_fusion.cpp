#include <segmentation/segmented_fusion.h>

#include <ir/all_nodes.h>
#include <ir/cloner.h>
#include <segmentation/input_views.h>
#include <segmentation/preseg_passes.h>
#include <segmentation/segmenter.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <numeric>
#include <sstream>

namespace fuser {

bool writesTensor(const Expr* expr) {
  return std::any_of(
      expr->outputs().begin(), expr->outputs().end(),
      [](Val* out) { return out->isA<TensorView>(); });
}

namespace {

void appendUnique(std::vector<Val*>& values, Val* value) {
  if (std::find(values.begin(), values.end(), value) == values.end()) {
    values.push_back(value);
  }
}

// The scalars a scalar is computed from that a group must be given: the
// fusion's scalar inputs and the symbolic sizes (the extent of a reduced
// axis a mean divides by, which no tensor of the group may carry).
void appendScalarInputs(Val* scalar, std::vector<Val*>& inputs) {
  if (scalar->isConst()) {
    return;
  }
  Expr* def = scalar->definition();
  if (scalar->isFusionInput() || def == nullptr) {
    appendUnique(inputs, scalar);
    return;
  }
  for (Val* in : def->inputs()) {
    appendScalarInputs(in, inputs);
  }
}

// The extents of the logical axes of the group's tensor inputs: the
// runtime binds them from those tensors.
std::unordered_set<Val*> carriedExtents(const std::vector<Val*>& inputs) {
  std::unordered_set<Val*> carried;
  for (Val* in : inputs) {
    if (auto* tv = dynamic_cast<TensorView*>(in)) {
      for (IterDomain* id :
           TensorDomain::noReductions(tv->getLogicalDomain())) {
        carried.insert(id->extent());
      }
    }
  }
  return carried;
}

// The scalars the extents of `out` are computed from, where they are not
// the sizes of a tensor the group reads (`carried`): the size an expand
// gives (a scalar input, read by no expr) must reach the group's kernel as
// an input of its own, and so must a size of another tensor an output
// takes (x's row length, in `expand(broadcast(max(x)), x.shape)`, or for
// w's own axis in Python's broadcast_in_dim(w, x.shape(), [1])): the
// group may not read that tensor.
void appendExtentInputs(
    Val* out, const std::unordered_set<Val*>& carried,
    std::vector<Val*>& inputs) {
  auto* tv = dynamic_cast<TensorView*>(out);
  if (tv == nullptr) {
    return;
  }
  for (IterDomain* id : TensorDomain::noReductions(tv->getLogicalDomain())) {
    Val* extent = id->extent();
    if (extent->isFusionInput() || extent->definition() != nullptr ||
        !carried.count(extent)) {
      appendScalarInputs(extent, inputs);
    }
  }
}

// `exprs` without those of `removed`, in order.
std::vector<Expr*> withoutExprs(
    const std::vector<Expr*>& exprs, const std::vector<Expr*>& removed) {
  const std::unordered_set<const Expr*> gone(removed.begin(), removed.end());
  std::vector<Expr*> kept;
  std::copy_if(
      exprs.begin(), exprs.end(), std::back_inserter(kept),
      [&](Expr* expr) { return !gone.count(expr); });
  return kept;
}

// `groups` with `group` added when it has exprs, and without empty ones.
std::vector<std::vector<Expr*>> withGroup(
    std::vector<std::vector<Expr*>> groups, std::vector<Expr*> group) {
  groups.push_back(std::move(group));
  groups.erase(
      std::remove_if(
          groups.begin(), groups.end(),
          [](const std::vector<Expr*>& g) { return g.empty(); }),
      groups.end());
  return groups;
}

} // namespace

std::vector<std::vector<Expr*>> connectedGroups(
    const std::vector<Expr*>& exprs,
    const std::function<bool(const Val*, const Expr*)>& joins) {
  std::unordered_map<const Expr*, size_t> position;
  for (size_t i = 0; i < exprs.size(); ++i) {
    position[exprs[i]] = i;
  }
  std::vector<size_t> parent(exprs.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](size_t i) {
    while (parent[i] != i) {
      i = parent[i] = parent[parent[i]];
    }
    return i;
  };
  for (Expr* expr : exprs) {
    for (Val* in : expr->inputs()) {
      Expr* def = in->definition();
      if (def != nullptr && position.count(def) && joins(in, def)) {
        parent[root(position.at(expr))] = root(position.at(def));
      }
    }
  }
  std::vector<std::vector<Expr*>> groups;
  std::unordered_map<size_t, size_t> group_of_root;
  for (size_t i = 0; i < exprs.size(); ++i) {
    auto [it, fresh] = group_of_root.emplace(root(i), groups.size());
    if (fresh) {
      groups.emplace_back();
    }
    groups[it->second].push_back(exprs[i]);
  }
  return groups;
}

bool isSegmenterSet(const Expr* expr) {
  auto* ldst = dynamic_cast<const LoadStoreOp*>(expr);
  return ldst != nullptr && ldst->opType() == LoadStoreOpType::SegmenterSet;
}

SegmentedGroup::SegmentedGroup(
    const Fusion* complete, std::vector<Expr*> exprs,
    const std::unordered_set<const Expr*>& live)
    : complete_(complete), exprs_(std::move(exprs)) {
  const std::unordered_set<const Expr*> mine(exprs_.begin(), exprs_.end());
  for (Expr* expr : exprs_) {
    for (Val* in : expr->inputs()) {
      if (!in->isA<TensorView>()) {
        appendScalarInputs(in, inputs_);
        continue;
      }
      Expr* def = in->definition();
      if (def == nullptr || !mine.count(def)) {
        appendUnique(inputs_, in);
      }
    }
    for (Val* out : expr->outputs()) {
      bool read_elsewhere = out->isFusionOutput();
      for (Expr* use : out->uses()) {
        read_elsewhere |= live.count(use) && !mine.count(use);
      }
      if (read_elsewhere) {
        appendUnique(outputs_, out);
      }
    }
  }
  const std::unordered_set<Val*> carried = carriedExtents(inputs_);
  for (Expr* expr : exprs_) {
    for (Val* out : expr->outputs()) {
      appendExtentInputs(out, carried, inputs_);
    }
  }
}

SegmentedFusion::SegmentedFusion(const Fusion* fusion)
    : complete_(std::make_unique<Fusion>(*fusion)) {
  cutAtSegmentSets();
}

void SegmentedFusion::rewriteBeforeCut() {
  if (runPreSegmentationPasses(
          complete_.get(), PreSegmentationStage::BeforeCut) > 0) {
    cutAtSegmentSets();
  }
}

void SegmentedFusion::cutAtSegmentSets() {
  tensor_exprs_.clear();
  live_.clear();
  for (Expr* expr : complete_->exprs()) {
    if (writesTensor(expr)) {
      tensor_exprs_.push_back(expr);
    }
  }
  live_.insert(tensor_exprs_.begin(), tensor_exprs_.end());
  // Exprs tied by an edge that is not the output of a segment_set.
  const std::vector<std::vector<Expr*>> members = connectedGroups(
      tensor_exprs_, [](const Val* value, const Expr* producer) {
        return value->isA<TensorView>() && !isSegmenterSet(producer);
      });
  setGroups(members);
}

void SegmentedFusion::segment(SegmentScheduling& scheduling) {
  // The views of inputs the fusion returns are one segment of their own,
  // which no kernel runs (segmentation/input_views.h).
  std::vector<Expr*> views = returnedInputViews(tensor_exprs_);
  std::vector<Expr*> computed = withoutExprs(tensor_exprs_, views);
  if (computed.empty() || takenWhole(complete_.get(), computed, scheduling)) {
    setGroups(withGroup({computed}, views));
    return;
  }
  // Cut into several kernels: each recomputes what it reads of a pointwise
  // chain of inputs instead of reading it from another (doc/segmentation.md
  // §7).
  if (runPreSegmentationPasses(
          complete_.get(), PreSegmentationStage::SeveralKernels) > 0) {
    cutAtSegmentSets();
    views = returnedInputViews(tensor_exprs_);
    computed = withoutExprs(tensor_exprs_, views);
  }
  setGroups(
      withGroup(segmentExprs(complete_.get(), computed, scheduling), views));
}

void SegmentedFusion::setGroups(
    const std::vector<std::vector<Expr*>>& members) {
  groups_.clear();
  group_pointers_.clear();
  if (members.size() <= 1) {
    // One group: the fusion as it is, inputs and outputs in its order.
    auto group =
        std::make_unique<SegmentedGroup>(complete_.get(), tensor_exprs_, live_);
    group->inputs_ = complete_->inputs();
    // An output that is an input is that very tensor, which the runtime
    // returns from its input's slot: a kernel has nothing to write for it
    // (lowering refuses one). Only where nothing else is output does the
    // group keep it (the NoOp case). Several groups never list one.
    std::vector<Val*> computed;
    std::copy_if(
        complete_->outputs().begin(), complete_->outputs().end(),
        std::back_inserter(computed),
        [](const Val* out) { return !out->isFusionInput(); });
    group->outputs_ = computed.empty() ? complete_->outputs() : computed;
    groups_.push_back(std::move(group));
    group_pointers_.push_back(groups_.back().get());
    return;
  }
  std::unordered_map<const Expr*, size_t> member_of;
  for (size_t m = 0; m < members.size(); ++m) {
    for (Expr* expr : members[m]) {
      member_of[expr] = m;
    }
  }
  // A group is ready once every group it reads from is placed; among ready
  // ones, the one listed first.
  std::vector<bool> placed(members.size(), false);
  for (size_t count = 0; count < members.size(); ++count) {
    std::optional<size_t> next;
    for (size_t m = 0; m < members.size() && !next; ++m) {
      bool ready = !placed[m];
      for (Expr* expr : members[m]) {
        for (Val* in : expr->inputs()) {
          Expr* def = in->definition();
          auto it = def ? member_of.find(def) : member_of.end();
          ready &=
              it == member_of.end() || it->second == m || placed[it->second];
        }
      }
      if (ready) {
        next = m;
      }
    }
    FUSER_INTERNAL_ASSERT(next.has_value(), "a cycle among the segments");
    placed[*next] = true;
    auto group = std::make_unique<SegmentedGroup>(
        complete_.get(), members[*next], live_);
    group->index_ = static_cast<int64_t>(groups_.size());
    groups_.push_back(std::move(group));
    group_pointers_.push_back(groups_.back().get());
  }
  // The producer writes an intermediate in the layout its consumers read:
  // the logical order, densely, unless it has a layout of its own. (A
  // reduction's result has no allocation to fix: the schedulers that
  // compute one write it in that order.)
  for (auto& group : groups_) {
    for (Val* out : group->outputs_) {
      auto* tv = out->as<TensorView>();
      if (isIntermediate(tv) && !tv->hasAllocation() && !tv->hasReduction()) {
        tv->setAllocationDomain(tv->getLogicalDomain(), true);
      }
    }
  }
}

bool SegmentedFusion::isIntermediate(const Val* val) const {
  if (val->definition() == nullptr) {
    return false;
  }
  for (const auto& group : groups_) {
    const auto& inputs = group->inputs();
    if (std::find(inputs.begin(), inputs.end(), val) != inputs.end()) {
      return true;
    }
  }
  return false;
}

std::unique_ptr<Fusion> SegmentedGroup::makeFusion() const {
  auto fusion = std::make_unique<Fusion>();
  IrCloner cloner = Fusion::copy(complete_, fusion.get());
  // Every other tensor expr goes, those no output needs too: a tensor's
  // dead uses would still be consumers that schedules propagate to.
  const std::unordered_set<const Expr*> mine(exprs_.begin(), exprs_.end());
  for (Expr* expr : complete_->unorderedExprs()) {
    if (writesTensor(expr) && !mine.count(expr)) {
      fusion->removeExpr(cloner.clone(expr));
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
  runPreSegmentationPasses(fusion.get(), PreSegmentationStage::EachSegment);
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
     << " exprs; inputs " << names(inputs_) << "; outputs " << names(outputs_);
  return ss.str();
}

std::string SegmentedFusion::toString() const {
  std::stringstream ss;
  ss << "Segmented fusion: " << groups_.size() << " groups\n";
  for (const auto& group : groups_) {
    ss << "  " << group->toString() << "\n";
    for (Expr* expr : group->exprs()) {
      ss << "    " << expr->toString();
    }
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
