#include <runtime/driver_api.h>

#include <dlfcn.h>

#include <mutex>
#include <sstream>
#include <unordered_map>

namespace fuser {

namespace {

// The outcome of loading the driver once per process.
struct LoadedDriver {
  DriverApi api;
  bool available = false;
  // Why the driver is unavailable, for the error message.
  std::string failure;
};

// cuGetProcAddress resolves the ABI version of each entry point that
// matches the headers we compiled against (CUDA_VERSION), which is safer
// than guessing versioned names (`_v2`, `_ptsz`) for dlsym. Older drivers
// without it get plain dlsym of the unversioned names.
using GetProcAddressFn = CUresult (*)(
    const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
    CUdriverProcAddressQueryResult* status);

// Resolves entry points one by one, remembering the first that is missing.
class SymbolResolver {
 public:
  explicit SymbolResolver(void* library)
      : library_(library),
        get_proc_address_(reinterpret_cast<GetProcAddressFn>(
            dlsym(library, "cuGetProcAddress_v2"))) {}

  template <typename Fn>
  void operator()(const char* name, Fn& target) {
    void* pointer = nullptr;
    if (get_proc_address_ != nullptr) {
      CUdriverProcAddressQueryResult status{};
      if (get_proc_address_(
              name, &pointer, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
              &status) != CUDA_SUCCESS ||
          status != CU_GET_PROC_ADDRESS_SUCCESS) {
        pointer = nullptr;
      }
    }
    if (pointer == nullptr) {
      pointer = dlsym(library_, name);
    }
    if (pointer == nullptr && missing_.empty()) {
      missing_ = name;
    }
    target = reinterpret_cast<Fn>(pointer);
  }

  // The first entry point that could not be resolved; "" when none.
  const std::string& missing() const {
    return missing_;
  }

 private:
  void* library_;
  GetProcAddressFn get_proc_address_;
  std::string missing_;
};

LoadedDriver loadDriver() {
  LoadedDriver loaded;
  // Never dlclose: function pointers stay valid for the process lifetime.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    loaded.failure = std::string("dlopen(\"libcuda.so.1\") failed: ") +
                     (error != nullptr ? error : "unknown error");
    return loaded;
  }
  DriverApi& api = loaded.api;
  SymbolResolver resolve(library);
#define FUSER_RESOLVE_DRIVER_SYMBOL(name) resolve(#name, api.name)
  FUSER_RESOLVE_DRIVER_SYMBOL(cuInit);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuDeviceGet);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuDeviceGetAttribute);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuDeviceGetCount);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuCtxGetCurrent);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuDevicePrimaryCtxRetain);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuCtxSetCurrent);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuModuleLoadData);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuModuleGetFunction);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuModuleUnload);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuLaunchKernel);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuLaunchCooperativeKernel);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuFuncSetAttribute);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuTensorMapEncodeTiled);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuGetErrorName);
  FUSER_RESOLVE_DRIVER_SYMBOL(cuGetErrorString);
#undef FUSER_RESOLVE_DRIVER_SYMBOL
  if (!resolve.missing().empty()) {
    loaded.failure = "the driver has no entry point " + resolve.missing() +
                     " (a driver older than CUDA " +
                     std::to_string(CUDA_VERSION / 1000) + "?)";
    return loaded;
  }
  const CUresult init = api.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const char* name = nullptr;
    const char* text = nullptr;
    api.cuGetErrorName(init, &name);
    api.cuGetErrorString(init, &text);
    loaded.failure = std::string("cuInit(0) failed with ") +
                     (name != nullptr ? name : "an unknown error") + ": " +
                     (text != nullptr ? text : "");
    return loaded;
  }
  int count = 0;
  if (api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    loaded.failure = "the driver reports no CUDA device";
    return loaded;
  }
  loaded.available = true;
  return loaded;
}

const LoadedDriver& loadedDriver() {
  static const LoadedDriver loaded = loadDriver();
  return loaded;
}

} // namespace

bool driverAvailable() {
  return loadedDriver().available;
}

const DriverApi& driverApi() {
  const LoadedDriver& loaded = loadedDriver();
  FUSER_CHECK(
      loaded.available, "no CUDA driver / GPU found: ", loaded.failure,
      ". Running kernels needs an NVIDIA GPU and its driver; building "
      "fusions, printing kernels and compiling them with NVRTC work "
      "without one.");
  return loaded.api;
}

int deviceComputeCapability(int device) {
  static std::mutex mutex;
  static std::unordered_map<int, int> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(device); it != cache.end()) {
    return it->second;
  }
  const DriverApi& api = driverApi();
  CUdevice handle = 0;
  FUSER_CUDA_SAFE_CALL(api.cuDeviceGet(&handle, device));
  int major = 0;
  int minor = 0;
  FUSER_CUDA_SAFE_CALL(api.cuDeviceGetAttribute(
      &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle));
  FUSER_CUDA_SAFE_CALL(api.cuDeviceGetAttribute(
      &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle));
  const int capability = major * 10 + minor;
  cache.emplace(device, capability);
  return capability;
}

void ensureCurrentContext(int device) {
  const DriverApi& api = driverApi();
  CUcontext current = nullptr;
  FUSER_CUDA_SAFE_CALL(api.cuCtxGetCurrent(&current));
  if (current != nullptr) {
    return;
  }
  CUdevice handle = 0;
  FUSER_CUDA_SAFE_CALL(api.cuDeviceGet(&handle, device));
  CUcontext primary = nullptr;
  // Retained for the process lifetime, like PyTorch does: releasing it would
  // destroy the context while tensors still live in it.
  FUSER_CUDA_SAFE_CALL(api.cuDevicePrimaryCtxRetain(&primary, handle));
  FUSER_CUDA_SAFE_CALL(api.cuCtxSetCurrent(primary));
}

namespace detail {

void throwCudaDriverError(
    CUresult result, const char* call, const char* file, int line) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (driverAvailable()) {
    driverApi().cuGetErrorName(result, &name);
    driverApi().cuGetErrorString(result, &text);
  }
  std::ostringstream message;
  message << "CUDA driver error " << (name != nullptr ? name : "") << " (code "
          << static_cast<int>(result) << ")";
  if (text != nullptr) {
    message << ": " << text;
  }
  message << "\n  in " << call << " at " << file << ":" << line;
  throw CudaDriverError(result, message.str());
}

} // namespace detail

} // namespace fuser
