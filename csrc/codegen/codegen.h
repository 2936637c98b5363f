// Kernel IR -> CUDA C++ (DESIGN §2). The same lowered kernel always prints
// the same source, byte for byte.
#pragma once

#include <device_lower/lower.h>

#include <string>

namespace fuser::codegen {

// The complete source: the embedded runtime headers, then the kernel.
std::string generateCudaKernel(const LoweredKernel& kernel);

// Just the __global__ function (no runtime headers).
std::string generateKernelFunction(const LoweredKernel& kernel);

} // namespace fuser::codegen
