// Scalar expression simplifier for index math (doc/indexing.md
// §"Simplification"). The indexer composes split/merge index formulas
// mechanically, e.g. `((i / 4) * 4 + i % 4) * 1`; simplifyExpr rewrites such
// expressions into equivalent, shorter ones (`i`) so generated kernels read
// cleanly and do less integer math.
//
// Only integer index math (Index/Int/Int32) is rewritten structurally.
// Floating-point and boolean math is left alone, except that comparisons and
// logical ops on constants fold and `true && x`, `false || x`, ... reduce.
//
// Division and modulo follow C (truncation). Rules whose correctness needs
// non-negative operands are applied only when non-negativity is proven, see
// provenNonNegative.
#pragma once

#include <ir/base_nodes.h>

#include <unordered_map>

namespace fuser {

// [start, stop) bounds of a scalar, e.g. a loop index ranges over
// [0, extent).
struct ValueRange {
  Val* start;
  Val* stop;
};
using ValueRanges = std::unordered_map<const Val*, ValueRange>;

// An equivalent scalar that is simpler; creates new nodes in value's Fusion.
// Returns `value` itself when nothing applies (and then creates no nodes).
// Rules are applied bottom-up until none applies (a fixed point).
Val* simplifyExpr(Val* value, const ValueRanges& ranges = {});

// Whether v >= 0 is proven. Constants, Vals in `ranges` whose start is
// proven non-negative, and sums, products, quotients and remainders of
// non-negative values are. Assumption: a symbolic scalar of dtype Index
// that has no definition and is not in `ranges` (an extent, a size, a
// stride, threadIdx.x, a loop index) is non-negative. Int/Int32 symbolic
// scalars (user inputs) are not assumed to be.
bool provenNonNegative(Val* v, const ValueRanges& ranges);

// Whether v < bound is proven, e.g. a loop index against its extent, `y % f`
// against f, or constant bounds of both sides.
bool provenLessThan(Val* v, Val* bound, const ValueRanges& ranges);

} // namespace fuser
