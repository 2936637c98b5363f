// Control flow: loops (thread-parallel and trivial ones print no `for`),
// branches and barriers.
#include <codegen/kernel_printer.h>

#include <device_lower/analysis/vectorization.h>
#include <ir/all_nodes.h>

namespace fuser::codegen {

void KernelPrinter::handle(kir::ForLoop* loop) {
  if (isVectorizedCopyLoop(loop)) {
    vectorizedCopy(loop);
    return;
  }
  if (loop->isThreadParallel() || loop->isDeviceParallel() ||
      loop->index()->isConst()) {
    for (Expr* expr : loop->body().exprs()) {
      dispatch(expr);
    }
    return;
  }
  // Short loops of a constant trip count are unrolled as well: they walk
  // register buffers, which a run-time index would move to local memory
  // (nvcc's own unrolling gives up on nests of such loops).
  constexpr int64_t kMaxUnrolledTrips = 64;
  const ParallelType pt = loop->parallelType();
  const bool short_constant =
      loop->start()->isConstInt() && loop->stop()->isConstInt() &&
      loop->stop()->constIntValue() - loop->start()->constIntValue() <=
          kMaxUnrolledTrips;
  const bool unrolled = pt == ParallelType::Unroll ||
                        pt == ParallelType::Vectorize || short_constant;
  if (unrolled) {
    line("#pragma unroll");
  }
  const std::string i = gen(loop->index());
  line(
      "for (nvfuser_index_t " + i + " = " + gen(loop->start()) + "; " + i +
      " < " + gen(loop->stop()) + "; ++" + i + ") {");
  const kir::ForLoop* outer = lane_loop_;
  lane_loop_ =
      unrolled && loop->start()->isZeroInt() && loop->stop()->isConstInt()
          ? loop
          : nullptr;
  block(loop->body().exprs());
  lane_loop_ = outer;
  line("}");
}

void KernelPrinter::handle(kir::IfThenElse* branch) {
  // A lane skipped by the branch could be the one that draws a block.
  const kir::ForLoop* outer = lane_loop_;
  lane_loop_ = nullptr;
  line("if (" + gen(branch->predicate()) + ") {");
  block(branch->thenBody().exprs());
  if (!branch->elseBody().empty()) {
    line("} else {");
    block(branch->elseBody().exprs());
  }
  line("}");
  lane_loop_ = outer;
}

void KernelPrinter::handle(kir::BlockSync*) {
  line("__syncthreads();");
}

} // namespace fuser::codegen
