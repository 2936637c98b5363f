// Compatibility path: code outside this repository includes
// <multidevice/device_counts.h> (the public headers, doc/design.md §3); the
// declarations live in <layout/device_counts.h>. Nothing in csrc/ includes this
// header (tools/check_layers.py).
#pragma once

#include <layout/device_counts.h>
