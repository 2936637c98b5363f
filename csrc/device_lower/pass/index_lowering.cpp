// Tensor operands -> TensorIndex (doc/design.md §5). Every tensor a tensor
// expr reads or writes becomes an element access at the offset the indexer
// computes from the enclosing loops. The same indexer gives the expr's
// predicate, which generatePredicates puts in place.
#include <device_lower/passes.h>

#include <device_lower/analysis/vectorization.h>
#include <device_lower/index/indexer.h>
#include <device_lower/kir_mma.h>
#include <device_lower/kir_visitor.h>
#include <device_lower/lower.h>
#include <layout/device_counts.h>
#include <ops/resize.h>

#include <algorithm>
#include <functional>

namespace fuser {

namespace {

// A kernel only sees its rank's shard of a device-sharded tensor, so an
// expr touching one must run on the same shard (a device-parallel loop).
// Reading it from an unsharded loop needs a collective first (doc/design.md
// §7).
void checkShardedAccess(
    TensorView* tv, Expr* expr, const std::vector<kir::ForLoop*>& loops) {
  if (tv->getMemoryType() != MemoryType::Global) {
    return;
  }
  const bool sharded = isSharded(tv);
  const bool device_loop = std::any_of(
      loops.begin(), loops.end(),
      [](kir::ForLoop* loop) { return loop->isDeviceParallel(); });
  FUSER_CHECK(
      !sharded || device_loop, tv->toString(),
      " is sharded across devices, but ", expr->toString(),
      " runs over the whole tensor on every device. Shard the consumer the "
      "same way (split its loop and parallelize the outer part with DIDx), "
      "or gather the tensor first (resharding needs a collective).");
}

// The same tensor expr over its operands lowered by `lowerOperand`; copies
// that only move data (set, broadcast, permute, reshape) become plain
// element copies.
template <typename LowerOperand>
Expr* lowerTensorExpr(
    GpuLower& lower, Expr* expr, const LowerOperand& lowerOperand) {
  Val* out = lowerOperand(expr->output(0));
  if (auto* uop = dynamic_cast<UnaryOp*>(expr)) {
    return IrBuilder::create<UnaryOp>(
        uop->opType(), out, lowerOperand(uop->in()));
  }
  if (auto* bop = dynamic_cast<BinaryOp*>(expr)) {
    return IrBuilder::create<BinaryOp>(
        bop->opType(), out, lowerOperand(bop->lhs()), lowerOperand(bop->rhs()));
  }
  if (auto* top = dynamic_cast<TernaryOp*>(expr)) {
    return IrBuilder::create<TernaryOp>(
        top->opType(), out, lowerOperand(top->input(0)),
        lowerOperand(top->input(1)), lowerOperand(top->input(2)));
  }
  if (auto* rop = dynamic_cast<ReductionOp*>(expr)) {
    const ParallelReductions& parallel = lower.parallelReductions();
    if (parallel.isParallel(rop)) {
      const ParallelReductions::Info& info = parallel.info(rop);
      auto* reduction = IrBuilder::create<kir::ParallelReduction>(
          rop->opType(), lower.resolveExtent(rop->init()), out,
          lowerOperand(rop->in()), info.dims, info.last_block,
          info.buffer_index);
      reduction->setGroupSize(info.group_size);
      reduction->setResultInEveryThread(info.result_in_every_thread);
      return reduction;
    }
    return IrBuilder::create<ReductionOp>(
        rop->opType(), lower.resolveExtent(rop->init()), out,
        lowerOperand(rop->in()));
  }
  CacheOp cache_op = CacheOp::Unspecified;
  if (auto* ldst = dynamic_cast<LoadStoreOp*>(expr)) {
    cache_op = ldst->cacheOp();
  } else {
    FUSER_INTERNAL_ASSERT(
        expr->isA<BroadcastOp>() || expr->isA<ExpandOp>() ||
            expr->isA<ViewOp>() || expr->isA<FullOp>(),
        "cannot lower ", expr->toString());
  }
  return IrBuilder::create<LoadStoreOp>(
      LoadStoreOpType::Set, out, lowerOperand(expr->input(0)), cache_op);
}

// Element i of an iota is start + step * i, i the index of its one logical
// axis at the current loop point: a copy of that scalar (doc/ops.md).
Expr* lowerIota(
    IotaOp* iota, Indexer& indexer, const std::function<Val*(Val*)>& operand) {
  IterDomain* axis = iota->out()->as<TensorView>()->getLogicalDomain().at(0);
  Val* i = indexer.indexOf(axis);
  FUSER_INTERNAL_ASSERT(
      i != nullptr, "no index of the iota axis ", axis->toString());
  // In double (int64 for integer types), as the ATen evaluation does.
  const DataType dtype = isFloatingPointType(iota->out()->dtype())
                             ? DataType::Double
                             : DataType::Int;
  Val* position = IrBuilder::create<Val>(dtype);
  IrBuilder::create<UnaryOp>(
      UnaryOpType::Cast, position, simplifyExpr(i, indexer.ranges()));
  Val* value = IrBuilder::binaryExpr(
      BinaryOpType::Add, operand(iota->start()),
      IrBuilder::binaryExpr(
          BinaryOpType::Mul, operand(iota->step()), position));
  return IrBuilder::create<LoadStoreOp>(
      LoadStoreOpType::Set, operand(iota->out()), value);
}

// A random element is drawn for its logical linear index (row-major over
// the output's logical axes), whatever loop computes it (doc/ops.md).
Expr* lowerRandom(
    GpuLower& lower, RNGOp* rng, Indexer& indexer,
    const std::function<Val*(Val*)>& operand) {
  Val* linear = IrBuilder::indexConst(0);
  for (IterDomain* id : rng->out()->as<TensorView>()->getLogicalDomain()) {
    Val* i = indexer.indexOf(id);
    FUSER_INTERNAL_ASSERT(
        i != nullptr, "no index of the random axis ", id->toString());
    linear =
        IrBuilder::addExpr(IrBuilder::mulExpr(linear, lower.loopExtent(id)), i);
  }
  return IrBuilder::create<RNGOp>(
      rng->opType(), operand(rng->out()), operand(rng->seed()),
      operand(rng->offset()), operand(rng->a()), operand(rng->b()),
      std::vector<Val*>{simplifyExpr(linear, indexer.ranges())});
}

// How a slice, pad or cat reads its inputs in place: each at its output
// position shifted along the resized axes (doc/ops.md, "Slicing, padding
// and concatenation"). The choices are C's `?:`, which reads only the
// operand it picks.
class ResizeReader {
 public:
  ResizeReader(
      GpuLower& lower, ResizeOp* op, Indexer& indexer,
      const std::vector<kir::ForLoop*>& loops)
      : lower_(lower),
        op_(op),
        indexer_(indexer),
        loops_(loops),
        out_axes_(TensorDomain::noReductions(
            op->out()->as<TensorView>()->getLogicalDomain())) {}

