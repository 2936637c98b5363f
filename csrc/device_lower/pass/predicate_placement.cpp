// Every tensor expr that needs one goes inside an IfThenElse whose
// predicate generatePredicates fills in once indices exist (doc/design.md
// §5, doc/indexing.md §5).
#include <device_lower/passes.h>

#include <device_lower/analysis/parallel_reductions.h>
#include <device_lower/kir_visitor.h>
#include <ir/all_nodes.h>

namespace fuser {

namespace {

// Whether `expr` computes only registers from registers, elementwise: then
// it may run where its tensor has no element, writing a value nothing
// reads. Every read of global or shared memory, every write there and
// every accumulation (a reduction) keeps its predicate, so such a value
// never reaches memory or a sum. Without the predicate the unrolled
// register loops stay branch-free: a conditional write into a register
// array inside a loop can keep the compiler from unrolling it, and the
// array (a matmul's accumulator) then lives in local memory.
bool computesRegistersOnly(const Expr* expr) {
  if (!expr->isA<UnaryOp>() && !expr->isA<BinaryOp>() &&
      !expr->isA<TernaryOp>() && !expr->isA<LoadStoreOp>() &&
      !expr->isA<BroadcastOp>()) {
    return false;
  }
  auto* out = dynamic_cast<TensorView*>(expr->output(0));
  if (out == nullptr || out->getMemoryType() != MemoryType::Local ||
      out->hasReduction()) {
    return false;
  }
  bool reads_tensor = false;
  for (Val* in : expr->inputs()) {
    if (auto* tv = dynamic_cast<TensorView*>(in)) {
      if (tv->getMemoryType() != MemoryType::Local) {
        return false;
      }
      reads_tensor = true;
    }
  }
  // A constant or index-computed fill (iota, random numbers) stays as it is.
  return reads_tensor;
}

class PredicatePlacer : public kir::ExprMutator {
 public:
  explicit PredicatePlacer(const ParallelReductions& reductions)
      : reductions_(reductions) {}

 protected:
  using kir::ExprMutator::handle;

  void handle(Expr* expr) override {
    // Every thread must reach a reduction across threads: its predicate
    // is an argument instead.
    // So must every thread of a warpgroup reach a matrix product (its
    // tile's validity is part of it).
    if (expr->isA<kir::Allocate>() || expr->isA<kir::BlockSync>() ||
        expr->isA<MmaOp>() || reductions_.isParallel(expr) ||
        computesRegistersOnly(expr)) {
      return;
    }
    auto* branch = IrBuilder::create<kir::IfThenElse>(nullptr);
    branch->thenBody().push_back(expr);
    replaceCurrent({branch});
  }

 private:
  const ParallelReductions& reductions_;
};

} // namespace

std::vector<Expr*> placePredicates(
    const ParallelReductions& reductions, const std::vector<Expr*>& exprs) {
  return PredicatePlacer(reductions).mutate(exprs);
}

} // namespace fuser
