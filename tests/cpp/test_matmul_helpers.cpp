// The Hopper matmul pipeline (runtime/hopper_async.h, hopper_gmma.h,
// hopper_matmul.h; doc/matmul.md §3) called from a hand-written persistent
// kernel: compiled with NVRTC for sm_90a on the CPU, run on the GPU for each
// operand layout (K- or M/N-major A and B) and sizes that are no multiple
// of the tile, against ATen. Generated kernels call the same helpers
// (test_matmul.cpp).
#include <runtime/driver_api.h>
#include <runtime/nvrtc_compile.h>
#include <runtime/tensor_map.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace fuser {

namespace {

constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kBK = 64;

// out[M, N] (float, row-major) = A * B for one layout of A and B.
std::string helperKernel(bool a_mn_major, bool b_mn_major) {
  const std::string config = "fuser_mma::Matmul<__nv_bfloat16, " +
                             std::to_string(kBM) + ", " + std::to_string(kBN) +
                             ", " + std::to_string(kBK) + ", 4, " +
                             (a_mn_major ? "true" : "false") + ", " +
                             (b_mn_major ? "true" : "false") + ", 2, 2>";
  return runtimePreamble() + "using Mm = " + config + ";\n" + R"(
extern "C" __global__ void __launch_bounds__(Mm::kThreads, 1) matmul_helpers(
    const __grid_constant__ fuser_mma::TensorMap map_a,
    const __grid_constant__ fuser_mma::TensorMap map_b,
    fuser_mma::TileCoordinates<2> tile_a, fuser_mma::TileCoordinates<2> tile_b,
    float* out, int m, int n, int k) {
  extern __shared__ __align__(1024) char smem[];
  Mm::init(smem);
  __syncthreads();
  const int tiles_n = (n + 127) / 128;
  const int tiles = (m + 127) / 128 * tiles_n;
  const int k_tiles = (k + 63) / 64;
  Mm::State state;
  if (threadIdx.y == Mm::kConsumers) {
    fuser_mma::releaseRegisters<40>();
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      Mm::produce(&map_a, tile_a, &map_b, tile_b, t / tiles_n * 128,
                  t % tiles_n * 128, nullptr, k_tiles, state, smem);
    }
  } else {
    fuser_mma::claimRegisters<232>();
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      float acc[64];
      Mm::consume(acc, k_tiles, state, smem);
      const int tx = threadIdx.x;
#pragma unroll
      for (int i = 0; i < 64; ++i) {
        const int row = t / tiles_n * 128 + 64 * threadIdx.y + 16 * (tx / 32) +
                        (tx % 32) / 4 + 8 * ((i / 2) % 2);
        const int col = t % tiles_n * 128 + 8 * (i / 4) + 2 * (tx % 4) + i % 2;
        if (row < m && col < n) {
          out[row * n + col] = acc[i];
        }
      }
    }
  }
}
)";
}

// Host mirror of fuser_mma::TileCoordinates<2>.
struct Coordinates2 {
  int role[2];
  int div[2];
  int mod[2];
};

// The map and tile coordinates of a [rows, k] operand (rows: M or N).
// K-major: memory [rows][k], dims {k, rows}, box {kBK, tile rows}.
// MN-major: memory [k][rows], dims {rows, k}, box {64, kBK}.
std::pair<TensorMapGeometry, Coordinates2> operandGeometry(
    bool mn_major, int64_t rows, int64_t k, int64_t tile_rows) {
  TensorMapGeometry geometry;
  geometry.dtype = DataType::BFloat16;
  geometry.swizzle_bytes = 128;
  Coordinates2 coordinates{};
  if (mn_major) {
    geometry.sizes = {rows, k};
    geometry.box = {64, kBK};
    geometry.strides_bytes = {rows * 2};
    coordinates.role[0] = 0;
    coordinates.role[1] = 1;
  } else {
    geometry.sizes = {k, rows};
    geometry.box = {kBK, tile_rows};
    geometry.strides_bytes = {k * 2};
    coordinates.role[0] = 1;
    coordinates.role[1] = 0;
  }
  coordinates.div[0] = coordinates.div[1] = 1;
  return {geometry, coordinates};
}

} // namespace