  // The output's position along `axis`.
  Val* position(size_t axis) {
    Val* i = indexer_.indexOf(out_axes_.at(axis));
    FUSER_INTERNAL_ASSERT(
        i != nullptr, "no index of the resized axis ",
        out_axes_.at(axis)->toString());
    return i;
  }

  Val* extent(Val* in, size_t axis) {
    return lower_.loopExtent(
        TensorDomain::noReductions(in->as<TensorView>()->getLogicalDomain())
            .at(axis));
  }

  // `in` read at `positions` along the axes given, in place elsewhere.
  Val* read(Val* in, const std::vector<std::pair<size_t, Val*>>& positions) {
    auto* tv = in->as<TensorView>();
    const auto in_axes = TensorDomain::noReductions(tv->getLogicalDomain());
    std::vector<std::pair<IterDomain*, Val*>> shifted;
    for (const auto& [axis, at] : positions) {
      shifted.emplace_back(
          in_axes.at(axis), simplifyExpr(at, indexer_.ranges()));
    }
    checkShardedAccess(tv, op_, loops_);
    return IrBuilder::create<kir::TensorIndex>(
        tv, indexer_.shiftedIndex(tv, shifted));
  }

  Val* simplified(Val* v) const {
    return simplifyExpr(v, indexer_.ranges());
  }

