// The same pointwise expr over other inputs: for rewrites that recompute
// a tensor (a persistent buffer rebuilt from inputs, scheduler/
// persistent_buffers.h; an input's chain recomputed per segment,
// transform/input_forwarding.h).
#pragma once

#include <ir/interface_nodes.h>

#include <vector>

namespace fuser {

// `expr` (a UnaryOp, BinaryOp, where, BroadcastOp or set) made again over
// `inputs`, in the active fusion; nullptr for any other kind of expr.
Val* rebuildPointwise(Expr* expr, const std::vector<Val*>& inputs);

} // namespace fuser
