// Tensor maps for the bulk tensor copy engine (doc/matmul.md §4), encoded
// with the driver's cuTensorMapEncodeTiled from a geometry
// (layout/tma_layout.h). The address is part of the map, so a kernel that
// copies tiles of an input gets a map encoded for its data pointer (the
// launch plan keeps the last one, csrc/runtime/kernel_executor.h).
#pragma once

#include <layout/tma_layout.h>

#include <cuda.h>

namespace fuser {

// The encoded map; an internal error when tensorMapViolation is not "".
CUtensorMap encodeTensorMap(const TensorMapGeometry& geometry, void* data);

} // namespace fuser
