#include <device_lower/index/indexer.h>

#include <device_lower/analysis/buffer_shape.h>
#include <device_lower/lower.h>
#include <ir/domain_traversal.h>
#include <layout/allocation_folding.h>

#include <algorithm>

namespace fuser {

Indexer::Indexer(
    GpuLower& lower, const std::vector<kir::ForLoop*>& loops,
    bool vectorized_copy)
    : lower_(lower), loops_(loops) {
  Fusion* fusion = FusionGuard::getCurFusion();
  // doc/indexing.md §1: each loop gives its ID's group an index.
  for (size_t i = 0; i < loops.size(); ++i) {
    kir::ForLoop* loop = loops[i];
    Val* index = loop->index();
    if (vectorized_copy && i + 1 == loops.size() &&
        loop->parallelType() == ParallelType::Vectorize) {
      index = fusion->zeroVal();
    }
    loop_indices_.push_back(index);
    setKnown(loop->iterDomain(), index);
    // A thread index is only known to stay below the loop's extent when the
    // launch is sized exactly for it.
    bool bounded = !index->isConst();
    if (loop->isThreadParallel()) {
      Val* launch = lower_.launchExtent(loop->parallelType());
      bounded = launch != nullptr && launch->sameAs(loop->stop());
    }
    if (bounded) {
      ranges_[index] = ValueRange{loop->start(), loop->stop()};
    }
  }
  loop_known_ = known_;
}

Val* Indexer::known(IterDomain* id) {
  auto it = known_.find(lower_.idModel().exactGroup(id));
  if (it != known_.end()) {
    return it->second;
  }
  // A broadcast axis has one position (doc/indexing.md §1), so it is
  // always known; merges with it go through.
  return id->isBroadcast() ? FusionGuard::getCurFusion()->zeroVal() : nullptr;
}

void Indexer::setKnown(IterDomain* id, Val* index) {
  known_.emplace(lower_.idModel().exactGroup(id), index);
}

// doc/indexing.md §3: the four propagation rules.
bool Indexer::propagateOnce() {
  bool progress = false;
  for (Expr* expr : lower_.idModel().idExprs()) {
    std::vector<Val*> in_index;
    std::vector<Val*> out_index;
    for (Val* v : expr->inputs()) {
      in_index.push_back(known(v->as<IterDomain>()));
    }
    for (Val* v : expr->outputs()) {
      out_index.push_back(known(v->as<IterDomain>()));
    }
    auto all = [](const std::vector<Val*>& v) {
      return std::all_of(v.begin(), v.end(), [](Val* x) { return x; });
    };
    auto any_missing = [](const std::vector<Val*>& v) {
      return std::any_of(v.begin(), v.end(), [](Val* x) { return !x; });
    };
    if (auto* split = dynamic_cast<Split*>(expr)) {
      Val* inner_extent = lower_.loopExtent(split->inner());
      if (all(in_index) && any_missing(out_index)) {
        setKnown(split->outer(), IrBuilder::divExpr(in_index[0], inner_extent));
        setKnown(split->inner(), IrBuilder::modExpr(in_index[0], inner_extent));
        progress = true;
      } else if (all(out_index) && any_missing(in_index)) {
        setKnown(
            split->in(),
            IrBuilder::addExpr(
                IrBuilder::mulExpr(out_index[0], inner_extent), out_index[1]));
        progress = true;
      }
    } else if (auto* merge = dynamic_cast<Merge*>(expr)) {
      Val* inner_extent = lower_.loopExtent(merge->inner());
      if (all(in_index) && any_missing(out_index)) {
        setKnown(
            merge->out(),
            IrBuilder::addExpr(
                IrBuilder::mulExpr(in_index[0], inner_extent), in_index[1]));
        progress = true;
      } else if (all(out_index) && any_missing(in_index)) {
        setKnown(
            merge->outer(), IrBuilder::divExpr(out_index[0], inner_extent));
        setKnown(
            merge->inner(), IrBuilder::modExpr(out_index[0], inner_extent));
        progress = true;
      }
    }
  }
  return progress;
}

std::string Indexer::loopsToString() const {
  std::vector<IterDomain*> ids;
  for (kir::ForLoop* loop : loops_) {
    ids.push_back(loop->iterDomain());
  }
  return idsToString(ids);
}

Val* Indexer::indexOf(IterDomain* id) {
  if (id->isBroadcast() || id->isDeviceDim()) {
    return FusionGuard::getCurFusion()->zeroVal();
  }
  // doc/indexing.md §2: grow the known set until the group is reached.
  while (known(id) == nullptr && propagateOnce()) {
  }
  return known(id);
}

Val* Indexer::index(TensorView* tv) {
  return tv->getMemoryType() == MemoryType::Global ? globalIndex(tv)
                                                   : bufferIndex(tv);
}

Val* Indexer::shiftedIndex(
    TensorView* tv, const std::vector<std::pair<IterDomain*, Val*>>& shifted) {
  FUSER_INTERNAL_ASSERT(
      tv->getMemoryType() == MemoryType::Global, "a shifted read of ",
      tv->toString(), ", which is not in global memory");
  IdModel& model = lower_.idModel();
  // From the loop indices alone and the shifted positions: an index
  // derived earlier from an unshifted axis (the tensor may also be read in
  // place, its axis joined to a loop) must not be reused. What is derived
  // here holds for this access only.
  const auto saved = known_;
  known_ = loop_known_;
  for (const auto& [id, position] : shifted) {
    IterDomain* group = model.exactGroup(id);
    known_[group] = position;
    shifted_groups_.insert(group);
  }
  Val* offset = globalIndex(tv);
  known_ = saved;
  shifted_groups_.clear();
  return offset;
}

using AllocationAxis = FoldedAllocationAxis;

namespace {

bool occupiesMemory(IterDomain* id) {
  return !id->isBroadcast() && !id->isDeviceDim();
}

// The merge of the ID graph whose (outer, inner) inputs are exact-mapped to
// `outer` and `inner`, or null.
Merge* mergeOf(IdModel& model, IterDomain* outer, IterDomain* inner) {
  IterDomain* outer_group = model.exactGroup(outer);
  IterDomain* inner_group = model.exactGroup(inner);
  for (Expr* expr : model.idExprs()) {
    auto* merge = dynamic_cast<Merge*>(expr);
    if (merge != nullptr && model.exactGroup(merge->outer()) == outer_group &&
        model.exactGroup(merge->inner()) == inner_group) {
      return merge;
    }
  }
  return nullptr;
}

// doc/indexing.md §4, step 2b: adjacent allocation axes that a merge of the
// ID graph joins, the outer contiguous, are read as the merge's output. A
// loop over merged axes then indexes them as one (`m * C` for the N, H, W
// of an NHWC input) instead of recovering each by a division. An axis read
// at a shifted position (`shifted`) is not the merge's.
void foldLoopMerges(
    IdModel& model, std::vector<AllocationAxis>& axes,
    const std::unordered_set<IterDomain*>& shifted) {
  auto is_shifted = [&](IterDomain* id) {
    return shifted.count(model.exactGroup(id)) != 0;
  };
  for (size_t k = 0; k + 1 < axes.size();) {
    const AllocationAxis& outer = axes[k];
    const AllocationAxis& inner = axes[k + 1];
    Merge* merge = outer.contiguous == true && occupiesMemory(outer.id) &&
                           occupiesMemory(inner.id) && !is_shifted(outer.id) &&
                           !is_shifted(inner.id)
                       ? mergeOf(model, outer.id, inner.id)
                       : nullptr;
    if (merge == nullptr) {
      ++k;
      continue;
    }
    axes[k] =
        AllocationAxis{merge->out(), inner.contiguous, inner.stride_position};
    axes.erase(axes.begin() + static_cast<std::ptrdiff_t>(k) + 1);
    k = k > 0 ? k - 1 : 0; // the merged axis may merge with its left one
  }
}

} // namespace

Val* Indexer::globalIndex(TensorView* tv) {
  std::vector<AllocationAxis> axes = foldedAllocationAxes(tv);
  foldLoopMerges(lower_.idModel(), axes, shifted_groups_);

  // Strides right to left: a contiguous axis's stride is the next axis's
  // extent times its stride; others come from the kernel argument.
  Val* linear = FusionGuard::getCurFusion()->zeroVal();
  Val* next_stride = nullptr;
  Val* next_extent = nullptr;
  for (size_t k = axes.size(); k-- > 0;) {
    const AllocationAxis& axis = axes[k];
    if (!occupiesMemory(axis.id)) {
      continue; // no memory along this axis (doc/indexing.md §4)
    }
    Val* stride = nullptr;
    if (axis.contiguous == true) {
      stride = next_stride == nullptr
                   ? FusionGuard::getCurFusion()->oneVal()
                   : IrBuilder::mulExpr(next_extent, next_stride);
    } else {
      stride = IrBuilder::create<kir::TensorParameterField>(
          tv, kir::TensorParameterField::Field::AllocStride,
          static_cast<int64_t>(axis.stride_position));
    }
    Val* idx = indexOf(axis.id);
    FUSER_INTERNAL_ASSERT(
        idx != nullptr, "no path from the loops ", loopsToString(), " to ",
        axis.id->toString(), " of ", tv->toString());
    linear = IrBuilder::addExpr(linear, IrBuilder::mulExpr(idx, stride));
    next_stride = stride;
    next_extent = lower_.loopExtent(axis.id);
  }
  return simplifyExpr(linear, ranges_);
}

Val* Indexer::enclosingLoopIndex(IterDomain* id, std::vector<bool>& used) {
  IdModel& id_model = lower_.idModel();
  Val* extent = lower_.loopExtent(id);
  for (size_t j = loops_.size(); j-- > 0;) {
    kir::ForLoop* loop = loops_[j];
    if (used[j] || !id_model.loopMapped(loop->iterDomain(), id) ||
        !loop->stop()->sameAs(extent)) {
      continue;
    }
    used[j] = true;
    return loop_indices_[j];
  }
  return nullptr;
}

Val* Indexer::bufferIndex(TensorView* tv) {
  Val* linear = FusionGuard::getCurFusion()->zeroVal();
  Val* stride = FusionGuard::getCurFusion()->oneVal();
  // doc/indexing.md §4: a buffer position is an iteration of the loops it
  // is written and read in; a coordinate of the tensor only where no such
  // loop encloses the access.
  std::vector<bool> used(loops_.size(), false);
  const std::vector<BufferAxis> shape = bufferShape(lower_, tv);
  for (auto axis = shape.rbegin(); axis != shape.rend(); ++axis) {
    IterDomain* id = axis->id;
    Val* idx = enclosingLoopIndex(id, used);
    if (idx == nullptr) {
      idx = indexOf(id);
    }
    FUSER_INTERNAL_ASSERT(
        idx != nullptr, "no path from the loops ", loopsToString(), " to ",
        id->toString(), " of ", tv->toString());
    linear = IrBuilder::addExpr(linear, IrBuilder::mulExpr(idx, stride));
    stride = IrBuilder::mulExpr(stride, axis->extent);
  }
  return simplifyExpr(linear, ranges_);
}

namespace {

// Whether an index of `id` past its extent makes some logical index of the
// tensor exceed its extent too (doc/indexing.md §5): true for a logical ID,
// for the outer output of a split of such an ID (outer >= ceilDiv(e, f)
// gives an input >= e) and for a merge whose outer input is such an ID
// (out >= e_o * e_i gives outer >= e_o). Not for the inner output of a
// split: its overrun lands inside the input's range, on the wrong element.
// A broadcast has no logical predicate of its own, so an overrun into one
// (the outer input of a merge) only counts with `through_broadcast`: it
// makes a point compute an element twice, which matters for a tensor other
// threads see, not for a register.
bool overrunReachesLogical(
    IterDomain* id, const std::vector<IterDomain*>& logical,
    bool through_broadcast) {
  if (std::find(logical.begin(), logical.end(), id) != logical.end()) {
    return through_broadcast || !id->isBroadcast();
  }
  Expr* def = id->definition();
  if (auto* split = dynamic_cast<Split*>(def)) {
    return split->outer() == id &&
           overrunReachesLogical(split->in(), logical, through_broadcast);
  }
  if (auto* merge = dynamic_cast<Merge*>(def)) {
    return overrunReachesLogical(merge->outer(), logical, through_broadcast);
  }
  return false;
}

} // namespace

namespace {

// `a` when `idx` is `a + i` (either order) with `a` a product by a multiple
// of some w dividing `divisor`, and i in [0, w): then, for an extent that
// is a multiple of `divisor`, idx < extent exactly when a < extent (the w
// consecutive indices of a vector are all in range or all out of it).
// nullptr otherwise.
Val* vectorBase(Val* idx, int64_t divisor, const ValueRanges& ranges) {
  auto* add = dynamic_cast<BinaryOp*>(idx->definition());
  if (divisor <= 1 || add == nullptr || add->opType() != BinaryOpType::Add) {
    return nullptr;
  }
  for (auto [base, lane] :
       {std::pair{add->lhs(), add->rhs()}, std::pair{add->rhs(), add->lhs()}}) {
    auto* mul = dynamic_cast<BinaryOp*>(base->definition());
    auto range = ranges.find(lane);
    if (mul == nullptr || mul->opType() != BinaryOpType::Mul ||
        range == ranges.end() || !range->second.start->isZeroInt() ||
        !range->second.stop->isConstInt()) {
      continue;
    }
    const int64_t w = range->second.stop->constIntValue();
    Val* factor = mul->rhs()->isConstInt() ? mul->rhs() : mul->lhs();
    if (w > 0 && divisor % w == 0 && factor->isConstInt() &&
        factor->constIntValue() % w == 0) {
      return base;
    }
  }
  return nullptr;
}

} // namespace

Val* Indexer::predicate(TensorView* consumer, bool include_reduction_axes) {
  Val* condition = IrBuilder::create<Val>(ScalarValue(true), DataType::Bool);
  auto require_below = [&](Val* idx, Val* extent) {
    Val* simple = simplifyExpr(idx, ranges_);
    if (provenLessThan(simple, extent, ranges_)) {
      return;
    }
    // Simplified whole: the index of an ID under merges, `x / f < c`,
    // becomes `x < c * f`, whose lanes may then share one predicate.
    Val* term = simplifyExpr(
        IrBuilder::binaryExpr(BinaryOpType::Lt, simple, extent), ranges_);
    auto* below = dynamic_cast<BinaryOp*>(term->definition());
    if (below != nullptr && below->opType() == BinaryOpType::Lt) {
      if (Val* base = vectorBase(
              below->lhs(), lower_.knownDivisor(below->rhs()), ranges_)) {
        term = IrBuilder::binaryExpr(BinaryOpType::Lt, base, below->rhs());
      }
    }
    condition =
        IrBuilder::binaryExpr(BinaryOpType::LogicalAnd, condition, term);
  };
  // A tensor in memory that other threads see is written once per element
  // (doc/indexing.md §5): along a broadcast axis only at position 0, and
  // only by the first thread of a parallel type its loops do not use.
  const bool shared_memory = consumer->getMemoryType() != MemoryType::Local;
  // Logical indices in range, and root ones of an rFactor product (its
  // logical IDs are splits of the root ones, which may overrun them;
  // doc/reduction.md §2). A reshape's root needs no bound: its logical
  // indices cover it.
  const bool rfactor_product = consumer->hasRoot() &&
                               consumer->definition() != nullptr &&
                               consumer->definition()->isA<ReductionOp>();
  std::vector<IterDomain*> bounded = consumer->getLogicalDomain();
  if (rfactor_product) {
    for (IterDomain* id : consumer->getRootDomain()) {
      if (std::find(bounded.begin(), bounded.end(), id) == bounded.end()) {
        bounded.push_back(id);
      }
    }
  }
  for (IterDomain* id : bounded) {
    if (id->isDeviceDim() || (id->isReduction() && !include_reduction_axes)) {
      continue;
    }
    if (id->isBroadcast()) {
      continue; // one position; loops over it are handled below
    }
    Val* idx = indexOf(id);
    FUSER_INTERNAL_ASSERT(
        idx != nullptr, "no path from the loops ", loopsToString(), " to ",
        id->toString());
    require_below(idx, lower_.loopExtent(id));
  }
  // Split inputs on the loop path that a non-dividing split may overrun.
  for (Expr* expr : getExprsBetween(
           rfactor_product ? consumer->getRootDomain()
                           : consumer->getLogicalDomain(),
           consumer->getLoopDomain())) {
    auto* split = dynamic_cast<Split*>(expr);
    if (split == nullptr || split->in()->isBroadcast() ||
        (split->in()->isReduction() && !include_reduction_axes)) {
      continue;
    }
    if (overrunReachesLogical(split->in(), bounded, !shared_memory)) {
      continue; // the logical predicates above catch it
    }
    Val* extent = lower_.loopExtent(split->in());
    Val* factor = split->factor();
    if (extent->isConstInt() && factor->isConstInt() &&
        extent->constIntValue() % factor->constIntValue() == 0) {
      continue;
    }
    Val* idx = indexOf(split->in());
    FUSER_INTERNAL_ASSERT(
        idx != nullptr, "no path from the loops ", loopsToString(), " to ",
        split->in()->toString(), ", whose overrun must be predicated");
    require_below(idx, extent);
  }
  // A thread index can exceed this loop's extent when the launch is sized
  // for a larger one. Along a broadcast axis of a register tensor every
  // thread computes the one element it holds (others read it there).
  for (kir::ForLoop* loop : loops_) {
    if (loop->isThreadParallel() &&
        (shared_memory || !loop->iterDomain()->isBroadcast())) {
      require_below(loop->index(), loop->stop());
    }
  }
  // Loops over broadcast axes of the consumer repeat its elements.
  const auto& consumer_loop = consumer->getLoopDomain();
  if (shared_memory && consumer_loop.size() == loops_.size()) {
    for (size_t i = 0; i < loops_.size(); ++i) {
      if (consumer_loop[i]->isBroadcast() && !loop_indices_[i]->isConst()) {
        require_below(loop_indices_[i], FusionGuard::getCurFusion()->oneVal());
      }
    }
  }
  // Along a block dimension a reduction across blocks reduced, only the
  // last block of each group holds the value (doc/reduction.md).
  const auto& last_block = lower_.parallelReductions().lastBlockFlags(consumer);
  for (const auto& [pt, extent] : lower_.kernel().launch_extents) {
    const bool used = std::any_of(
        loops_.begin(), loops_.end(),
        [pt = pt](kir::ForLoop* loop) { return loop->parallelType() == pt; });
    if (!shared_memory || used) {
      continue;
    }
    auto flag = std::find_if(
        last_block.begin(), last_block.end(),
        [pt = pt](const auto& f) { return f.first == pt; });
    if (flag != last_block.end()) {
      condition = IrBuilder::binaryExpr(
          BinaryOpType::LogicalAnd, condition, flag->second);
    } else {
      require_below(
          kir::parallelIndex(pt), FusionGuard::getCurFusion()->oneVal());
    }
  }
  return simplifyExpr(condition, ranges_);
}

} // namespace fuser
