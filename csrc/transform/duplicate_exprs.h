// Computing once what a segment computes twice (doc/segmentation.md §7).
// Input forwarding (transform/input_forwarding.h) gives each reader of a
// pointwise chain of inputs its own copy of the chain, so that segments
// read inputs instead of each other's results; where copies end up in one
// segment beside each other, the kernel would compute the same values
// twice per element (the SwiGLU backward's sigmoid of the gate, three
// times in one kernel, of which NVRTC merged only some).
#pragma once

#include <fusion.h>

namespace fuser {

// Merges each pointwise expr (ops/rebuild.h: canRebuildPointwise) that
// computes what an earlier one computes (the same op and attributes over
// the same inputs, constants compared by value) into that earlier one:
// its readers read the earlier result and it is removed. A result the
// fusion returns, or one with a layout of its own, is kept. Returns the
// number of exprs merged.
int64_t mergeDuplicateExprs(Fusion* fusion);

} // namespace fuser
