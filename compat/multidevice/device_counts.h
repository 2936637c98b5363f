// The old path of <layout/device_counts.h>, kept for code outside this
// repository (doc/design.md §2, §3). compat/ is an include root beside csrc/;
// nothing in csrc/ or python/csrc/ includes it (tools/check_layers.py).
#pragma once

#include <layout/device_counts.h>
