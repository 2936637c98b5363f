// A fusion cut into segments (groups of exprs), each run by one executor
// (doc/design.md §6 "Segments"). Today the cuts are the fusion's
// segment_set exprs: each segment_set ends the group of the exprs before
// it, and what reads its result forms other groups. The automatic
// segmenter (merging groups while one scheduler accepts them) builds on
// the same groups. No ATen here: the runtime schedules and runs the groups.
#pragma once

#include <fusion.h>
#include <scheduler/scheduler_types.h>

#include <memory>
#include <string>
#include <vector>

namespace fuser {

class SegmentedGroup {
 public:
  // The group's tensor exprs, in the complete fusion, topologically.
  const std::vector<Expr*>& exprs() const {
    return exprs_;
  }
  // The values of the complete fusion the group reads and does not compute
  // (fusion inputs, other groups' outputs), and those it computes that a
  // later group or the fusion's outputs read, in a fixed order: the inputs
  // and outputs of makeFusion().
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

class SegmentedFusion {
 public:
  // Copies `fusion` and cuts it at its segment_set exprs. Intermediates
  // (values one group computes and another reads) get their layout fixed
  // (an allocation domain, the logical one when they had none), so the
  // producer writes them in the layout the consumer reads.
  explicit SegmentedFusion(const Fusion* fusion);

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
  std::unique_ptr<Fusion> complete_;
  std::vector<std::unique_ptr<SegmentedGroup>> groups_;
  std::vector<SegmentedGroup*> group_pointers_;
};

} // namespace fuser
