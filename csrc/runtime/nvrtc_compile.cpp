#include <runtime/nvrtc_compile.h>

#include <base/exceptions.h>
#include <base/options.h>
#include <base/register_file.h>
#include <runtime/cubin_info.h>

#include <dlfcn.h>
#include <limits.h>
#include <nvrtc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <unordered_map>

namespace fuser {

namespace {

#define FUSER_NVRTC_CALL(expr)                                  \
  do {                                                          \
    const nvrtcResult fuser_nvrtc_result_ = (expr);             \
    FUSER_INTERNAL_ASSERT(                                      \
        fuser_nvrtc_result_ == NVRTC_SUCCESS, #expr,            \
        " failed: ", nvrtcGetErrorString(fuser_nvrtc_result_)); \
  } while (0)

// Plain POSIX file handling: std::filesystem is unusable next to libtorch,
// which exports its own, incompatible copies of those symbols.

bool isReadableFile(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// "/a/b/c" -> "/a/b"; "c" -> ".".
std::string parentDirectory(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) {
    return ".";
  }
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool hasCudaFp16Header(const std::string& dir) {
  return !dir.empty() && isReadableFile(dir + "/cuda_fp16.h");
}

// mkdir -p; true when the directory exists afterwards.
bool makeDirectories(const std::string& dir) {
  struct stat info {};
  if (::stat(dir.c_str(), &info) == 0) {
    return S_ISDIR(info.st_mode);
  }
  const std::string parent = parentDirectory(dir);
  if (parent != dir && parent != "." && parent != "/") {
    makeDirectories(parent);
  }
  return ::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST;
}

std::string findToolkitIncludeDir() {
  std::vector<std::string> candidates;
  // Reading CUDA_HOME is the documented exception to "no ad-hoc getenv"
  // (csrc/base/options.h): it is the toolkit's own convention.
  if (const char* cuda_home = std::getenv("CUDA_HOME")) {
    candidates.push_back(std::string(cuda_home) + "/include");
  }
  // The headers that belong to the NVRTC we actually run with:
  // <toolkit>/lib64/libnvrtc.so -> <toolkit>/include.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&nvrtcCreateProgram), &info) != 0 &&
      info.dli_fname != nullptr) {
    const std::string library = info.dli_fname;
    candidates.push_back(
        parentDirectory(parentDirectory(library)) + "/include");
    char resolved[PATH_MAX];
    if (::realpath(library.c_str(), resolved) != nullptr) {
      candidates.push_back(
          parentDirectory(parentDirectory(resolved)) + "/include");
    }
  }
  candidates.emplace_back("/usr/local/cuda/include");
#ifdef FUSER_CUDA_TOOLKIT_INCLUDE_DIR
  candidates.emplace_back(FUSER_CUDA_TOOLKIT_INCLUDE_DIR);
#endif
  for (const std::string& dir : candidates) {
    if (hasCudaFp16Header(dir)) {
      return dir;
    }
  }
  return "";
}

int nvrtcVersionNumber() {
  int major = 0;
  int minor = 0;
  FUSER_NVRTC_CALL(nvrtcVersion(&major, &minor));
  return major * 1000 + minor * 10;
}

std::vector<std::string> compileOptions(
    const std::string& arch, const std::vector<std::string>& extra_options) {
  std::vector<std::string> options = {
      "--std=c++17", "--gpu-architecture=" + arch};
  const std::string& include_dir = cudaToolkitIncludeDir();
  if (!include_dir.empty()) {
    options.push_back("-I" + include_dir);
  }
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  return options;
}

// 64-bit FNV-1a: names disk-cache files. Entries also store their full key,
// so a hash collision is a miss, never a wrong cubin.
uint64_t fnv1a(const std::string& text) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

// v2: a checksum of the stored name and cubin follows them, so that a
// damaged entry (a flipped bit, a file cut short) is a miss, never a
// broken kernel.
constexpr char kDiskCacheMagic[] = "fuser-kernel-cache-v2\n";

uint64_t entryChecksum(
    const std::string& lowered_name, const char* cubin, size_t cubin_size) {
  return fnv1a(lowered_name + '\0' + std::string(cubin, cubin_size));
}

std::string diskCachePath(const std::string& dir, const std::string& key) {
  std::ostringstream name;
  name << dir << "/fuser-" << std::hex << std::setw(16) << std::setfill('0')
       << fnv1a(key) << ".cubin";
  return name.str();
}

bool readSized(std::istream& in, std::string& out) {
  uint64_t size = 0;
  if (!in.read(reinterpret_cast<char*>(&size), sizeof(size))) {
    return false;
  }
  out.resize(size);
  return size == 0 || static_cast<bool>(in.read(out.data(), size));
}

void writeSized(std::ostream& out, const char* data, uint64_t size) {
  out.write(reinterpret_cast<const char*>(&size), sizeof(size));
  out.write(data, static_cast<std::streamsize>(size));
}

bool readDiskCache(
    const std::string& dir, const std::string& key, CompiledModule& module) {
  std::ifstream in(diskCachePath(dir, key), std::ios::binary);
  if (!in) {
    return false;
  }
  std::string magic(sizeof(kDiskCacheMagic) - 1, '\0');
  std::string stored_key;
  std::string cubin;
  std::string lowered_name;
  uint64_t checksum = 0;
  if (!in.read(magic.data(), magic.size()) || magic != kDiskCacheMagic ||
      !readSized(in, stored_key) || stored_key != key ||
      !readSized(in, lowered_name) || !readSized(in, cubin) ||
      !in.read(reinterpret_cast<char*>(&checksum), sizeof(checksum)) ||
      checksum != entryChecksum(lowered_name, cubin.data(), cubin.size())) {
    return false;
  }
  module.cubin.assign(cubin.begin(), cubin.end());
  module.lowered_name = lowered_name;
  return true;
}

void writeDiskCache(
    const std::string& dir, const std::string& key,
    const CompiledModule& module) {
  makeDirectories(dir);
  const std::string path = diskCachePath(dir, key);
  // Write a private temporary and rename it, so that concurrent processes
  // never read a half-written entry.
  const std::string temporary =
      path + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(&module)) +
      "-" + std::to_string(static_cast<long>(::getpid()));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (out) {
      out.write(kDiskCacheMagic, sizeof(kDiskCacheMagic) - 1);
      writeSized(out, key.data(), key.size());
      writeSized(out, module.lowered_name.data(), module.lowered_name.size());
      writeSized(out, module.cubin.data(), module.cubin.size());
      const uint64_t checksum = entryChecksum(
          module.lowered_name, module.cubin.data(), module.cubin.size());
      out.write(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
    }
    if (!out) {
      // Once per process: an unwritable folder stays unwritable.
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true)) {
        std::cerr << "fuser: warning: cannot write the kernel cache entry "
                  << temporary
                  << "; kernels stay in the memory cache only. Set "
                     "FUSER_KERNEL_CACHE_DIR to a writable folder, or to "
                     "'off' (warned once).\n";
      }
      std::remove(temporary.c_str());
      return;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
  }
}

