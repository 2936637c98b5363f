// Compatibility path: code outside this repository includes
// <multidevice/device_mesh.h> (the public headers, doc/design.md §3); the
// declarations live in <ir/device_mesh.h>. Nothing in csrc/ includes this
// header (tools/check_layers.py).
#pragma once

#include <ir/device_mesh.h>
