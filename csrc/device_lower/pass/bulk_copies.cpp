// The copies into the operands' shared-memory caches of a matrix product
// are made by the bulk copy engine, issued by the matmul pipeline
// (doc/matmul.md §3): they get no loops of their own, and their buffers
// are the pipeline's ring.
#include <device_lower/passes.h>

#include <device_lower/analysis/mma_pipeline.h>

namespace fuser {

std::vector<Expr*> removeBulkCopies(
    const MmaPipeline& pipeline, const std::vector<Expr*>& exprs) {
  std::vector<Expr*> kept;
  for (Expr* expr : exprs) {
    if (!pipeline.isBulkCopy(expr)) {
      kept.push_back(expr);
    }
  }
  return kept;
}

} // namespace fuser