 private:
  GpuLower& lower_;
  ResizeOp* op_;
  Indexer& indexer_;
  const std::vector<kir::ForLoop*>& loops_;
  std::vector<IterDomain*> out_axes_;
};

// A slice: a copy of `start + i * step` along each resized axis.
Expr* lowerSlice(
    ResizeOp* op, ResizeReader& reader,
    const std::function<Val*(Val*)>& operand) {
  Val* in = op->tensors()[0];
  const std::vector<Val*> scalars = op->scalars();
  std::vector<std::pair<size_t, Val*>> positions;
  for (size_t a = 0; a < op->resized().size(); ++a) {
    if (op->resized()[a]) {
      Val* start = sliceBound(operand(scalars[3 * a]), reader.extent(in, a));
      positions.emplace_back(
          a, IrBuilder::addExpr(
                 start, IrBuilder::mulExpr(
                            reader.position(a), operand(scalars[3 * a + 2]))));
    }
  }
  return IrBuilder::create<LoadStoreOp>(
      LoadStoreOpType::Set, operand(op->out()), reader.read(in, positions));
}

// A pad: the input at `i - left` where that lies inside it on every padded
// axis, else the pad value.
Expr* lowerPad(
    ResizeOp* op, ResizeReader& reader,
    const std::function<Val*(Val*)>& operand) {
  Val* in = op->tensors()[0];
  const std::vector<Val*> scalars = op->scalars();
  const std::vector<bool>& resized = op->resized();
  std::vector<std::pair<size_t, Val*>> positions;
  Val* inside = nullptr;
  for (size_t k = 0; k < (scalars.size() - 1) / 2; ++k) {
    const size_t a = resized.size() - 1 - k;
    if (!resized[a]) {
      continue;
    }
    Val* at =
        IrBuilder::subExpr(reader.position(a), operand(scalars[1 + 2 * k]));
    positions.emplace_back(a, at);
    Val* here = IrBuilder::binaryExpr(
        BinaryOpType::LogicalAnd,
        IrBuilder::binaryExpr(BinaryOpType::Ge, at, IrBuilder::indexConst(0)),
        IrBuilder::binaryExpr(BinaryOpType::Lt, at, reader.extent(in, a)));
    inside = inside == nullptr ? here
                               : IrBuilder::binaryExpr(
                                     BinaryOpType::LogicalAnd, inside, here);
  }
  Val* out = operand(op->out());
  if (inside == nullptr) {
    return IrBuilder::create<LoadStoreOp>(
        LoadStoreOpType::Set, out, reader.read(in, positions));
  }
  return IrBuilder::create<TernaryOp>(
      TernaryOpType::Where, out, reader.simplified(inside),
      reader.read(in, positions), operand(scalars[0]));
}

// A cat: the input whose range along `dim` holds the position; the ranges
// start at the sum of the extents before them, and the last input takes
// what the others do not.
Expr* lowerCat(
    ResizeOp* op, ResizeReader& reader,
    const std::function<Val*(Val*)>& operand) {
  const std::vector<Val*> tensors = op->tensors();
  const auto dim = static_cast<size_t>(op->dim());
  Val* p = reader.position(dim);
  std::vector<Val*> starts{IrBuilder::indexConst(0)};
  for (size_t i = 0; i + 1 < tensors.size(); ++i) {
    starts.push_back(
        IrBuilder::addExpr(starts.back(), reader.extent(tensors[i], dim)));
  }
  auto part = [&](size_t i) {
    return reader.read(tensors[i], {{dim, IrBuilder::subExpr(p, starts[i])}});
  };
  Val* out = operand(op->out());
  Val* chosen = part(tensors.size() - 1);
  for (size_t i = tensors.size() - 1; i-- > 0;) {
    Val* here = reader.simplified(
        IrBuilder::binaryExpr(BinaryOpType::Lt, p, starts[i + 1]));
    if (i == 0) {
      return IrBuilder::create<TernaryOp>(
          TernaryOpType::Where, out, here, part(0), chosen);
    }
    Val* choice = IrBuilder::create<Val>(out->dtype());
    IrBuilder::create<TernaryOp>(
        TernaryOpType::Where, choice, here, part(i), chosen);
    chosen = choice;
  }
  return IrBuilder::create<LoadStoreOp>(LoadStoreOpType::Set, out, chosen);
}

Expr* lowerResize(
    GpuLower& lower, ResizeOp* op, Indexer& indexer,
    const std::function<Val*(Val*)>& operand,
    const std::vector<kir::ForLoop*>& loops) {
  ResizeReader reader(lower, op, indexer, loops);
  switch (op->opType()) {
    case ResizeOpType::Slice:
      return lowerSlice(op, reader, operand);
    case ResizeOpType::Pad:
      return lowerPad(op, reader, operand);
    case ResizeOpType::Cat:
      return lowerCat(op, reader, operand);
  }
  FUSER_ERROR("unreachable ResizeOp kind ", toString(op->opType()));
}

// A matrix product in its tile loops: the tile's coordinates, batch
// indices and validity, from the accumulator's tile axes (doc/matmul.md §2).
Expr* lowerMmaTile(
    GpuLower& lower, MmaOp* mma, const std::vector<kir::ForLoop*>& loops) {
  const MmaPipeline& pipeline = lower.mmaPipeline();
  const MmaTileConfig& tile = *mma->tileConfig();
  Indexer indexer(lower, loops, /*vectorized_copy=*/false);
  auto index = [&](IterDomain* id) {
    Val* idx = indexer.indexOf(id);
    FUSER_INTERNAL_ASSERT(
        idx != nullptr, "no index of the tile axis ", id->toString());
    return idx;
  };
  auto times = [](Val* a, int64_t b) {
    return IrBuilder::mulExpr(a, IrBuilder::create<Val>(b, DataType::Index));
  };
  Val* m0 =
      simplifyExpr(times(index(pipeline.mTile()), tile.m), indexer.ranges());
  Val* n0 =
      simplifyExpr(times(index(pipeline.nTile()), tile.n), indexer.ranges());
  std::vector<Val*> batch;
  for (IterDomain* id : pipeline.batch()) {
    batch.push_back(simplifyExpr(index(id), indexer.ranges()));
  }
  Val* valid = simplifyExpr(
      IrBuilder::binaryExpr(
          BinaryOpType::Lt, index(pipeline.tiles()),
          lower.loopExtent(pipeline.tiles())),
      indexer.ranges());
  return IrBuilder::create<kir::MmaTile>(
      kir::MmaTile::Role::Compute, mma->out(), m0, n0, batch,
      lower.loopExtent(pipeline.kTile()), valid);
}

// `expr` with its tensor operands indexed, and its predicate recorded for
// generatePredicates: one indexer per expr.
Expr* lowerExpr(
    GpuLower& lower, Expr* expr, const std::vector<kir::ForLoop*>& loops) {
  if (auto* mma = dynamic_cast<MmaOp*>(expr)) {
    return lowerMmaTile(lower, mma, loops);
  }
  const bool vectorized = !loops.empty() && isVectorizedCopyLoop(loops.back());
  Indexer indexer(lower, loops, vectorized);
  auto lowerOperand = [&](Val* v) -> Val* {
    if (auto* ti = dynamic_cast<kir::TensorIndex*>(v)) {
      if (ti->index() != nullptr) {
        return ti;
      }
      return IrBuilder::create<kir::TensorIndex>(
          ti->view(), indexer.index(ti->view()));
    }
    if (auto* tv = dynamic_cast<TensorView*>(v)) {
      checkShardedAccess(tv, expr, loops);
      return IrBuilder::create<kir::TensorIndex>(tv, indexer.index(tv));
    }
    return lower.resolveExtent(v);
  };
  Expr* lowered = nullptr;
  if (auto* iota = dynamic_cast<IotaOp*>(expr)) {
    lowered = lowerIota(iota, indexer, lowerOperand);
  } else if (auto* rng = dynamic_cast<RNGOp*>(expr)) {
    lowered = lowerRandom(lower, rng, indexer, lowerOperand);
  } else if (auto* resize = dynamic_cast<ResizeOp*>(expr)) {
    lowered = lowerResize(lower, resize, indexer, lowerOperand, loops);
  } else {
    lowered = lowerTensorExpr(lower, expr, lowerOperand);
  }
  // An initialization (a constant copied in) runs outside the reduction
  // loops.
  auto* out = lowered->output(0)->as<kir::TensorIndex>();
  const bool is_init = lowered->isA<LoadStoreOp>() &&
                       !lowered->input(0)->isA<kir::TensorIndex>() &&
                       out->view()->hasReduction();
  lower.recordPredicate(lowered, indexer.predicate(out->view(), !is_init));
  return lowered;
}

class IndexLowering : public kir::ExprMutator {
 public:
  explicit IndexLowering(GpuLower& lower) : lower_(lower) {}

 protected:
  using kir::ExprMutator::handle;

  void handle(Expr* expr) override {
    if (expr->isA<kir::Allocate>() || expr->isA<kir::BlockSync>()) {
      return;
    }
    replaceCurrent({lowerExpr(lower_, expr, forLoops())});
  }

 private:
  GpuLower& lower_;
};

} // namespace

std::vector<Expr*> lowerIndices(
    GpuLower& lower, const std::vector<Expr*>& exprs) {
  return IndexLowering(lower).mutate(exprs);
}

} // namespace fuser
