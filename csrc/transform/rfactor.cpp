// rFactor: split a reduction into a partial reduction (a new producer that
// reduces only the chosen loop axes) and the final reduction of the rest.
//
// Given T1[i0, r1] scheduled as [i0, r1o, r1i] and rFactor({1}):
//   producer T2: root [i0', r1'], logical [i0', r1o(R), r1i(I)],
//                loop mirrors T1's loop; reduces r1o.
//   T1:          logical [i0, r1i''(R)]; reduces what T2 left.
// T1 keeps its iteration IDs, so its consumers and its shape are unchanged.
#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>
#include <transform_replay.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace fuser {

TensorView* TensorView::rFactor(const std::vector<int64_t>& axes) {
  auto* rop = dynamic_cast<ReductionOp*>(definition());
  FUSER_CHECK(
      rop != nullptr, "rFactor of ", toString(),
      ": only the output of a reduction can be rfactored.");
  FUSER_CHECK(
      !hasAllocation(), "rFactor of ", toString(),
      ": the tensor has an allocation domain; set it after rFactor.");
  FUSER_CHECK(
      compute_at_pos_ == 0 && max_producer_pos_ == 0, "rFactor of ", toString(),
      ": the tensor is already inlined; rfactor first.");
  FUSER_CHECK(!axes.empty(), "rFactor of ", toString(), ": no axes given.");
  const std::vector<IterDomain*> loop = getLoopDomain();
  const std::vector<IterDomain*> logical = getLogicalDomain();
  std::unordered_set<IterDomain*> rfactored;
  for (int64_t axis : axes) {
    IterDomain* id = loop[static_cast<size_t>(domain_->wrapDim(axis))];
    FUSER_CHECK(
        id->isReduction(), "rFactor of ", toString(), ": loop axis ", axis,
        " (", id->toString(), ") is not a reduction axis.");
    rfactored.insert(id);
  }
  const bool keeps_a_reduction =
      std::any_of(loop.begin(), loop.end(), [&](IterDomain* id) {
        return id->isReduction() && !rfactored.count(id);
      });
  FUSER_CHECK(
      keeps_a_reduction, "rFactor of ", toString(),
      ": at least one reduction axis must be left for the final reduction.");
  FusionGuard fg(fusion());

  // Split the logical -> loop exprs into those on reduction axes (they go
  // into the producer's logical domain) and the rest (loop only).
  std::vector<Expr*> reduction_exprs;
  std::vector<Expr*> iteration_exprs;
  for (Expr* expr : getExprsBetween(logical, loop)) {
    bool on_reduction = std::any_of(
        expr->outputs().begin(), expr->outputs().end(),
        [](Val* out) { return out->as<IterDomain>()->isReduction(); });
    (on_reduction ? reduction_exprs : iteration_exprs).push_back(expr);
  }
  // An ID on a reduction path stays a reduction in the producer only if all
  // the loop axes derived from it are rfactored.
  std::unordered_map<IterDomain*, bool> reduced_in_producer;
  for (IterDomain* id : loop) {
    reduced_in_producer[id] = rfactored.count(id) != 0;
  }
  for (auto it = reduction_exprs.rbegin(); it != reduction_exprs.rend(); ++it) {
    bool all = true;
    for (Val* out : (*it)->outputs()) {
      auto found = reduced_in_producer.find(out->as<IterDomain>());
      all = all && found != reduced_in_producer.end() && found->second;
    }
    for (Val* in : (*it)->inputs()) {
      reduced_in_producer[in->as<IterDomain>()] = all;
    }
  }
  auto producer_type = [&](IterDomain* id) {
    if (!id->isReduction()) {
      return id->getIterType();
    }
    return reduced_in_producer[id] ? IterType::Reduction : IterType::Iteration;
  };

  // Producer root: copies of this tensor's logical IDs.
  IdMap to_producer;
  std::vector<IterDomain*> producer_root;
  for (IterDomain* id : logical) {
    auto* copy = IrBuilder::create<IterDomain>(
        id->start(), id->extent(), id->getIterType());
    to_producer[id] = copy;
    producer_root.push_back(copy);
  }
  // Producer logical: the reduction exprs replayed with producer types.
  std::vector<Expr*> producer_exprs;
  for (Expr* expr : reduction_exprs) {
    std::vector<IterDomain*> outs;
    for (Val* out : expr->outputs()) {
      auto* id = out->as<IterDomain>();
      auto* copy = IrBuilder::create<IterDomain>(
          id->start(), id->extent(), producer_type(id));
      to_producer[id] = copy;
      outs.push_back(copy);
    }
    if (auto* split = dynamic_cast<Split*>(expr)) {
      producer_exprs.push_back(IrBuilder::create<Split>(
          outs[0], outs[1], to_producer.at(split->in()), split->factor(),
          split->innerSplit()));
    } else {
      auto* merge = expr->as<Merge>();
      producer_exprs.push_back(IrBuilder::create<Merge>(
          outs[0], to_producer.at(merge->outer()),
          to_producer.at(merge->inner())));
    }
  }
  std::vector<IterDomain*> producer_logical =
      applyExprsToFrontier(producer_root, producer_exprs);
  // Producer loop: the iteration exprs replayed on top.
  auto skipped = TransformReplay::replayExprs(
      iteration_exprs, to_producer, /*forward_broadcast=*/false);
  FUSER_INTERNAL_ASSERT(skipped.empty(), "rFactor loop replay failed");
  std::vector<IterDomain*> producer_loop;
  for (IterDomain* id : loop) {
    producer_loop.push_back(to_producer.at(id));
  }
  auto* producer_domain = IrBuilder::create<TensorDomain>(
      producer_root, producer_logical, std::vector<IterDomain*>{},
      producer_loop,
      TensorDomain::getContiguityFilledWith(producer_logical, true));
  auto* producer = IrBuilder::create<TensorView>(producer_domain, dtype());

  // This tensor: its iteration IDs stay; each producer axis that is still
  // to be reduced becomes a fresh reduction ID.
  std::unordered_map<IterDomain*, IterDomain*> from_producer;
  for (auto [original, copy] : to_producer) {
    from_producer[copy] = original;
  }
  std::vector<IterDomain*> new_logical;
  std::unordered_map<IterDomain*, IterDomain*> final_reduction;
  for (IterDomain* p : producer_logical) {
    if (p->isReduction()) {
      continue;
    }
    IterDomain* original = from_producer.at(p);
    if (!original->isReduction()) {
      new_logical.push_back(original);
      continue;
    }
    auto* reduction = IrBuilder::create<IterDomain>(
        p->start(), p->extent(), IterType::Reduction);
    final_reduction[original] = reduction;
    new_logical.push_back(reduction);
  }
  std::vector<IterDomain*> new_loop;
  for (IterDomain* id : loop) {
    if (!id->isReduction()) {
      new_loop.push_back(id);
    } else if (final_reduction.count(id)) {
      new_loop.push_back(final_reduction.at(id));
    }
  }
  Val* init = rop->init();
  ReductionOpType op_type = rop->opType();
  Val* input = rop->in();
  fusion()->removeExpr(rop);
  domain_ = IrBuilder::create<TensorDomain>(
      std::vector<IterDomain*>{}, new_logical, std::vector<IterDomain*>{},
      new_loop, TensorDomain::getContiguityFilledWith(new_logical, true));
  domain_->owner_ = this;
  IrBuilder::create<ReductionOp>(op_type, init, producer, input);
  IrBuilder::create<ReductionOp>(op_type, init, this, producer);
  return producer;
}

} // namespace fuser
