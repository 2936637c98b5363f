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

// Groups of `tensor_exprs` (the tensor exprs of `complete`, topologically),
// each in topological order; together they hold every expr once. One group
// when nothing cuts the fusion and `scheduling` accepts it whole.
std::vector<std::vector<Expr*>> segmentExprs(
    const Fusion* complete, const std::vector<Expr*>& tensor_exprs,
    SegmentScheduling& scheduling);

} // namespace fuser
