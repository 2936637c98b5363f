// Factory tensors read along different axes (doc/ops.md "Iota"). Frontends
// write a causal mask as iota(n)[:, None] >= iota(n)[None, :] with one
// iota read twice: its one axis then joins the mask's rows and columns
// (a self-mapped tensor, scheduler_utils::selfMappedTensor), which no kernel
// can index from one loop. Each further reader of an iota or a full gets a
// fresh copy of it, which costs nothing in memory (a factory tensor is
// computed where it is read).
#pragma once

#include <fusion.h>

#include <cstdint>

namespace fuser {

// Gives each reader of an IotaOp's or FullOp's output after the first a
// copy of the op of its own. Outputs of the fusion stay as they are.
// Returns the number of readers changed.
int64_t copySharedFactories(Fusion* fusion);

} // namespace fuser
