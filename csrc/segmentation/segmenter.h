// The segmenter: cuts a fusion into the fewest groups that the schedulers
// accept for one run (doc/segmentation.md). It starts from one group per
// tensor expr and merges neighbouring groups while a scheduler other than
// ExprEval takes the union, trying first the merges that keep the largest
// intermediates on chip. Merging two groups that another group lies
// between (a path leaves the first and re-enters the second) takes the
// groups in between too, so the groups never form a cycle. A segment_set
// output is never merged with its readers.
#pragma once

#include <fusion.h>
#include <segmentation/segmented_fusion.h>

#include <vector>

namespace fuser {

// Whether the fusion is one group: no segment_set cuts it and `scheduling`
// accepts its `tensor_exprs` (topologically) whole.
bool takenWhole(
    const Fusion* complete, const std::vector<Expr*>& tensor_exprs,
    SegmentScheduling& scheduling);

// Groups of `tensor_exprs` (the tensor exprs of `complete`, topologically),
// merged from one expr each, each in topological order; together they hold
// every expr once. For a fusion that is not takenWhole.
std::vector<std::vector<Expr*>> segmentExprs(
    const Fusion* complete, const std::vector<Expr*>& tensor_exprs,
    SegmentScheduling& scheduling);

} // namespace fuser
