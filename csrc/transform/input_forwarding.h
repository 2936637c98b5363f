// Recomputing, in each segment, what is computed from fusion inputs by
// pointwise ops alone (doc/segmentation.md §7). A bf16 batch norm casts
// its input to float once and reads the cast in the statistics' reduction
// and in the normalization; cut into two kernels, the cast would be
// written by one (4 bytes an element) and read by both. Given its own copy
// of the cast, each kernel reads the 2-byte input instead. Likewise x -
// mean in a batch norm's backward, read by a reduction and by grad_input.
#pragma once

#include <fusion.h>

namespace fuser {

// Gives every reader but the first of a tensor computed from fusion inputs
// by pointwise ops (ops/rebuild.h) its own copy of that computation, when
// the computation reads at most two inputs of the tensor's rank (each
// copy reads them again, which is cheaper than a write and a read of the
// tensor while there are at most two; smaller inputs, such as a
// per-channel mean, are not counted). A tensor that is a fusion output, or
// that has an allocation domain (a layout the user gave it to be written
// in), keeps its readers. Returns the number of readers given a copy.
int64_t forwardPointwiseChainsFromInputs(Fusion* fusion);

} // namespace fuser