// Runs NVRTC; never consults a cache.
CompiledModule runNvrtc(
    const std::string& source, const std::string& kernel_name,
    const std::string& arch, const std::vector<std::string>& options,
    std::string* ptx = nullptr) {
  nvrtcProgram program = nullptr;
  FUSER_NVRTC_CALL(nvrtcCreateProgram(
      &program, source.c_str(), "fuser_kernel.cu", 0, nullptr, nullptr));
  // Destroys the program on every path out, errors included.
  struct ProgramDeleter {
    nvrtcProgram* program;
    ~ProgramDeleter() {
      nvrtcDestroyProgram(program);
    }
  } deleter{&program};

  if (!kernel_name.empty()) {
    FUSER_NVRTC_CALL(nvrtcAddNameExpression(program, kernel_name.c_str()));
  }
  std::vector<const char*> option_pointers;
  for (const std::string& option : options) {
    option_pointers.push_back(option.c_str());
  }
  const nvrtcResult compiled = nvrtcCompileProgram(
      program, static_cast<int>(option_pointers.size()),
      option_pointers.data());

  size_t log_size = 0;
  FUSER_NVRTC_CALL(nvrtcGetProgramLogSize(program, &log_size));
  std::string log(log_size, '\0');
  if (log_size > 0) {
    FUSER_NVRTC_CALL(nvrtcGetProgramLog(program, log.data()));
  }
  // NVRTC counts the terminating NUL in the size.
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) {
    log.pop_back();
  }

  if (isDebugDumpEnabled(DebugDumpOption::Nvrtc)) {
    std::cout << "[nvrtc] kernel " << kernel_name << ", options:";
    for (const std::string& option : options) {
      std::cout << " " << option;
    }
    std::cout << "\n[nvrtc] log: " << (log.empty() ? "(empty)" : log)
              << std::endl;
  }

  if (compiled != NVRTC_SUCCESS) {
    std::ostringstream options_text;
    for (const std::string& option : options) {
      options_text << " " << option;
    }
    FUSER_ERROR(
        "NVRTC failed to compile kernel '", kernel_name, "' for ", arch, " (",
        nvrtcGetErrorString(compiled), "; options:", options_text.str(),
        ").\nNVRTC log:\n", log, "\nKernel source:\n", numberedSource(source),
        "\n(FUSER_DUMP=cuda_kernel,nvrtc prints every kernel and the NVRTC "
        "options as they are compiled.)");
  }

  CompiledModule module;
  module.log = log;
  module.arch = arch;
  size_t cubin_size = 0;
  FUSER_NVRTC_CALL(nvrtcGetCUBINSize(program, &cubin_size));
  module.cubin.resize(cubin_size);
  FUSER_NVRTC_CALL(nvrtcGetCUBIN(program, module.cubin.data()));
  if (!kernel_name.empty()) {
    const char* lowered = nullptr;
    FUSER_NVRTC_CALL(
        nvrtcGetLoweredName(program, kernel_name.c_str(), &lowered));
    module.lowered_name = lowered;
  }
  if (ptx != nullptr) {
    size_t ptx_size = 0;
    FUSER_NVRTC_CALL(nvrtcGetPTXSize(program, &ptx_size));
    ptx->assign(ptx_size, '\0');
    FUSER_NVRTC_CALL(nvrtcGetPTX(program, ptx->data()));
    while (!ptx->empty() && ptx->back() == '\0') {
      ptx->pop_back();
    }
  }
  return module;
}

