// The device helpers of reductions (runtime/block_reduction.h,
// runtime/grid_reduction.h, runtime/welford.h; doc/reduction.md §3-§4),
// called from a hand-written kernel: compiled with NVRTC on the CPU, run
// and checked against ATen on the GPU. Generated kernels call them too
// (test_reduction.cpp); this covers the calls no scheduler makes yet
// (blockBroadcast, grouped block reductions, Welford in doubles).
#include <runtime/driver_api.h>
#include <runtime/nvrtc_compile.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fuser {

namespace {

// Blocks of 64 x 2 threads over `in` (one element per thread, 2 row
// segments of 64 per block):
// - row_sums[(block * 2 + y) * 2 + k]: blockReduceGroup of {x, 2x} per row;
// - spread[thread]: the row's sum again, through blockBroadcast;
// - stats[block * 3 + j]: Welford<double> of the block (mean, var_sum, n);
// - grid[0..2): gridReduceGroup of {x, 1} over the grid (sum, count).
std::string helperKernel() {
  return runtimePreamble() + R"(
extern "C" __global__ void reduction_helpers(
    const float* in, float* row_sums, float* spread, double* stats,
    float* grid, float* work, long long* semaphores) {
  extern __shared__ __align__(16) char smem[];
  const unsigned thread = threadIdx.y * blockDim.x + threadIdx.x;
  const unsigned block_threads = blockDim.x * blockDim.y;
  const float x = in[blockIdx.x * block_threads + thread];
  auto add = [](float& a, float b) { a = a + b; };

  float pair[2] = {x, 2.0f * x};
  float sums[2] = {0.0f, 0.0f};
  blockReduceGroup<2, true, false, false>(
      sums, pair, add, reinterpret_cast<float*>(smem), true, true, 0.0f);
  if (threadIdx.x == 0) {
    for (int k = 0; k < 2; ++k) {
      row_sums[(blockIdx.x * blockDim.y + threadIdx.y) * 2 + k] = sums[k];
    }
  }
  spread[blockIdx.x * block_threads + thread] =
      blockBroadcast<true, false, false>(sums[0], reinterpret_cast<float*>(smem));

  Welford<double> state;
  blockReduce<true, true, false>(
      state, welfordInit(static_cast<double>(x)),
      [](Welford<double>& a, Welford<double> b) { a = welfordCombine(a, b); },
      reinterpret_cast<Welford<double>*>(smem), true, true, Welford<double>());
  if (thread == 0) {
    stats[blockIdx.x * 3 + 0] = state.avg;
    stats[blockIdx.x * 3 + 1] = state.var_sum;
    stats[blockIdx.x * 3 + 2] = static_cast<double>(state.n);
  }

  float values[2] = {x, 1.0f};
  float totals[2] = {0.0f, 0.0f};
  const bool last = gridReduceGroup<2, true, false, false, true, true, false>(
      totals, values, add, reinterpret_cast<float*>(smem), work, semaphores,
      true, true, 0.0f);
  if (last && thread == 0) {
    grid[0] = totals[0];
    grid[1] = totals[1];
  }
}
)";
}

constexpr int kBlocks = 37;
constexpr int kThreadsX = 64;
constexpr int kThreadsY = 2;

} // namespace

class ReductionHelpersTest : public FuserIrTest {};
class ReductionHelpersGpuTest : public FuserTest {};

TEST_F(ReductionHelpersTest, CompileForSm90a) {
  CompiledModule module =
      compileToCubin(helperKernel(), "reduction_helpers", 90, true);
  EXPECT_FALSE(module.cubin.empty());
}

TEST_F(ReductionHelpersGpuTest, MatchATen) {
  const int capability = deviceComputeCapability(0);
  CompiledModule module = compileToCubin(
      helperKernel(), "reduction_helpers", capability, capability >= 90);
  const auto f32 = at::TensorOptions().device(at::kCUDA).dtype(at::kFloat);
  const int threads = kThreadsX * kThreadsY;
  at::Tensor in = at::randn({kBlocks * threads}, f32);
  at::Tensor row_sums = at::zeros({kBlocks * kThreadsY * 2}, f32);
  at::Tensor spread = at::zeros({kBlocks * threads}, f32);
  at::Tensor stats = at::zeros({kBlocks * 3}, f32.dtype(at::kDouble));
  at::Tensor grid = at::zeros({2}, f32);
  at::Tensor work = at::zeros({kBlocks * threads * 2}, f32);
  at::Tensor semaphores = at::zeros({kBlocks}, f32.dtype(at::kLong));

  const DriverApi& api = driverApi();
  ensureCurrentContext(0);
  CUmodule cu_module = nullptr;
  FUSER_CUDA_SAFE_CALL(api.cuModuleLoadData(&cu_module, module.cubin.data()));
  CUfunction function = nullptr;
  FUSER_CUDA_SAFE_CALL(api.cuModuleGetFunction(
      &function, cu_module, module.lowered_name.c_str()));
  std::vector<void*> pointers = {in.data_ptr(),        row_sums.data_ptr(),
                                 spread.data_ptr(),    stats.data_ptr(),
                                 grid.data_ptr(),      work.data_ptr(),
                                 semaphores.data_ptr()};
  std::vector<void*> args;
  for (void*& p : pointers) {
    args.push_back(&p);
  }
  // Twice: the semaphores must be back at zero after a launch.
  for (int launch = 0; launch < 2; ++launch) {
    FUSER_CUDA_SAFE_CALL(api.cuLaunchKernel(
        function, kBlocks, 1, 1, kThreadsX, kThreadsY, 1,
        static_cast<unsigned>(threads * sizeof(double) * 3), nullptr,
        args.data(), nullptr));
    at::Tensor rows = in.view({kBlocks * kThreadsY, kThreadsX}).sum(1);
    EXPECT_TRUE(
        at::allclose(row_sums.view({-1, 2}).select(1, 0), rows, 1e-4, 1e-4));
    EXPECT_TRUE(at::allclose(
        row_sums.view({-1, 2}).select(1, 1), 2 * rows, 1e-4, 1e-4));
    EXPECT_TRUE(at::allclose(
        spread.view({kBlocks * kThreadsY, kThreadsX}),
        rows.unsqueeze(1).expand({-1, kThreadsX}), 1e-4, 1e-4));
    at::Tensor blocks = in.view({kBlocks, threads}).to(at::kDouble);
    at::Tensor mean = blocks.mean(1);
    at::Tensor var_sum = (blocks - mean.unsqueeze(1)).square().sum(1);
    at::Tensor got = stats.view({kBlocks, 3});
    EXPECT_TRUE(at::allclose(got.select(1, 0), mean, 1e-12, 1e-12));
    EXPECT_TRUE(at::allclose(got.select(1, 1), var_sum, 1e-10, 1e-10));
    EXPECT_TRUE(at::all(got.select(1, 2) == threads).item<bool>());
    EXPECT_NEAR(grid[0].item<float>(), in.sum().item<float>(), 1e-2);
    EXPECT_EQ(grid[1].item<float>(), static_cast<float>(kBlocks * threads));
    EXPECT_TRUE(at::all(semaphores == 0).item<bool>()) << "launch " << launch;
  }
  FUSER_CUDA_SAFE_CALL(api.cuModuleUnload(cu_module));
}

} // namespace fuser
