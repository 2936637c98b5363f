// Compiling CUDA C++ with NVRTC (csrc/runtime/nvrtc_compile.h) and the lazily
// loaded driver API (csrc/runtime/driver_api.h). NVRTC needs no GPU, so the
// compile tests run on CPU-only machines; launching needs a GPU (FuserTest).

#include <base/exceptions.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <runtime/cubin_info.h>
#include <runtime/driver_api.h>
#include <runtime/nvrtc_compile.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace fuser {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

// Adds 1 to every element, through the runtime's Tensor struct.
std::string addOneKernel() {
  return runtimePreamble() + R"(
extern "C" __global__ void fuser_add_one(
    Tensor<float, 1, 1> in, Tensor<float, 1, 1> out) {
  nvfuser_index_t i = blockIdx.x * (nvfuser_index_t)blockDim.x + threadIdx.x;
  if (i < in.size(0)) {
    __half h = __float2half(in[i * in.stride(0)]);
    out[i * out.stride(0)] = __half2float(h) + 1.0f;
  }
}
)";
}

// Each thread keeps 64 floats live: more than a cap of 32 registers holds.
// `bounds` is the kernel's __launch_bounds__ argument list.
std::string registerHungryKernel(const std::string& bounds) {
  const std::string macro =
      bounds.find("FUSER_MIN_BLOCKS_PER_SM") == std::string::npos
          ? ""
          : "#ifndef FUSER_MIN_BLOCKS_PER_SM\n#define FUSER_MIN_BLOCKS_PER_SM "
            "8\n#endif\n";
  return macro + R"(extern "C" __global__ void __launch_bounds__()" + bounds +
         R"() fuser_kernel(float* a, int n) {
  float r[64];
  #pragma unroll
  for (int i = 0; i < 64; ++i) {
    r[i] = a[threadIdx.x + i * n] * a[i];
  }
  float s = 0.0f;
  #pragma unroll
  for (int i = 0; i < 64; ++i) {
    s += r[i] * r[(i * 7) % 64];
  }
  a[threadIdx.x] = s;
}
)";
}

bool isElf(const std::vector<char>& binary) {
  return binary.size() > 4 && binary[0] == 0x7f && binary[1] == 'E' &&
         binary[2] == 'L' && binary[3] == 'F';
}

// Regular files directly in `dir` (std::filesystem is unusable next to
// libtorch, which exports incompatible copies of its symbols).
std::vector<std::string> filesIn(const std::string& dir) {
  std::vector<std::string> files;
  if (DIR* handle = opendir(dir.c_str())) {
    while (dirent* entry = readdir(handle)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") {
        files.push_back(dir + "/" + name);
      }
    }
    closedir(handle);
  }
  return files;
}

} // namespace

class NvrtcTest : public FuserIrTest {
 protected:
  void SetUp() override {
    clearKernelCache();
  }
};

TEST_F(NvrtcTest, ArchNamesAndNumberedSource) {
  EXPECT_EQ(nvrtcArchName(90, true), "sm_90a");
  EXPECT_EQ(nvrtcArchName(86, false), "sm_86");
  EXPECT_EQ(numberedSource("a\nbb\n"), "    1 | a\n    2 | bb\n");
  EXPECT_EQ(numberedSource("x"), "    1 | x\n");
}

TEST_F(NvrtcTest, FindsToolkitHeaders) {
  const std::string& dir = cudaToolkitIncludeDir();
  ASSERT_FALSE(dir.empty());
  struct stat info {};
  EXPECT_EQ(::stat((dir + "/cuda_fp16.h").c_str(), &info), 0) << dir;
}

// The runtime's Tensor struct and cuda_fp16.h compile for the H200's
// architecture on a machine without a GPU.
TEST_F(NvrtcTest, CompilesRuntimeKernelForSm90a) {
  CompiledModule module =
      compileToCubin(addOneKernel(), "fuser_add_one", 90, true);
  EXPECT_EQ(module.arch, "sm_90a");
  EXPECT_EQ(module.lowered_name, "fuser_add_one");
  EXPECT_TRUE(isElf(module.cubin));
  EXPECT_EQ(kernelCacheStats().misses, 1);
}

