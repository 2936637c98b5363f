// Launch sizes (grid and block) from the parallelized loops of a kernel.
#pragma once

#include <ir/base_nodes.h>

#include <map>
#include <vector>

namespace fuser {

// For each thread/block parallel type used by a loop, the extent to launch
// with: the loops' extent, or the largest of several different ones (the
// smaller loops are then predicated).
std::map<ParallelType, Val*> computeLaunchExtents(
    const std::vector<Expr*>& exprs);

} // namespace fuser
