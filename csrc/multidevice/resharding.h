// Resharding (doc/multidevice.md §4): after propagation, an expr whose
// inputs are not spread over the devices the way its output needs gets
// `set`s in front of those inputs that respread them. Afterwards every expr
// is either such a set (a communication, multidevice/communication.h) or
// runs on each device's shards alone.
#pragma once

#include <fusion.h>

namespace fuser {

// For each expr that is not itself resharding and each tensor input not
// spread as the expr's output needs (split on the axis that maps to the
// output's split axis, else whole; a partial input always completed
// first), inserts `in' = set(in)` spread as needed and makes the expr read
// it. One set per input and spreading, shared by the exprs that need it.
// A partial sum the fusion returns is summed first (replicated).
void insertReshardings(Fusion* fusion);

} // namespace fuser