// The stack frame is read from the cubin: the hungry kernel spills at 32
// registers (8 blocks of 256), not at 128 (2 blocks); a buffer that is no
// ELF file has none to read.
TEST_F(NvrtcTest, StackFrameIsReadFromTheCubin) {
  const CompiledModule capped =
      compileToCubin(registerHungryKernel("256, 8"), "fuser_kernel", 90, true);
  const CompiledModule roomy =
      compileToCubin(registerHungryKernel("256, 2"), "fuser_kernel", 90, true);
  EXPECT_GT(largestStackFrameBytes(capped.cubin), 0);
  EXPECT_EQ(largestStackFrameBytes(roomy.cubin), 0);
  EXPECT_EQ(largestStackFrameBytes({'n', 'o', 't'}), -1);
  const KernelInspection report =
      inspectForSm90a(registerHungryKernel("256, 8"));
  if (hasPtxasReport(report)) {
    EXPECT_THAT(
        report.ptxas_log,
        HasSubstr(
            std::to_string(largestStackFrameBytes(capped.cubin)) +
            " bytes stack frame"));
  }
}

// Launch bounds that name their blocks per SM through the macro are
// lowered where the kernel spills at their cap (8 blocks of 256: 32
// registers); the cache keeps the kernel compiled so.
TEST_F(NvrtcTest, RegisterCapThatSpillsIsRelaxed) {
  const std::string source =
      registerHungryKernel("256, FUSER_MIN_BLOCKS_PER_SM");
  CompiledModule module = compileToCubin(source, "fuser_kernel", 90, true);
  EXPECT_GE(module.relaxed_blocks_per_sm, 1);
  EXPECT_LT(module.relaxed_blocks_per_sm, 8);
  EXPECT_EQ(largestStackFrameBytes(module.cubin), 0);
  // One block more spills: the fewest blocks given up.
  const CompiledModule one_more = compileToCubin(
      "#define FUSER_MIN_BLOCKS_PER_SM " +
          std::to_string(module.relaxed_blocks_per_sm + 1) + "\n" + source,
      "fuser_kernel", 90, true);
  EXPECT_GT(largestStackFrameBytes(one_more.cubin), 0);
  CompiledModule again = compileToCubin(source, "fuser_kernel", 90, true);
  EXPECT_EQ(again.cubin, module.cubin);
  EXPECT_EQ(kernelCacheStats().memory_hits, 1);
}

// A cap written as a number (a cooperative grid's, whose blocks must all
// fit the device at once) is kept, spills and all.
TEST_F(NvrtcTest, FixedRegisterCapIsKept) {
  CompiledModule module =
      compileToCubin(registerHungryKernel("256, 8"), "fuser_kernel", 90, true);
  EXPECT_EQ(module.relaxed_blocks_per_sm, 0);
  EXPECT_GT(largestStackFrameBytes(module.cubin), 0);
}

TEST_F(NvrtcTest, MangledKernelNameIsLowered) {
  const std::string source = R"(
namespace kernels {
__global__ void scale(float* x, float factor) { x[threadIdx.x] *= factor; }
} // namespace kernels
)";
  CompiledModule module = compileToCubin(source, "kernels::scale", 80, false);
  EXPECT_EQ(module.arch, "sm_80");
  EXPECT_NE(module.lowered_name, "kernels::scale");
  EXPECT_THAT(module.lowered_name, HasSubstr("scale"));
  EXPECT_TRUE(isElf(module.cubin));
}

TEST_F(NvrtcTest, CompileErrorShowsLogAndNumberedSource) {
  const std::string source =
      "extern \"C\" __global__ void broken(float* x) {\n"
      "  float y = 1.0f;\n"
      "  x[0] = y +;\n"
      "}\n";
  EXPECT_THAT(
      [&] { compileToCubin(source, "broken", 90, true); },
      ThrowsMessage<InternalError>(AllOf(
          HasSubstr("NVRTC failed to compile kernel 'broken' for sm_90a"),
          HasSubstr("NVRTC log:"), HasSubstr("fuser_kernel.cu(3)"),
          HasSubstr("error"), HasSubstr("    3 |   x[0] = y +;"),
          HasSubstr("    1 | extern \"C\" __global__ void broken"),
          HasSubstr("FUSER_DUMP=cuda_kernel"))));
  EXPECT_EQ(kernelCacheStats().misses, 0);
  // The failure leaves the compiler and its cache usable: the next kernel
  // compiles, and the broken one fails again (it was not cached).
  EXPECT_FALSE(
      compileToCubin(addOneKernel(), "fuser_add_one", 90, true).cubin.empty());
  EXPECT_EQ(kernelCacheStats().misses, 1);
  EXPECT_THROW(compileToCubin(source, "broken", 90, true), InternalError);
}

