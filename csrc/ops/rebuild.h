// The same pointwise expr over other inputs: for rewrites that recompute
// a tensor (a persistent buffer rebuilt from inputs, scheduler/
// persistent_buffers.h; an input's chain recomputed per segment,
// transform/input_forwarding.h).
#pragma once

#include <ir/interface_nodes.h>

#include <vector>

namespace fuser {

// Whether rebuildPointwise makes `expr` again: a UnaryOp, BinaryOp,
// where, BroadcastOp, or a set that is not a permute.
bool canRebuildPointwise(const Expr* expr);

// `expr` made again over `inputs` (of the kinds of its own), in the active
// fusion; nullptr when !canRebuildPointwise(expr).
Val* rebuildPointwise(Expr* expr, const std::vector<Val*>& inputs);

} // namespace fuser