class MatmulHelpersTest : public FuserIrTest {};
class MatmulHelpersGpuTest : public FuserTest {};

TEST_F(MatmulHelpersTest, CompileForSm90aEveryLayout) {
  for (bool a_mn : {false, true}) {
    for (bool b_mn : {false, true}) {
      CompiledModule module =
          compileToCubin(helperKernel(a_mn, b_mn), "matmul_helpers", 90, true);
      EXPECT_FALSE(module.cubin.empty());
    }
  }
}

TEST_F(MatmulHelpersGpuTest, MatchATenEveryLayout) {
  const int capability = deviceComputeCapability(0);
  if (capability < 90) {
    GTEST_SKIP() << "the pipeline needs sm_90 (found sm_" << capability << ")";
  }
  const int64_t m = 320, n = 192, k = 1000;
  const auto bf16 = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  const DriverApi& api = driverApi();
  ensureCurrentContext(0);
  for (bool a_mn : {false, true}) {
    for (bool b_mn : {false, true}) {
      SCOPED_TRACE(
          std::string("A ") + (a_mn ? "M" : "K") + "-major, B " +
          (b_mn ? "N" : "K") + "-major");
      // Logical A [m, k] and B [k, n]; the memory follows the layout.
      at::Tensor a =
          a_mn ? at::randn({k, m}, bf16).t() : at::randn({m, k}, bf16);
      at::Tensor b_nk =
          b_mn ? at::randn({k, n}, bf16).t() : at::randn({n, k}, bf16);
      at::Tensor out = at::full({m, n}, std::nanf(""), bf16.dtype(at::kFloat));
      auto [geometry_a, tile_a] = operandGeometry(a_mn, m, k, kBM);
      auto [geometry_b, tile_b] = operandGeometry(b_mn, n, k, kBN);
      CUtensorMap map_a = encodeTensorMap(geometry_a, a.data_ptr());
      CUtensorMap map_b = encodeTensorMap(geometry_b, b_nk.data_ptr());

      CompiledModule module = compileToCubin(
          helperKernel(a_mn, b_mn), "matmul_helpers", capability, true);
      CUmodule cu_module = nullptr;
      FUSER_CUDA_SAFE_CALL(
          api.cuModuleLoadData(&cu_module, module.cubin.data()));
      CUfunction function = nullptr;
      FUSER_CUDA_SAFE_CALL(api.cuModuleGetFunction(
          &function, cu_module, module.lowered_name.c_str()));
      const int smem = 1024 + 4 * (kBM + kBN) * kBK * 2 + 2 * 4 * 8;
      FUSER_CUDA_SAFE_CALL(api.cuFuncSetAttribute(
          function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
      void* out_ptr = out.data_ptr();
      int mi = static_cast<int>(m), ni = static_cast<int>(n),
          ki = static_cast<int>(k);
      std::vector<void*> args = {&map_a,   &map_b, &tile_a, &tile_b,
                                 &out_ptr, &mi,    &ni,     &ki};
      // Fewer blocks than tiles: each block walks several tiles, so the
      // ring's phases carry over from one tile to the next.
      FUSER_CUDA_SAFE_CALL(api.cuLaunchKernel(
          function, 2, 1, 1, 128, 3, 1, smem, nullptr, args.data(), nullptr));
      at::Tensor expected =
          at::matmul(a.to(at::kFloat), b_nk.t().to(at::kFloat));
      EXPECT_FALSE(out.isnan().any().item<bool>()) << "unwritten outputs";
      const double error = (out - expected).norm().item<double>() /
                           expected.norm().item<double>();
      EXPECT_LT(error, 1e-5);
      FUSER_CUDA_SAFE_CALL(api.cuModuleUnload(cu_module));
    }
  }
}

} // namespace fuser
