// IterDomain (one axis) and TensorDomain (the root/logical/allocation/loop
// lists of a tensor). doc/design.md §1.
#pragma once

#include <ir/base_nodes.h>

#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fuser {

class IterDomain : public Val {
 public:
  IterDomain(
      Val* start, Val* extent, IterType iter_type = IterType::Iteration,
      ParallelType parallel_type = ParallelType::Serial);

  Val* start() const {
    return start_;
  }
  Val* extent() const {
    return extent_;
  }
  IterType getIterType() const {
    return iter_type_;
  }
  ParallelType getParallelType() const {
    return parallel_type_;
  }

  bool isIteration() const {
    return iter_type_ == IterType::Iteration;
  }
  bool isReduction() const {
    return iter_type_ == IterType::Reduction;
  }
  bool isBroadcast() const {
    return iter_type_ == IterType::Broadcast;
  }
  bool isParallelized() const {
    return parallel_type_ != ParallelType::Serial;
  }
  bool isThreadDim() const {
    return isParallelTypeThreadDim(parallel_type_);
  }
  bool isBlockDim() const {
    return isParallelTypeBlockDim(parallel_type_);
  }
  bool isThread() const {
    return isThreadDim() || isBlockDim();
  }
  bool isDeviceDim() const {
    return isParallelTypeDeviceDim(parallel_type_);
  }

  // Parallel types, and the padding of a thread dimension's launch, are
  // the mutable properties of an IterDomain.
  void parallelize(ParallelType parallel_type);

  // A thread-parallel axis whose launch is rounded up to a multiple of
  // `multiple` threads (whole warps for warp reductions); the threads past
  // the extent are predicated off (doc/normalization.md §3).
  void padToMultipleOf(int64_t multiple);
  int64_t paddedMultiple() const {
    return padded_multiple_;
  }
  // A bound the scheduler guarantees on a thread-parallel axis's run-time
  // extent (0: none), for the kernel's __launch_bounds__ when the extent
  // is symbolic: the kernel is compiled for the sizes it scheduled.
  void setExtentBound(int64_t bound);
  int64_t extentBound() const {
    return extent_bound_;
  }

  // A fresh IterDomain with the same extent, iteration and parallel type and
  // no definition.
  IterDomain* cloneWithoutDefinition() const;

  // Create a Split expr on `in` without touching any tensor's loop domain.
  // Returns (outer, inner). With inner_split the factor is the inner extent,
  // otherwise the outer extent.
  static std::pair<IterDomain*, IterDomain*> split(
      IterDomain* in, Val* factor, bool inner_split = true);
  // Create a Merge expr of (outer, inner) without touching any loop domain.
  static IterDomain* merge(IterDomain* outer, IterDomain* inner);

  std::string toString(int indent_size = 0) const override;
  std::string toInlineString() const override;
  bool sameAs(const Statement* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  Val* start_;
  Val* extent_;
  IterType iter_type_;
  ParallelType parallel_type_;
  int64_t padded_multiple_ = 1;
  int64_t extent_bound_ = 0;
};

using Contiguity = std::vector<std::optional<bool>>;

// "t f n": a flag per ID, n for none (a broadcast).
std::string contiguityToString(const Contiguity& contiguity);

class TensorDomain : public Val {
 public:
  // logical only; contiguity empty means all false (broadcast: none).
  explicit TensorDomain(
      std::vector<IterDomain*> logical, Contiguity contiguity = {});
  // Every list; empty root/allocation mean "not set". Empty loop means
  // "equal to logical".
  TensorDomain(
      std::vector<IterDomain*> root, std::vector<IterDomain*> logical,
      std::vector<IterDomain*> allocation, std::vector<IterDomain*> loop,
      Contiguity contiguity = {});

