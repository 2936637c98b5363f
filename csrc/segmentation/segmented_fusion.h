// A fusion cut into segments (groups of exprs), each run by one executor
// (doc/design.md §6 "Segments", doc/segmentation.md). A SegmentedFusion
// starts from the fusion cut at its segment_set exprs; segment() then
// re-cuts it into the fewest groups the schedulers accept for one run
// (segmentation/segmenter.h). No ATen here: the runtime decides, through a
// SegmentScheduling it implements, which scheduler takes a group.
#pragma once

#include <fusion.h>
#include <scheduler/scheduler_types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace fuser {

// Whether `expr` computes a tensor (the exprs groups are made of; scalar
// exprs go with the tensors whose sizes they compute).
bool writesTensor(const Expr* expr);

class SegmentedGroup {
 public:
  // A group of `exprs`, tensor exprs of the complete fusion in topological
  // order; `live` holds every tensor expr of the complete fusion (what the
  // group's outputs are computed for).
  SegmentedGroup(
      const Fusion* complete, std::vector<Expr*> exprs,
      const std::unordered_set<const Expr*>& live);

  // The group's tensor exprs, in the complete fusion, topologically.
  const std::vector<Expr*>& exprs() const {
    return exprs_;
  }
  // The values of the complete fusion the group reads and does not compute
  // (fusion inputs, other groups' outputs, and the symbolic sizes its
  // scalar expressions use, whose values the input signature fixes), and
  // those it computes that a later group or the fusion's outputs read, in
  // a fixed order: the inputs and outputs of makeFusion().
  const std::vector<Val*>& inputs() const {
    return inputs_;
  }
  const std::vector<Val*>& outputs() const {
    return outputs_;
  }
  // Chosen by the runtime for one input signature.
  SchedulerType schedulerType() const {
    return scheduler_type_;
  }
  void setSchedulerType(SchedulerType type) {
    scheduler_type_ = type;
  }
  int64_t index() const {
    return index_;
  }

  // A standalone fusion of the group: a copy of the complete fusion with
  // only the group's exprs, inputs() and outputs() as its inputs and
  // outputs.
  std::unique_ptr<Fusion> makeFusion() const;

  std::string toString() const;

 private:
  friend class SegmentedFusion;
  const Fusion* complete_ = nullptr;
  int64_t index_ = 0;
  std::vector<Expr*> exprs_;
  std::vector<Val*> inputs_;
  std::vector<Val*> outputs_;
  SchedulerType scheduler_type_ = SchedulerType::ExprEval;
};

// What the segmenter asks of the runtime about one run (implemented where
// the inputs are known).
class SegmentScheduling {
 public:
  virtual ~SegmentScheduling() = default;
  // The first scheduler other than ExprEval that takes `group` for this
  // run; nullopt when only ExprEval would.
  virtual std::optional<SchedulerType> compiledScheduler(
      const SegmentedGroup& group) = 0;
  // The bytes `tv` takes for this run (merges that keep the largest
  // intermediates on chip go first).
  virtual int64_t bytes(const TensorView* tv) = 0;
};

class SegmentedFusion {
 public:
  // Copies `fusion` and cuts it at its segment_set exprs (one group when it
  // has none).
  explicit SegmentedFusion(const Fusion* fusion);

  // After the complete fusion's run-time checks (checkJoinedInputExtents
  // reads the sizes expands give): drops the expands no scheduler needs
  // (transform/redundant_expands.h), rewrites slices, pads and cats of
  // computed tensors over the inputs (transform/resize_to_inputs.h), and
  // cuts the fusion again as the constructor does (doc/segmentation.md §7).
  void rewriteBeforeCut();

  // Re-cuts the complete fusion into the fewest groups that `scheduling`
  // accepts (segmentation/segmenter.h): the whole fusion when one
  // scheduler takes it and nothing cuts it, else groups merged from one
  // expr each. Groups no compiled scheduler takes stay ExprEval groups.
  void segment(SegmentScheduling& scheduling);

  Fusion* completeFusion() const {
    return complete_.get();
  }
  // In an order that runs producers first.
  const std::vector<SegmentedGroup*>& groups() const {
    return group_pointers_;
  }
  bool isSegmented() const {
    return groups_.size() > 1;
  }
  // Whether `val` is computed by one group and read by another.
  bool isIntermediate(const Val* val) const;

  // The groups, their scheduler types, inputs and outputs, and the edges
  // (FUSER_DUMP=segmented_fusion).
  std::string toString() const;

 private:
  // Makes the groups from `members` (each a set of tensor exprs, together
  // every one exactly once) in an order that runs producers first, and
  // fixes the layout of intermediates.
  void setGroups(const std::vector<std::vector<Expr*>>& members);
  // The complete fusion's tensor exprs, cut at its segment_set exprs.
  void cutAtSegmentSets();

  std::unique_ptr<Fusion> complete_;
  // The complete fusion's tensor exprs, topologically, and as a set.
  std::vector<Expr*> tensor_exprs_;
  std::unordered_set<const Expr*> live_;
  std::vector<std::unique_ptr<SegmentedGroup>> groups_;
  std::vector<SegmentedGroup*> group_pointers_;
};

// Whether `expr` is a segment_set: its output is always a group input.
bool isSegmenterSet(const Expr* expr);

// `exprs` (topologically) in the sets that edges tie together: an expr
// reading `value` from `producer` (another of `exprs`) joins its set when
// joins(value, producer). Each set in topological order, the sets in the
// order of their first expr.
std::vector<std::vector<Expr*>> connectedGroups(
    const std::vector<Expr*>& exprs,
    const std::function<bool(const Val*, const Expr*)>& joins);

} // namespace fuser
