// Recomputing, in each segment, what is computed from a fusion input by
// unary ops alone (doc/segmentation.md §7). A bf16 batch norm casts its
// input to float once and reads the cast in the statistics' reduction and
// in the normalization; cut into two kernels, the cast would be written
// by one (4 bytes an element) and read by both. Given its own copy of the
// cast, each kernel reads the 2-byte input instead.
#pragma once

#include <fusion.h>

namespace fuser {

// Gives every reader but the first of a tensor computed from a fusion
// input by a chain of UnaryOps (casts included) its own copy of the chain.
// A tensor that is a fusion output, or that has an allocation domain (a
// layout the user gave it to be written in), keeps its readers. Returns the
// number of readers given a copy.
int64_t forwardUnaryChainsFromInputs(Fusion* fusion);

} // namespace fuser