TEST_F(NvrtcTest, MemoryCacheHitsOnSecondCompile) {
  const std::string source = addOneKernel();
  CompiledModule first = compileToCubin(source, "fuser_add_one", 90, true);
  CompiledModule second = compileToCubin(source, "fuser_add_one", 90, true);
  EXPECT_EQ(first.cubin, second.cubin);
  KernelCacheStats stats = kernelCacheStats();
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.memory_hits, 1);
  // Another architecture or option is another kernel.
  compileToCubin(source, "fuser_add_one", 90, false);
  compileToCubin(source, "fuser_add_one", 90, true, {"-DFUSER_TEST_OPTION"});
  stats = kernelCacheStats();
  EXPECT_EQ(stats.misses, 3);
  EXPECT_EQ(stats.memory_hits, 1);
}

// Unset, FUSER_KERNEL_CACHE_DIR means the per-user cache folder; "off" and
// "" mean none.
TEST_F(NvrtcTest, DiskCacheFolderFromTheEnvironment) {
  char dir_template[] = "/tmp/fuser_xdg_cache_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string xdg = dir_template;
  {
    ScopedEnv unset("FUSER_KERNEL_CACHE_DIR", std::nullopt);
    ScopedEnv cache_home("XDG_CACHE_HOME", xdg);
    EXPECT_EQ(kernelDiskCacheDir(), xdg + "/fuser/kernels");
    compileToCubin(addOneKernel(), "fuser_add_one", 90, true);
    EXPECT_EQ(filesIn(xdg + "/fuser/kernels").size(), 1u);
    {
      ScopedEnv no_xdg("XDG_CACHE_HOME", std::nullopt);
      ScopedEnv home("HOME", "/home/someone");
      EXPECT_EQ(kernelDiskCacheDir(), "/home/someone/.cache/fuser/kernels");
    }
  }
  {
    ScopedEnv off("FUSER_KERNEL_CACHE_DIR", "off");
    EXPECT_EQ(kernelDiskCacheDir(), "");
  }
  {
    ScopedEnv empty("FUSER_KERNEL_CACHE_DIR", "");
    EXPECT_EQ(kernelDiskCacheDir(), "");
  }
  {
    ScopedEnv moved("FUSER_KERNEL_CACHE_DIR", "/var/cache/kernels");
    EXPECT_EQ(kernelDiskCacheDir(), "/var/cache/kernels");
  }
  for (const std::string& file : filesIn(xdg + "/fuser/kernels")) {
    std::remove(file.c_str());
  }
  ::rmdir((xdg + "/fuser/kernels").c_str());
  ::rmdir((xdg + "/fuser").c_str());
  ::rmdir(dir_template);
}

TEST_F(NvrtcTest, DiskCacheSurvivesTheMemoryCache) {
  char dir_template[] = "/tmp/fuser_kernel_cache_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  // A directory that does not exist yet is created.
  const std::string dir = std::string(dir_template) + "/cache";
  ScopedEnv env("FUSER_KERNEL_CACHE_DIR", dir);
  const std::string source = addOneKernel();

  CompiledModule compiled = compileToCubin(source, "fuser_add_one", 90, true);
  EXPECT_EQ(kernelCacheStats().misses, 1);
  const std::vector<std::string> entries = filesIn(dir);
  ASSERT_EQ(entries.size(), 1u);

  clearKernelCache(); // as a new process would start
  CompiledModule loaded = compileToCubin(source, "fuser_add_one", 90, true);
  EXPECT_EQ(kernelCacheStats().disk_hits, 1);
  EXPECT_EQ(kernelCacheStats().misses, 0);
  EXPECT_EQ(loaded.cubin, compiled.cubin);
  EXPECT_EQ(loaded.lowered_name, "fuser_add_one");
  EXPECT_EQ(loaded.arch, "sm_90a");

  // A damaged entry is ignored and rewritten.
  clearKernelCache();
  std::ofstream(entries[0], std::ios::binary | std::ios::trunc) << "garbage";
  CompiledModule recompiled = compileToCubin(source, "fuser_add_one", 90, true);
  EXPECT_EQ(kernelCacheStats().misses, 1);
  EXPECT_EQ(kernelCacheStats().disk_hits, 0);
  EXPECT_EQ(recompiled.cubin, compiled.cubin);
  EXPECT_EQ(filesIn(dir), entries);
  for (const std::string& file : filesIn(dir)) {
    std::remove(file.c_str());
  }
  ::rmdir(dir.c_str());
  ::rmdir(dir_template);
}

