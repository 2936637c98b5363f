// Kernel IR -> CUDA C++ (doc/design.md §2, §5): the one entry point from a
// lowered kernel, and from a scheduled Fusion, to its CUDA source. The same
// lowered kernel always prints the same source, byte for byte. The printer
// itself is codegen/kernel_printer.h.
#pragma once

#include <device_lower/lower.h>

#include <string>

namespace fuser::codegen {

// The complete source: the embedded runtime headers, then the kernel.
std::string generateCudaKernel(const LoweredKernel& kernel);

// Just the __global__ function (no runtime headers).
std::string generateKernelFunction(const LoweredKernel& kernel);

} // namespace fuser::codegen

namespace fuser {

// Lowers `fusion` as it is scheduled now, with what its scheduler asked
// of the kernel (`flags`, HeuristicParams::kernelFlags), and prints its
// CUDA C++ (what Fusion::printKernel prints, without flags).
std::string generateCudaKernel(
    const Fusion* fusion, DataType index_type = DataType::Int,
    KernelFlags flags = {});

} // namespace fuser
