// Slices, pads and cats of tensors the fusion computes, rewritten as the
// same pointwise computation over shifted reads of the fusion inputs
// (doc/ops.md, "Slicing, padding and concatenation"), so that one
// pointwise kernel reads the inputs in place:
//   slice(f(x, y))   = f(slice(x), slice(y))                  (steps of 1)
//   pad(f(x), w, v)  = where(inside, f(pad(x, w)), v)
//   cat(f(x), g(y))  = where(i < n_f, f(pad(x, ..)), g(pad(y, ..)))
// `inside` and `i` come from iota along the resized axes. A read under the
// `where` may fall outside its input's part (a pad's zero, or another part
// of a sliced input): the `where` never picks it, so a slice of an input
// read there is a pad of that input with negative widths.
#pragma once

#include <fusion.h>

namespace fuser {

// Rewrites every slice, pad and cat whose tensors are computed from sources
// (fusion inputs, and matrix products with the reshapes, slices and
// permutes of them, which a segment reads from memory; slices of sources
// with steps of 1) by ops that canRebuildPointwise and by permutes; the
// others stay, and so do resizes of sources themselves. Returns the number
// rewritten.
int64_t resizesToInputs(Fusion* fusion);

} // namespace fuser