// The blocks per SM a kernel's launch bounds name through
// kMinBlocksPerSmMacro (codegen/kernel_printer.cpp), or 0 when its bounds
// are fixed.
int64_t relaxableBlocksPerSm(const std::string& source) {
  const std::string definition =
      std::string("#define ") + kMinBlocksPerSmMacro + " ";
  const size_t at = source.find(definition);
  if (at == std::string::npos) {
    return 0;
  }
  return std::strtoll(source.c_str() + at + definition.size(), nullptr, 10);
}

// NVRTC's module for `source`; where its launch bounds are relaxable and
// the kernel has a stack frame at their register cap (spilled registers),
// the module with the most blocks per SM that has none (a binary search:
// fewer blocks leave each thread more registers). Where even one block
// per SM keeps a frame, it holds local arrays, which registers do not
// remove, and the cap stays. A spilled persistent buffer costs more than
// the occupancy the cap bought (measured on the H200,
// doc/normalization.md §4). The frame is read from the cubin
// (runtime/cubin_info.h), not from ptxas's report, which NVRTC leaves out
// where the driver's compute cache served the compile.
CompiledModule compileRelaxingSpills(
    const std::string& source, const std::string& kernel_name,
    const std::string& arch, const std::vector<std::string>& options) {
  const int64_t blocks = relaxableBlocksPerSm(source);
  CompiledModule module = runNvrtc(source, kernel_name, arch, options);
  if (blocks <= 1 || largestStackFrameBytes(module.cubin) <= 0) {
    return module;
  }
  auto compileAt = [&](int64_t blocks_per_sm) {
    std::vector<std::string> relaxed = options;
    relaxed.push_back(
        std::string("-D") + kMinBlocksPerSmMacro + "=" +
        std::to_string(blocks_per_sm));
    CompiledModule relaxed_module =
        runNvrtc(source, kernel_name, arch, relaxed);
    relaxed_module.relaxed_blocks_per_sm = blocks_per_sm;
    return relaxed_module;
  };
  CompiledModule best = compileAt(1);
  if (largestStackFrameBytes(best.cubin) != 0) {
    return module;
  }
  // Without a frame at `fits` blocks, with one at `spills`.
  int64_t fits = 1;
  int64_t spills = blocks;
  while (spills - fits > 1) {
    const int64_t middle = (fits + spills) / 2;
    CompiledModule candidate = compileAt(middle);
    if (largestStackFrameBytes(candidate.cubin) == 0) {
      fits = middle;
      best = std::move(candidate);
    } else {
      spills = middle;
    }
  }
  return best;
}

