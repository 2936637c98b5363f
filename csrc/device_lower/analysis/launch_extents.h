// Launch sizes (grid and block) from the loops the kernel will have.
#pragma once

#include <device_lower/analysis/loop_promotion.h>
#include <fusion.h>

#include <map>

namespace fuser {

class GpuLower;

// For each thread/block parallel type some loop uses, the extent to launch
// with: the extent of the ID that loop runs over (loop promotion), or the
// largest of several different ones (the smaller loops are then
// predicated). Extents are in kernel terms (`lower`'s
// GpuLower::loopExtent).
std::map<ParallelType, Val*> computeLaunchExtents(
    GpuLower& lower, Fusion* fusion, const LoopPromotion& promotion);

// For each thread parallel type some loop uses, the most threads it may
// launch: the largest constant extent, or the scheduler's bound on a
// symbolic one (IterDomain::extentBound); 0 when some loop has neither.
std::map<ParallelType, int64_t> computeLaunchBounds(Fusion* fusion);

} // namespace fuser
