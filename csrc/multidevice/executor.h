// Compatibility path: code outside this repository includes
// <multidevice/executor.h> (the public headers, doc/design.md §3); the
// declarations live in <runtime/multidevice_executor.h>. Nothing in csrc/
// includes this header (tools/check_layers.py).
#pragma once

#include <runtime/multidevice_executor.h>
