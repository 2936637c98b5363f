// Inlining: computing a producer inside its consumers' loops. A producer's
// compute-at position k means its loop axes [0, k) are shared with every
// consumer. Limits: the axes must map (IdModel loop map) position by
// position; a producer's reduction axes and vectorized axes are never
// shared; fusion inputs are not computed, so never inlined.
#pragma once

#include <fusion.h>
#include <ir/interface_nodes.h>

#include <vector>

namespace fuser {

// The largest position `tv` may be inlined at.
int64_t getMaxInlinePosition(TensorView* tv);

// Inline every tensor of the fusion as far as allowed.
void inlineMost(Fusion* fusion);
void inlineMost(const std::vector<TensorView*>& tvs);

} // namespace fuser