// Without a driver the error says so; with one, the device is queried.
// The entry's checksum covers the cubin: a flipped bit is a miss and the
// entry is written again, not a broken kernel loaded.
TEST_F(NvrtcTest, DiskCacheEntryWithAFlippedBitIsRecompiled) {
  char dir_template[] = "/tmp/fuser_kernel_cache_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  ScopedEnv env("FUSER_KERNEL_CACHE_DIR", dir);
  const std::string source = addOneKernel();
  CompiledModule compiled = compileToCubin(source, "fuser_add_one", 90, true);
  const std::vector<std::string> entries = filesIn(dir);
  ASSERT_EQ(entries.size(), 1u);
  std::string bytes;
  {
    std::ifstream in(entries[0], std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 64u);
  bytes[bytes.size() - 32] ^= 0x10; // inside the cubin, before the checksum
  std::ofstream(entries[0], std::ios::binary | std::ios::trunc) << bytes;

  clearKernelCache();
  CompiledModule recompiled = compileToCubin(source, "fuser_add_one", 90, true);
  EXPECT_EQ(kernelCacheStats().misses, 1);
  EXPECT_EQ(kernelCacheStats().disk_hits, 0);
  EXPECT_EQ(recompiled.cubin, compiled.cubin);
  clearKernelCache();
  compileToCubin(source, "fuser_add_one", 90, true);
  EXPECT_EQ(kernelCacheStats().disk_hits, 1) << "the entry was rewritten";
  for (const std::string& file : filesIn(dir)) {
    std::remove(file.c_str());
  }
  ::rmdir(dir.c_str());
}

// Two processes that miss the same kernel at once both write its entry
// (each a private temporary renamed over the entry): what is left is one
// whole entry that a third reader loads.
TEST_F(NvrtcTest, TwoProcessesWritingOneEntryLeaveAWholeOne) {
  char dir_template[] = "/tmp/fuser_kernel_cache_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  ScopedEnv env("FUSER_KERNEL_CACHE_DIR", dir);
  const std::string source = addOneKernel();
  std::vector<pid_t> children;
  for (int child = 0; child < 2; ++child) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Each round is a fresh miss (empty memory cache) that rewrites the
      // entry; _exit keeps the child out of the test framework's exit.
      bool ok = true;
      for (int round = 0; round < 4 && ok; ++round) {
        clearKernelCache();
        ok = !compileToCubin(source, "fuser_add_one", 90, true).cubin.empty();
      }
      ::_exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const std::vector<std::string> entries = filesIn(dir);
  EXPECT_EQ(entries.size(), 1u) << "no temporary is left behind";
  clearKernelCache();
  CompiledModule loaded = compileToCubin(source, "fuser_add_one", 90, true);
  EXPECT_EQ(kernelCacheStats().disk_hits, 1);
  EXPECT_EQ(kernelCacheStats().misses, 0);
  EXPECT_FALSE(loaded.cubin.empty());
  for (const std::string& file : filesIn(dir)) {
    std::remove(file.c_str());
  }
  ::rmdir(dir.c_str());
}

// A cache folder that cannot be made (a path under a regular file) leaves
// kernels in the memory cache, with one warning per process.
TEST_F(NvrtcTest, UnwritableCacheFolderWarnsOnce) {
  char file_template[] = "/tmp/fuser_kernel_cache_file_XXXXXX";
  const int fd = mkstemp(file_template);
  ASSERT_GE(fd, 0);
  ::close(fd);
  ScopedEnv env(
      "FUSER_KERNEL_CACHE_DIR", std::string(file_template) + "/cache");
  ::testing::internal::CaptureStderr();
  CompiledModule first =
      compileToCubin(addOneKernel(), "fuser_add_one", 90, true);
  CompiledModule second = compileToCubin(
      addOneKernel(), "fuser_add_one", 90, true, {"-DFUSER_TEST_OPTION"});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(first.cubin.empty());
  EXPECT_FALSE(second.cubin.empty());
  size_t warnings = 0;
  for (size_t at = err.find("cannot write the kernel cache entry");
       at != std::string::npos;
       at = err.find("cannot write the kernel cache entry", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 1u) << err;
  std::remove(file_template);
}

TEST_F(NvrtcTest, DriverLoadsLazily) {
  if (!driverAvailable()) {
    EXPECT_THAT(
        [] { driverApi(); },
        ThrowsMessage<UserError>(HasSubstr("no CUDA driver / GPU found")));
    EXPECT_THAT(
        [] { deviceComputeCapability(0); },
        ThrowsMessage<UserError>(HasSubstr("no CUDA driver / GPU found")));
  } else {
    EXPECT_NE(driverApi().cuLaunchKernel, nullptr);
    EXPECT_GE(deviceComputeCapability(0), 50);
  }
}

class NvrtcGpuTest : public FuserTest {};

// Compile for the device's architecture, load with the driver and launch.
TEST_F(NvrtcGpuTest, LaunchesCompiledKernel) {
  ASSERT_TRUE(driverAvailable());
  const int device = 0;
  const int capability = deviceComputeCapability(device);
  at::Tensor in =
      at::arange(1000, at::TensorOptions().device(at::kCUDA, device));
  in = in.to(at::kFloat);
  at::Tensor out = at::zeros_like(in);
  // The architecture-specific target exists from sm_90 on.
  CompiledModule module = compileToCubin(
      addOneKernel(), "fuser_add_one", capability, capability >= 90);

  const DriverApi& api = driverApi();
  ensureCurrentContext(device);
  CUmodule cu_module = nullptr;
  FUSER_CUDA_SAFE_CALL(api.cuModuleLoadData(&cu_module, module.cubin.data()));
  CUfunction function = nullptr;
  FUSER_CUDA_SAFE_CALL(api.cuModuleGetFunction(
      &function, cu_module, module.lowered_name.c_str()));
  // Host mirror of runtime/tensor.h's Tensor<float, 1, 1>.
  struct TensorArg {
    float* data;
    long long logical_size[1];
    long long alloc_stride[1];
  };
  TensorArg in_arg{in.data_ptr<float>(), {in.size(0)}, {in.stride(0)}};
  TensorArg out_arg{out.data_ptr<float>(), {out.size(0)}, {out.stride(0)}};
  void* args[] = {&in_arg, &out_arg};
  FUSER_CUDA_SAFE_CALL(api.cuLaunchKernel(
      function, 4, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  EXPECT_TRUE(at::equal(out.cpu(), in.cpu() + 1));
  FUSER_CUDA_SAFE_CALL(api.cuModuleUnload(cu_module));

  // A bad launch (too many threads per block) names the driver error.
  EXPECT_THAT(
      [&] {
        CUmodule again = nullptr;
        FUSER_CUDA_SAFE_CALL(api.cuModuleLoadData(&again, module.cubin.data()));
        CUfunction f = nullptr;
        FUSER_CUDA_SAFE_CALL(
            api.cuModuleGetFunction(&f, again, module.lowered_name.c_str()));
        FUSER_CUDA_SAFE_CALL(api.cuLaunchKernel(
            f, 1, 1, 1, 4096, 1, 1, 0, nullptr, args, nullptr));
      },
      ThrowsMessage<CudaDriverError>(AllOf(
          HasSubstr("CUDA_ERROR_INVALID_VALUE"),
          HasSubstr("api.cuLaunchKernel"))));
}

} // namespace fuser
