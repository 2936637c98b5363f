#include <device_lower/analysis/vectorization.h>

#include <device_lower/analysis/buffer_shape.h>
#include <device_lower/lower.h>
#include <layout/vectorization.h>

#include <algorithm>

namespace fuser {

bool isCopy(const Expr* expr) {
  return expr->isA<LoadStoreOp>() || expr->isA<BroadcastOp>();
}

bool isVectorizedCopyLoop(const kir::ForLoop* loop) {
  if (loop->parallelType() != ParallelType::Vectorize) {
    return false;
  }
  const auto& body = loop->body().exprs();
  if (body.size() != 1) {
    return false;
  }
  Expr* expr = body[0];
  if (auto* branch = dynamic_cast<kir::IfThenElse*>(expr)) {
    if (branch->thenBody().exprs().size() != 1 || !branch->elseBody().empty()) {
      return false;
    }
    expr = branch->thenBody().exprs()[0];
  }
  // Before index lowering operands are tensors, after it TensorIndexes.
  return isCopy(expr) && (expr->input(0)->isA<TensorView>() ||
                          expr->input(0)->isA<kir::TensorIndex>());
}

namespace {

// The axes `id` is the row-major linearization of: the leaves of the
// merges that made it, outer first, broadcasts left out (they add no
// position).
void appendLeaves(IterDomain* id, std::vector<IterDomain*>& leaves) {
  if (id->isBroadcast()) {
    return;
  }
  if (auto* merge = dynamic_cast<Merge*>(id->definition())) {
    appendLeaves(merge->outer(), leaves);
    appendLeaves(merge->inner(), leaves);
    return;
  }
  leaves.push_back(id);
}

// Whether `id` is the innermost axis of `tv`'s register or shared buffer
// (the buffer is indexed by the enclosing loop mapped to it,
// Indexer::bufferIndex).
bool isInnermostBufferAxis(GpuLower& lower, TensorView* tv, IterDomain* id) {
  const std::vector<BufferAxis> shape = bufferShape(lower, tv);
  if (shape.empty()) {
    return false;
  }
  const BufferAxis& innermost = shape.back();
  return innermost.position >=
             static_cast<size_t>(tv->getComputeAtPosition()) &&
         lower.idModel().loopMapped(innermost.id, id) &&
         innermost.extent->sameAs(lower.loopExtent(id));
}

} // namespace

std::optional<VectorRun> vectorRun(
    GpuLower& lower, TensorView* tv, IterDomain* id) {
  if (tv->getMemoryType() != MemoryType::Global) {
    return isInnermostBufferAxis(lower, tv, id) ? std::optional(VectorRun{})
                                                : std::nullopt;
  }
  IdModel& id_model = lower.idModel();
  const MemoryAxes memory = memoryAxes(tv);
  // The lanes are consecutive indices of `id`, and of the input of each
  // inner split up the chain that made it the inner part (the matmul
  // epilogue's column pair is the innermost of three splits of N).
  std::vector<IterDomain*> walked = {id};
  for (auto* split = dynamic_cast<Split*>(id->definition());
       split != nullptr && split->inner() == walked.back() &&
       split->innerSplit();
       split = dynamic_cast<Split*>(split->in()->definition())) {
    walked.push_back(split->in());
  }
  for (IterDomain* start : walked) {
    // The innermost leaves that are the innermost contiguous axes, in
    // order, form blocks of consecutive elements.
    std::vector<IterDomain*> leaves;
    appendLeaves(start, leaves);
    size_t matched = 0;
    while (matched < leaves.size() && matched < memory.contiguous_suffix &&
           id_model.exactMapped(
               leaves[leaves.size() - 1 - matched],
               memory.axes[memory.axes.size() - 1 - matched].id)) {
      ++matched;
    }
    if (matched == 0) {
      continue;
    }
    VectorRun run;
    for (size_t k = memory.axes.size() - matched; k < memory.axes.size(); ++k) {
      run.axes.push_back(memory.axes[k].id);
    }
    run.strided_positions = memory.stridesOutsideRun(matched);
    return run;
  }
  return std::nullopt;
}

namespace {

int64_t parameterPosition(const std::vector<Val*>& params, TensorView* tv) {
  int64_t tensor_position = 0;
  for (Val* param : params) {
    if (param == tv) {
      return tensor_position;
    }
    if (param->isA<TensorView>()) {
      ++tensor_position;
    }
  }
  return -1;
}

} // namespace

namespace {

// Checks that `width` lanes of the loop over `id` may access `tv` as one
// vector and books the run-time conditions of a global `tv`.
void bookAccess(
    GpuLower& lower, IterDomain* id, int64_t width, TensorView* tv) {
  // One vector access from lane 0 reads or writes `width` consecutive
  // elements; anything else would silently touch the wrong ones.
  const std::optional<VectorRun> run = vectorRun(lower, tv, id);
  FUSER_CHECK(
      run.has_value(), "Vectorized axis ", id->toString(),
      " does not walk consecutive elements of ", tv->toString(),
      " in memory. Vectorize only an inner split of axes whose innermost "
      "part follows the innermost allocation axes, the innermost of them "
      "contiguous (the contiguity flags of a global tensor, e.g. "
      "makeContigTensor rather than makeSymbolicTensor), or schedule "
      "without vectorization.");
  if (tv->getMemoryType() != MemoryType::Global) {
    return;
  }
  const int64_t bytes = width * dataTypeSize(tv->dtype());
  FUSER_CHECK(
      width > 0 && (width & (width - 1)) == 0 && bytes <= 16,
      "Vectorized axis ", id->toString(), " of ", tv->toString(), ": width ",
      width, " x ", dataTypeSize(tv->dtype()),
      " bytes must be a power of two of at most 16 bytes.");
  Val* extent = FusionGuard::getCurFusion()->oneVal();
  std::vector<Val*> walked_extents;
  for (IterDomain* axis : run->axes) {
    walked_extents.push_back(lower.loopExtent(axis));
    extent = IrBuilder::mulExpr(extent, walked_extents.back());
  }
  LoweredKernel& kernel = lower.kernel();
  kernel.vectorization_checks.push_back(
      {parameterPosition(kernel.parameters, tv), tv, width, extent,
       run->strided_positions});
  lower.recordDivisibleProduct(std::move(walked_extents), width);
}

} // namespace

void bookVectorizedAccesses(
    GpuLower& lower, Fusion* fusion, const LoopPromotion& promotion) {
  for (Expr* expr : fusion->exprs()) {
    for (Val* v : expr->outputs()) {
      auto* tv = dynamic_cast<TensorView*>(v);
      FUSER_CHECK(
          tv == nullptr || tv->nDims() == 0 || isCopy(expr) ||
              tv->axis(-1)->getParallelType() != ParallelType::Vectorize,
          "Vectorized axis ", tv == nullptr ? "" : tv->axis(-1)->toString(),
          " of ", v->toString(),
          ": only a copy (LoadStoreOp: set, a cache; BroadcastOp) "
          "moves a vector; ",
          tv == nullptr ? "" : tv->toString(), " is computed by ",
          expr->getOpString(),
          ". Vectorize a cache of it (cacheAfter/cacheBefore) instead.");
    }
    auto* out =
        isCopy(expr) ? dynamic_cast<TensorView*>(expr->output(0)) : nullptr;
    if (out == nullptr || out->nDims() == 0 ||
        out->axis(-1)->getParallelType() != ParallelType::Vectorize) {
      continue;
    }
    // The lanes are those of the ID the loop runs over (loop promotion may
    // give it another tensor's).
    const size_t last = static_cast<size_t>(out->nDims()) - 1;
    IterDomain* id = promotion.loopId(out, last);
    Val* extent = lower.loopExtent(id);
    FUSER_CHECK(
        extent->isConstInt(), "Vectorized axis ", out->axis(-1)->toString(),
        " of ", out->toString(),
        " needs a constant extent; split by a constant factor first.");
    for (TensorView* tv : {out, expr->input(0)->as<TensorView>()}) {
      bookAccess(lower, id, extent->constIntValue(), tv);
    }
  }
}

} // namespace fuser
