// Compatibility path: code outside this repository includes
// <multidevice/communicator.h> (the public headers, doc/design.md §3); the
// declarations live in <runtime/communicator.h>. Nothing in csrc/ includes this
// header (tools/check_layers.py).
#pragma once

#include <runtime/communicator.h>
