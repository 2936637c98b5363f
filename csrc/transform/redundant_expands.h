// Expands a scheduler does not need (doc/ops.md "Expand"). Frontends write
// x - broadcast_in_dim(mean, x.shape, [0]): the broadcast_in_dim is an
// ExpandOp of a broadcast, and its only reader combines it with x, whose
// axes already give every expanded extent. To the schedulers such an
// ExpandOp is one more tensor between the broadcast and the op that reads
// it (a normalization's statistic would no longer be a broadcast of it);
// reading the broadcast directly computes the same values.
#pragma once

#include <fusion.h>

namespace fuser {

// Makes every reader of an ExpandOp's output that another operand of full
// extent joins on each expanded axis (an elementwise op of the same rank)
// read the expand's input instead; an ExpandOp left without readers drops
// out of the fusion's exprs. Run only after the sizes the expands give
// are checked (checkJoinedInputExtents), which this removes from view.
// Returns the number of readers changed.
int64_t bypassRedundantExpands(Fusion* fusion);

} // namespace fuser
