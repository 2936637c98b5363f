// The lowering passes, in the order lower.cpp runs them. Each takes and
// returns the top-level kernel IR exprs, and before them the analyses it
// reads (a pass that needs several, or the extents GpuLower resolves, takes
// the lowering); each lives in its own file.
#pragma once

#include <ir/base_nodes.h>

#include <vector>

namespace fuser {

class GpuLower;
class MmaPipeline;
class ParallelReductions;
struct LoweredKernel;

// pass/bulk_copies.cpp: drops the copies the bulk copy engine makes for a
// matrix product (the matmul pipeline issues them).
std::vector<Expr*> removeBulkCopies(
    const MmaPipeline& pipeline, const std::vector<Expr*>& exprs);

// pass/expr_sort.cpp: tensor exprs in an order where every producer comes
// before its consumers and inlined producers sit right before them.
std::vector<Expr*> sortExprsForInlining(const std::vector<Expr*>& exprs);

// pass/loop_nests.cpp: wraps each tensor expr in loops over its output's
// loop domain, sharing the loops allowed by inlining.
std::vector<Expr*> generateLoopNests(
    GpuLower& lower, const std::vector<Expr*>& exprs);

// pass/allocations.cpp: register/shared buffers for non-global tensors and
// reduction initializations.
std::vector<Expr*> insertAllocations(
    GpuLower& lower, const std::vector<Expr*>& exprs);

// pass/predicate_placement.cpp: wraps each tensor expr in an IfThenElse
// whose predicate is filled in later.
std::vector<Expr*> placePredicates(
    const ParallelReductions& reductions, const std::vector<Expr*>& exprs);

// pass/index_lowering.cpp: tensor operands -> TensorIndex (the indexer).
std::vector<Expr*> lowerIndices(
    GpuLower& lower, const std::vector<Expr*>& exprs);

// pass/predicate_generation.cpp: fills in the predicates.
std::vector<Expr*> generatePredicates(
    const GpuLower& lower, const std::vector<Expr*>& exprs);

// pass/warp_specialization.cpp: splits a kernel with a matrix product into
// the producer warpgroup (copies) and the consumers (everything else).
std::vector<Expr*> specializeWarps(
    const LoweredKernel& kernel, const std::vector<Expr*>& exprs);

// pass/unswitch.cpp: an unrolled loop nest whose predicates all hold when
// they hold at its last iteration becomes `if (that) { the nest without
// predicates } else { the nest }`.
std::vector<Expr*> unswitchUnrolledLoops(const std::vector<Expr*>& exprs);

// pass/cleanup.cpp: removes always-true branches and empty scopes.
std::vector<Expr*> cleanUpKernel(const std::vector<Expr*>& exprs);

} // namespace fuser
