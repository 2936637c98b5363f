// The CUDA driver API, loaded lazily with dlopen("libcuda.so.1") on first
// use, so that the fuser library loads (and compiles kernels with NVRTC) on
// machines without a driver or GPU. doc/design.md §6 "Launch". <cuda.h> is
// included for its types only; fuser never links libcuda.
#pragma once

#include <base/exceptions.h>

#include <cuda.h>

#include <string>

namespace fuser {

// Entry points resolved from the driver. Members carry the driver's names so
// calls read like the CUDA documentation:
//   FUSER_CUDA_SAFE_CALL(driverApi().cuModuleLoadData(&module, image));
struct DriverApi {
  decltype(&::cuInit) cuInit = nullptr;
  decltype(&::cuDeviceGet) cuDeviceGet = nullptr;
  decltype(&::cuDeviceGetAttribute) cuDeviceGetAttribute = nullptr;
  decltype(&::cuDeviceGetCount) cuDeviceGetCount = nullptr;
  decltype(&::cuCtxGetCurrent) cuCtxGetCurrent = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) cuDevicePrimaryCtxRetain = nullptr;
  decltype(&::cuCtxSetCurrent) cuCtxSetCurrent = nullptr;
  decltype(&::cuModuleLoadData) cuModuleLoadData = nullptr;
  decltype(&::cuModuleGetFunction) cuModuleGetFunction = nullptr;
  decltype(&::cuModuleUnload) cuModuleUnload = nullptr;
  decltype(&::cuLaunchKernel) cuLaunchKernel = nullptr;
  decltype(&::cuLaunchCooperativeKernel) cuLaunchCooperativeKernel = nullptr;
  decltype(&::cuFuncSetAttribute) cuFuncSetAttribute = nullptr;
  decltype(&::cuTensorMapEncodeTiled) cuTensorMapEncodeTiled = nullptr;
  decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
  decltype(&::cuGetErrorString) cuGetErrorString = nullptr;
};

// Whether the driver could be loaded, every entry point resolved and cuInit
// succeeded. Never throws; loads the driver on the first call.
bool driverAvailable();

// The resolved driver. Throws a UserError starting with "no CUDA driver /
// GPU found" (and saying why) when driverAvailable() is false.
const DriverApi& driverApi();

// Major * 10 + minor of `device` (e.g. 90 for an H100/H200). Cached per
// device.
int deviceComputeCapability(int device);

// Makes the primary context of `device` current on the calling thread when
// no context is current (PyTorch creates the primary context, but a fresh
// thread has none current). Needed before loading modules.
void ensureCurrentContext(int device);

// A failed driver call. A UserError: it is about the environment or the
// device (out of memory, a launch failure), not a bad fusion.
class CudaDriverError : public UserError {
 public:
  CudaDriverError(CUresult result, const std::string& message)
      : UserError(message), result_(result) {}
  CUresult result() const {
    return result_;
  }

 private:
  CUresult result_;
};

namespace detail {
[[noreturn]] void throwCudaDriverError(
    CUresult result, const char* call, const char* file, int line);
} // namespace detail

} // namespace fuser

// Evaluates a driver call; on failure throws CudaDriverError with the call,
// the driver's error name and description, and the source location.
#define FUSER_CUDA_SAFE_CALL(expr)                        \
  do {                                                    \
    const CUresult fuser_cuda_result_ = (expr);           \
    if (fuser_cuda_result_ != CUDA_SUCCESS) {             \
      ::fuser::detail::throwCudaDriverError(              \
          fuser_cuda_result_, #expr, __FILE__, __LINE__); \
    }                                                     \
  } while (0)
