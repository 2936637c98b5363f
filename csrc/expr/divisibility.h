// Which integer index scalars are proven multiples of a constant, for the
// code generator (doc/ops.md, "Random numbers": a random op in an unrolled
// loop draws one Philox block per four lanes when its index is a multiple
// of four plus the lane). Sound, not complete: "not proven" is always a
// safe answer.
#pragma once

#include <ir/base_nodes.h>

#include <cstdint>

namespace fuser {

// Whether v is proven a multiple of m (m > 0): a constant multiple of m, a
// product with a factor proven one, a sum or difference of two proven
// ones, or an integer cast of one.
bool provenMultipleOf(const Val* v, int64_t m);

} // namespace fuser
