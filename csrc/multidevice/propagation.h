// Sharding propagation (doc/multidevice.md §3): users shard the inputs
// (and, if they like, outputs); every other tensor takes the sharding of
// its producers, axis by axis, before the fusion is cut at resharding
// exprs (multidevice/resharding.h).
#pragma once

#include <fusion.h>

namespace fuser {

// In topological order, each tensor without a mesh of its own takes the
// mesh of its inputs and, from the first input split across devices whose
// split axis maps to one of its axes, that axis: split, or partial when the
// axis is reduced (a sum over the devices is pending). Tensors the user
// placed keep their sharding; a DIDx only in an input's allocation domain
// (or only in its loop domain) is written to both.
void propagateShardings(Fusion* fusion);

} // namespace fuser