  const std::vector<IterDomain*>& root() const {
    return root_;
  }
  const std::vector<IterDomain*>& logical() const {
    return logical_;
  }
  const std::vector<IterDomain*>& allocation() const {
    return allocation_;
  }
  const std::vector<IterDomain*>& loop() const {
    return loop_;
  }
  bool hasRoot() const {
    return !root_.empty();
  }
  bool hasAllocation() const {
    return !allocation_.empty();
  }
  const std::vector<IterDomain*>& maybeRoot() const {
    return hasRoot() ? root_ : logical_;
  }
  const std::vector<IterDomain*>& maybeAllocation() const {
    return hasAllocation() ? allocation_ : logical_;
  }
  // One entry per maybeAllocation() ID: true/false, none for broadcast.
  const Contiguity& contiguity() const {
    return contiguity_;
  }

  int64_t nDims() const {
    return static_cast<int64_t>(loop_.size());
  }
  IterDomain* axis(int64_t i) const;
  // Normalizes a possibly negative loop position; user error when out of
  // range.
  int64_t wrapDim(int64_t i, int64_t extra = 0) const;
  bool hasReduction() const;
  bool hasBroadcast() const;

  // Loop scheduling (mutates the loop list; creates Split/Merge exprs).
  void split(int64_t axis, Val* factor, bool inner_split);
  void merge(int64_t axis_o, int64_t axis_i);
  void reorder(const std::unordered_map<int64_t, int64_t>& old2new);

  void setLoopDomain(std::vector<IterDomain*> loop);
  void setAllocationDomain(
      std::vector<IterDomain*> allocation, Contiguity contiguity);
  void setContiguity(const Contiguity& contiguity);

  // Default contiguity for `ids`: `fill` for non-broadcast, none for
  // broadcast.
  static Contiguity getContiguityFilledWith(
      const std::vector<IterDomain*>& ids, bool fill);
  // The IDs without reduction axes.
  static std::vector<IterDomain*> noReductions(
      const std::vector<IterDomain*>& ids);
  static std::vector<IterDomain*> noBroadcasts(
      const std::vector<IterDomain*>& ids);

  // Name of the owning tensor for messages (set by TensorView).
  std::string ownerName() const;

  std::string toString(int indent_size = 0) const override;
  bool sameAs(const Statement* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  friend class TensorView;
  void validateContiguity(
      const std::vector<IterDomain*>& ids, const Contiguity& contiguity) const;

  std::vector<IterDomain*> root_;
  std::vector<IterDomain*> logical_;
  std::vector<IterDomain*> allocation_;
  std::vector<IterDomain*> loop_;
  Contiguity contiguity_;
  const Val* owner_ = nullptr;
};

// Split: in -> (outer, inner). doc/design.md §1.
class Split : public Expr {
 public:
  Split(
      IterDomain* outer, IterDomain* inner, IterDomain* in, Val* factor,
      bool inner_split);

  IterDomain* outer() const {
    return output(0)->as<IterDomain>();
  }
  IterDomain* inner() const {
    return output(1)->as<IterDomain>();
  }
  IterDomain* in() const {
    return input(0)->as<IterDomain>();
  }
  Val* factor() const {
    return factor_;
  }
  bool innerSplit() const {
    return inner_split_;
  }

  std::string getOpString() const override {
    return "Split";
  }
  std::string toString(int indent_size = 0) const override;
  bool attributesMatch(const Expr* other) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;

 private:
  Val* factor_;
  bool inner_split_;
};

// Merge: (outer, inner) -> out.
class Merge : public Expr {
 public:
  Merge(IterDomain* out, IterDomain* outer, IterDomain* inner);

  IterDomain* out() const {
    return output(0)->as<IterDomain>();
  }
  IterDomain* outer() const {
    return input(0)->as<IterDomain>();
  }
  IterDomain* inner() const {
    return input(1)->as<IterDomain>();
  }

  std::string getOpString() const override {
    return "Merge";
  }
  std::string toString(int indent_size = 0) const override;
  void accept(OptOutDispatch& visitor) override;
  Statement* cloneWith(IrCloner& cloner) const override;
};

} // namespace fuser