struct KernelCache {
  std::mutex mutex;
  std::unordered_map<std::string, CompiledModule> modules;
  KernelCacheStats stats;
};

KernelCache& kernelCache() {
  static KernelCache cache;
  return cache;
}

} // namespace

const std::string& cudaToolkitIncludeDir() {
  static const std::string dir = findToolkitIncludeDir();
  return dir;
}

std::string nvrtcArchName(int compute_capability, bool use_arch_specific) {
  return "sm_" + std::to_string(compute_capability) +
         (use_arch_specific ? "a" : "");
}

std::string numberedSource(const std::string& source) {
  std::ostringstream numbered;
  std::istringstream lines(source);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    numbered << std::setw(5) << ++number << " | " << line << "\n";
  }
  return numbered.str();
}

CompiledModule compileToCubin(
    const std::string& source, const std::string& kernel_name,
    int compute_capability, bool use_arch_specific,
    const std::vector<std::string>& extra_options) {
  FUSER_INTERNAL_ASSERT(
      compute_capability >= 10, "bad compute capability ", compute_capability,
      " (expected major * 10 + minor, e.g. 90)");
  const std::string arch = nvrtcArchName(compute_capability, use_arch_specific);
  const std::vector<std::string> options = compileOptions(arch, extra_options);

  std::string key = source;
  key += '\0';
  key += kernel_name;
  key += '\0';
  key += "nvrtc " + std::to_string(nvrtcVersionNumber());
  for (const std::string& option : options) {
    key += '\0';
    key += option;
  }

  KernelCache& cache = kernelCache();
  const bool dump_cache = isDebugDumpEnabled(DebugDumpOption::KernelCache);
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    if (auto it = cache.modules.find(key); it != cache.modules.end()) {
      ++cache.stats.memory_hits;
      if (dump_cache) {
        std::cout << "[kernel_cache] memory hit: " << kernel_name << " ("
                  << arch << ")" << std::endl;
      }
      return it->second;
    }
  }

  const std::string disk_dir = kernelDiskCacheDir();

  CompiledModule module;
  bool from_disk = false;
  if (!disk_dir.empty() && readDiskCache(disk_dir, key, module)) {
    module.arch = arch;
    from_disk = true;
  } else {
    // Compiled outside the lock: NVRTC takes long, and two threads compiling
    // the same kernel at once only waste time.
    module = compileRelaxingSpills(source, kernel_name, arch, options);
    if (!disk_dir.empty()) {
      writeDiskCache(disk_dir, key, module);
    }
  }

  std::lock_guard<std::mutex> lock(cache.mutex);
  if (from_disk) {
    ++cache.stats.disk_hits;
  } else {
    ++cache.stats.misses;
  }
  if (dump_cache) {
    std::cout << "[kernel_cache] " << (from_disk ? "disk hit" : "miss") << ": "
              << kernel_name << " (" << arch << ", " << module.cubin.size()
              << " bytes)" << std::endl;
  }
  cache.modules.emplace(key, module);
  return module;
}

// Read on every compile (cheap next to NVRTC) so that the variables can be
// set at any time, tests included. These, with CUDA_HOME, are the variables
// base/options.h lists besides FUSER_DUMP.
std::string kernelDiskCacheDir() {
  if (const char* dir = std::getenv("FUSER_KERNEL_CACHE_DIR")) {
    const std::string value = dir;
    return value == "off" ? "" : value;
  }
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') {
    return std::string(xdg) + "/fuser/kernels";
  }
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') {
    return std::string(home) + "/.cache/fuser/kernels";
  }
  return "";
}

KernelInspection inspectKernel(
    const std::string& source, const std::string& kernel_name,
    int compute_capability, bool use_arch_specific) {
  const std::string arch = nvrtcArchName(compute_capability, use_arch_specific);
  KernelInspection inspection;
  inspection.ptxas_log =
      runNvrtc(
          source, kernel_name, arch,
          compileOptions(arch, {"--ptxas-options=--verbose"}), &inspection.ptx)
          .log;
  return inspection;
}

KernelCacheStats kernelCacheStats() {
  KernelCache& cache = kernelCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.stats;
}

void clearKernelCache() {
  KernelCache& cache = kernelCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.modules.clear();
  cache.stats = KernelCacheStats{};
}

} // namespace fuser
