// The scheduler registry and the pointwise scheduler: which scheduler is
// chosen, the vectorization width, loop order from layouts, caches without
// propagated allocation, the fallback width for a misaligned input.
#include <codegen/codegen.h>
#include <device_lower/lower.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/nvrtc_compile.h>
#include <scheduler/pointwise.h>
#include <scheduler/registry.h>
#include <tests/cpp/utils.h>

#include <functional>
#include <regex>
#include <sstream>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fuser {

using ::testing::HasSubstr;
using ::testing::Not;

class PointwiseSchedulerTest : public FuserIrTest {};

namespace {

// RuntimeInfo for `fusion` with each tensor input of the given logical
// sizes, laid out densely in its allocation order, its data pointer aligned
// to `alignment` bytes.
RuntimeInfo makeInfo(
    Fusion* fusion, const std::vector<std::vector<int64_t>>& sizes,
    int64_t alignment = 16) {
  ExpressionEvaluator ee;
  size_t t = 0;
  std::vector<std::pair<TensorView*, std::vector<int64_t>>> tensors;
  for (Val* input : fusion->inputs()) {
    auto* tv = dynamic_cast<TensorView*>(input);
    if (tv == nullptr) {
      continue;
    }
    const auto& shape = sizes.at(t++);
    const auto logical = TensorDomain::noReductions(tv->getLogicalDomain());
    for (size_t i = 0; i < logical.size(); ++i) {
      if (!logical[i]->extent()->isConst()) {
        ee.bind(logical[i]->extent(), shape[i]);
      }
    }
    tensors.emplace_back(tv, shape);
  }
  RuntimeInfo info(ee);
  for (auto& [tv, shape] : tensors) {
    TensorRuntimeInfo tensor_info;
    // Allocation sizes by evaluating the allocation IDs; dense strides.
    for (IterDomain* id : tv->getMaybeAllocationDomain()) {
      tensor_info.layout.allocation_sizes.push_back(info.extent(id));
    }
    tensor_info.layout.allocation_strides.resize(
        tensor_info.layout.allocation_sizes.size());
    int64_t stride = 1;
    for (size_t k = tensor_info.layout.allocation_sizes.size(); k-- > 0;) {
      tensor_info.layout.allocation_strides[k] = stride;
      stride *= tensor_info.layout.allocation_sizes[k];
    }
    tensor_info.alignment_bytes = alignment;
    info.setTensorInfo(tv, tensor_info);
  }
  return info;
}

struct Scheduled {
  SchedulerType type;
  std::unique_ptr<HeuristicParams> params;
  std::vector<std::string> rejections;
};

Scheduled scheduleWith(Fusion* fusion, RuntimeInfo& info) {
  SchedulerChoice choice = chooseScheduler(fusion, info);
  Scheduled result{
      choice.scheduler->type(),
      choice.scheduler->computeHeuristics(fusion, info), choice.rejections};
  choice.scheduler->schedule(fusion, *result.params);
  if (result.type == SchedulerType::PointWise ||
      result.type == SchedulerType::Reduction) {
    // Every scheduled fusion must give a kernel that compiles.
    const std::string code = generateCudaKernel(fusion);
    EXPECT_NO_THROW(compileToCubin(code, "fuser_kernel", 90, true))
        << result.params->toString();
  }
  return result;
}

const PointwiseParams& pointwise(const Scheduled& s) {
  return dynamic_cast<const PointwiseParams&>(*s.params);
}

// Programs of issue 18's benchmark, built into the current fusion; each
// returns its inputs' sizes for makeInfo.
using InputSizes = std::vector<std::vector<int64_t>>;

// a + b of two contiguous [rows, cols] floats.
InputSizes floatAdd(Fusion* fusion, int64_t rows, int64_t cols) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addInput(b);
  fusion->addOutput(add(a, b));
  return {{rows, cols}, {rows, cols}};
}

// relu(a + b) * 2 of two [4096, 1024] floats.
InputSizes addReluTimesTwo(Fusion* fusion) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addInput(b);
  fusion->addOutput(mul(relu(add(a, b)), IrBuilder::create<Val>(2.0)));
  return {{4096, 1024}, {4096, 1024}};
}

// A tanh-GELU of a bf16 [4096, 1024], computed in float as the benchmark
// does: 0.5 x (1 + tanh(0.79788456 (x + 0.044715 x^3))), 9 operations.
InputSizes bf16TanhGelu(Fusion* fusion) {
  TensorView* a = makeContigTensor(2, DataType::BFloat16);
  fusion->addInput(a);
  TensorView* x = castOp(DataType::Float, a);
  TensorView* cube = mul(mul(x, x), x);
  TensorView* inner =
      mul(add(x, mul(cube, IrBuilder::create<Val>(0.044715))),
          IrBuilder::create<Val>(0.79788456));
  TensorView* y =
      mul(mul(x, IrBuilder::create<Val>(0.5)),
          add(tanh(inner), IrBuilder::create<Val>(1.0)));
  fusion->addOutput(castOp(DataType::BFloat16, y));
  return {{4096, 1024}};
}

// x[rows, cols] + bias[cols], the bias broadcast along the rows.
InputSizes biasAdd(Fusion* fusion, int64_t rows, int64_t cols) {
  TensorView* x = makeContigTensor(2);
  TensorView* bias = makeContigTensor(1);
  fusion->addInput(x);
  fusion->addInput(bias);
  fusion->addOutput(add(x, broadcast(bias, {true, false})));
  return {{rows, cols}, {cols}};
}

// x * scale[C] + shift[C] of an NHWC [64, 64, 32, 32] float tensor.
InputSizes nhwcScaleShift(Fusion* fusion) {
  TensorView* x = makeContigTensor(4);
  x->setAllocationDomain(
      {x->axis(0), x->axis(2), x->axis(3), x->axis(1)}, true);
  TensorView* scale = makeContigTensor(1);
  TensorView* shift = makeContigTensor(1);
  fusion->addInput(x);
  fusion->addInput(scale);
  fusion->addInput(shift);
  const std::vector<bool> channel = {true, false, true, true};
  fusion->addOutput(
      add(mul(x, broadcast(scale, channel)), broadcast(shift, channel)));
  return {{64, 64, 32, 32}, {64}, {64}};
}

// The kernel function of generated code, without the runtime headers
// (whose helpers hold divisions and remainders of their own).
std::string kernelFunction(const std::string& code) {
  return code.substr(code.find("// ---- kernel"));
}

// Whether every read of fusion input `input` in `kernel` comes before the
// first write of fusion output `output`: unrolled, a load after a store
// would wait for it (the pointers may alias, doc/pointwise.md §4).
::testing::AssertionResult loadsPrecedeStores(
    const std::string& kernel, const TensorView* input,
    const TensorView* output) {
  const std::string load = "&T" + std::to_string(input->name()) + "[";
  const std::string store = "&T" + std::to_string(output->name()) + "[";
  const size_t last_load = kernel.rfind(load);
  const size_t first_store = kernel.find(store);
  if (last_load == std::string::npos || first_store == std::string::npos ||
      last_load > first_store) {
    return ::testing::AssertionFailure()
           << "a read of " << load << " follows a write of " << store
           << " (or either is missing)\n"
           << kernel;
  }
  return ::testing::AssertionSuccess();
}

} // namespace

TEST_F(PointwiseSchedulerTest, ContiguousFloatVectorizesByFour) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  RuntimeInfo info = makeInfo(fusion.get(), floatAdd(fusion.get(), 64, 256));
  Scheduled s = scheduleWith(fusion.get(), info);
  ASSERT_EQ(s.type, SchedulerType::PointWise);
  EXPECT_EQ(pointwise(s).vectorize, 4);
  EXPECT_EQ(pointwise(s).break_point, 0);
  EXPECT_EQ(pointwise(s).vectorize_input, (std::vector<bool>{true, true}));
  EXPECT_THAT(s.params->toString(), HasSubstr("vectorize 4"));
  // Caches carry no propagated allocation.
  ASSERT_EQ(fusion->inputs().size(), 2u);
  for (Val* input : fusion->inputs()) {
    auto* cache = input->uses().front()->output(0)->as<TensorView>();
    EXPECT_FALSE(cache->hasAllocation()) << cache->toString();
    EXPECT_EQ(cache->axis(-1)->getParallelType(), ParallelType::Vectorize);
  }
  std::string code = generateCudaKernel(fusion.get());
  EXPECT_THAT(code, HasSubstr("vectorizedCopy<float, 4>"));
}

TEST_F(PointwiseSchedulerTest, Bfloat16VectorizesByEight) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(1, DataType::BFloat16);
  fusion->addInput(a);
  fusion->addOutput(castOp(DataType::BFloat16, gelu(a)));
  RuntimeInfo info = makeInfo(fusion.get(), {{1 << 16}});
  Scheduled s = scheduleWith(fusion.get(), info);
  ASSERT_EQ(s.type, SchedulerType::PointWise);
  EXPECT_EQ(pointwise(s).vectorize, 8);
  EXPECT_THAT(
      generateCudaKernel(fusion.get()),
      HasSubstr("vectorizedCopy<__nv_bfloat16, 8>"));
}

// The per-element exprs around a vector of a merged 2-D tensor share the
// vector's predicate: every launch checks M * N to be a multiple of the
// width, so no lane is tested on its own (regression: the merged extent's
// predicate `(v * 8 + lane) / N < M`, rewritten `v * 8 + lane < M * N`,
// kept the lane, eight 64-bit compares per vector of a bf16 GELU).
TEST_F(PointwiseSchedulerTest, LanesOfAMergedVectorShareItsPredicate) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2, DataType::BFloat16);
  fusion->addInput(a);
  TensorView* x = castOp(DataType::Float, a);
  fusion->addOutput(castOp(DataType::BFloat16, tanh(mul(x, x))));
  RuntimeInfo info = makeInfo(fusion.get(), {{4096, 1024}});
  Scheduled s = scheduleWith(fusion.get(), info);
  ASSERT_EQ(s.type, SchedulerType::PointWise);
  ASSERT_EQ(pointwise(s).vectorize, 8);
  const std::string code = generateCudaKernel(fusion.get());
  EXPECT_THAT(code, HasSubstr("tanh("));
  // A lane index in a predicate reads "* 8) + i<n>) <".
  EXPECT_FALSE(std::regex_search(code, std::regex(R"(\* 8\) \+ i[0-9]+\) <)")))
      << code;
  EXPECT_THAT(
      code, HasSubstr("* 8) < (T0.logical_size[0] * T0.logical_size[1])"));
}

// Axes of two inputs that the fusion joins have one size, and the kernel
// names it once (regression: `a + b` bounded b's vector by
// `i % T0.logical_size[1] < T1.logical_size[1]`, a 64-bit remainder per
// lane that no rule could drop; relu(a + b) * 2 ran at 85% of copy).
TEST_F(PointwiseSchedulerTest, JoinedAxesOfTwoInputsShareOneName) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  RuntimeInfo info = makeInfo(fusion.get(), addReluTimesTwo(fusion.get()));
  Scheduled s = scheduleWith(fusion.get(), info);
  ASSERT_EQ(s.type, SchedulerType::PointWise);
  const std::string kernel = kernelFunction(generateCudaKernel(fusion.get()));
  EXPECT_THAT(kernel, Not(HasSubstr(" % ")));
  EXPECT_THAT(kernel, Not(HasSubstr("T1.logical_size")));
  EXPECT_THAT(
      kernel, HasSubstr("* 4) < (T0.logical_size[0] * T0.logical_size[1])"));
}

// A kernel includes cuda_fp16.h / cuda_bf16.h only for the types it uses
// (each header costs NVRTC time), and every variant compiles.
TEST_F(PointwiseSchedulerTest, KernelIncludesOnlyTheFloatHeadersItUses) {
  auto kernelOf = [&](DataType in, DataType out) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* a = makeContigTensor(1, in);
    fusion->addInput(a);
    fusion->addOutput(castOp(out, neg(castOp(DataType::Float, a))));
    RuntimeInfo info = makeInfo(fusion.get(), {{1024}});
    scheduleWith(fusion.get(), info);
    return generateCudaKernel(fusion.get());
  };
  const std::string f32 = kernelOf(DataType::Float, DataType::Float);
  EXPECT_THAT(f32, Not(HasSubstr("cuda_fp16.h")));
  EXPECT_THAT(f32, Not(HasSubstr("cuda_bf16.h")));
  const std::string bf16 = kernelOf(DataType::BFloat16, DataType::Float);
  EXPECT_THAT(bf16, Not(HasSubstr("cuda_fp16.h")));
  EXPECT_THAT(
      bf16, HasSubstr("#define FUSER_HAS_BFLOAT16\n#include <cuda_bf16.h>"));
  const std::string both = kernelOf(DataType::Half, DataType::BFloat16);
  EXPECT_THAT(both, HasSubstr("#include <cuda_fp16.h>"));
  EXPECT_THAT(both, HasSubstr("#include <cuda_bf16.h>"));
}

namespace {

// The lines of `ptx` that load from or store to global memory.
std::vector<std::string> globalAccesses(const std::string& ptx) {
  std::vector<std::string> lines;
  std::istringstream in(ptx);
  for (std::string line; std::getline(in, line);) {
    if (line.find("ld.global") != std::string::npos ||
        line.find("st.global") != std::string::npos) {
      lines.push_back(line);
    }
  }
  return lines;
}

} // namespace

// What the H200 runs, checked on the CPU: the issue's pointwise kernels use
// no local memory (ptxas reports no stack frame and no spills) and move
// every global element in 16-byte vectors (each global load and store of
// the PTX is a .v4 access), stored without a cache operator.
TEST_F(PointwiseSchedulerTest, KernelsUseNoLocalMemoryAnd128BitAccesses) {
  using Build = std::function<InputSizes(Fusion*)>;
  const std::vector<std::pair<std::string, Build>> programs = {
      {"relu(a + b) * 2", addReluTimesTwo},
      {"bf16 tanh GELU", bf16TanhGelu},
      {"bias add", [](Fusion* fusion) { return biasAdd(fusion, 8192, 1024); }},
      {"NHWC scale and shift", nhwcScaleShift},
  };
  for (const auto& [name, build] : programs) {
    SCOPED_TRACE(name);
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    RuntimeInfo info = makeInfo(fusion.get(), build(fusion.get()));
    Scheduled s = scheduleWith(fusion.get(), info);
    ASSERT_EQ(s.type, SchedulerType::PointWise);
    const KernelInspection inspection =
        inspectForSm90a(generateCudaKernel(fusion.get()));
    FUSER_SKIP_WITHOUT_PTXAS_REPORT(inspection);
    EXPECT_TRUE(keepsEverythingInRegisters(inspection));
    const std::vector<std::string> accesses = globalAccesses(inspection.ptx);
    EXPECT_FALSE(accesses.empty());
    for (const std::string& access : accesses) {
      EXPECT_THAT(access, HasSubstr(".v4.")) << s.params->toString();
      // A cache operator on a store (st.global.wb) made ptxas write a
      // strong store (STG.E.128.STRONG.SM) where a plain one does: the bf16
      // layer norm over 12288 columns measured 3% slower with it.
      if (access.find("st.global") != std::string::npos) {
        EXPECT_THAT(access, Not(HasSubstr(".wb"))) << s.params->toString();
      }
    }
  }
}

// The unroll factor counts waves of the device the run is on (16 blocks of
// 128 threads per SM) where a fusion is worth unrolling: the 4096 blocks of
// the bf16 tanh-GELU (9 operations, vectors of 8) are less than a wave of
// 264 SMs (4224 blocks), one wave of 132 and four of 64.
TEST_F(PointwiseSchedulerTest, UnrollCountsWavesOfTheDevice) {
  for (const auto& [sms, unroll] :
       std::vector<std::pair<int64_t, int64_t>>{{264, 1}, {132, 2}, {64, 4}}) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    RuntimeInfo info = makeInfo(fusion.get(), bf16TanhGelu(fusion.get()));
    info.setMultiprocessors(sms);
    Scheduled s = scheduleWith(fusion.get(), info);
    EXPECT_EQ(pointwise(s).unroll, unroll) << sms << " SMs";
    if (unroll > 1) {
      EXPECT_TRUE(loadsPrecedeStores(
          kernelFunction(generateCudaKernel(fusion.get())),
          fusion->inputs()[0]->as<TensorView>(),
          fusion->outputs()[0]->as<TensorView>()));
    }
  }
}

// A light fusion of 16-byte vectors is never unrolled, however many waves
// its grid has (the last partial wave costs one block's time); the same add
// with scalar loads (an odd number of elements, [2047, 511]) is, from four
// waves.
TEST_F(PointwiseSchedulerTest, LightVectorizedFusionsAreNotUnrolled) {
  for (const auto& [cols, unroll] :
       std::vector<std::pair<int64_t, int64_t>>{{512, 1}, {511, 4}}) {
    const int64_t rows = cols == 512 ? 2048 : 2047;
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    RuntimeInfo info =
        makeInfo(fusion.get(), floatAdd(fusion.get(), rows, cols));
    info.setMultiprocessors(8);
    Scheduled s = scheduleWith(fusion.get(), info);
    EXPECT_EQ(pointwise(s).vectorize, cols == 512 ? 4 : 1);
    EXPECT_EQ(pointwise(s).unroll, unroll) << cols << " columns";
  }
}

TEST_F(PointwiseSchedulerTest, NhwcInputSetsLoopOrderAndOutputLayout) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(4);
  fusion->addInput(in);
  TensorView* out = relu(in);
  fusion->addOutput(out);
  const auto& l = in->getLogicalDomain();
  in->setAllocationDomain({l[0], l[2], l[3], l[1]}, true);
  RuntimeInfo info = makeInfo(fusion.get(), {{8, 3, 16, 16}});
  Scheduled s = scheduleWith(fusion.get(), info);
  ASSERT_EQ(s.type, SchedulerType::PointWise);
  EXPECT_EQ(pointwise(s).loop_order, (std::vector<int64_t>{0, 2, 3, 1}));
  EXPECT_EQ(pointwise(s).vectorize, 4);
  // The output is written in the input's layout...
  const auto& ol = out->getLogicalDomain();
  EXPECT_EQ(
      out->getAllocationDomain(),
      (std::vector<IterDomain*>{ol[0], ol[2], ol[3], ol[1]}));
  // ...and the input's cache got no layout.
  auto* cache = in->uses().front()->output(0)->as<TensorView>();
  EXPECT_FALSE(cache->hasAllocation());
  EXPECT_EQ(cache->axis(-1)->getParallelType(), ParallelType::Vectorize);
}

TEST_F(PointwiseSchedulerTest, SplitAllocationInputVectorizesByFour) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(1);
  fusion->addInput(in);
  fusion->addOutput(set(in));
  auto [outer, inner] = IterDomain::split(
      in->axis(0), IrBuilder::create<Val>(2, DataType::Index), true);
  in->setAllocationDomain({outer, inner}, true);
  RuntimeInfo info = makeInfo(fusion.get(), {{4096}});
  Scheduled s = scheduleWith(fusion.get(), info);
  ASSERT_EQ(s.type, SchedulerType::PointWise);
  EXPECT_EQ(pointwise(s).vectorize, 4);
  EXPECT_EQ(pointwise(s).vectorize_input, (std::vector<bool>{true}));
  auto* cache = in->uses().front()->output(0)->as<TensorView>();
  EXPECT_FALSE(cache->hasAllocation());
}

TEST_F(PointwiseSchedulerTest, MisalignedInputFallsBackToNarrowerWidth) {
  for (auto [alignment, expected] :
       std::vector<std::pair<int64_t, int64_t>>{{16, 4}, {8, 2}, {4, 1}}) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* a = makeContigTensor(1);
    fusion->addInput(a);
    fusion->addOutput(neg(a));
    RuntimeInfo info = makeInfo(fusion.get(), {{1024}}, alignment);
    Scheduled s = scheduleWith(fusion.get(), info);
    ASSERT_EQ(s.type, SchedulerType::PointWise);
    EXPECT_EQ(pointwise(s).vectorize, expected) << "alignment " << alignment;
  }
}

TEST_F(PointwiseSchedulerTest, NonDivisibleExtentFallsBack) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(1);
  fusion->addInput(a);
  fusion->addOutput(neg(a));
  RuntimeInfo info = makeInfo(fusion.get(), {{1022}});
  Scheduled s = scheduleWith(fusion.get(), info);
  EXPECT_EQ(pointwise(s).vectorize, 2);
}

TEST_F(PointwiseSchedulerTest, InnerBroadcastInputUsesTwoDimensionalSchedule) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  TensorView* scale = makeContigConcreteTensor({-1, 1}); // per row
  fusion->addInput(x);
  fusion->addInput(scale);
  fusion->addOutput(mul(x, scale));
  RuntimeInfo info = makeInfo(fusion.get(), {{32, 512}, {32, 1}});
  Scheduled s = scheduleWith(fusion.get(), info);
  ASSERT_EQ(s.type, SchedulerType::PointWise);
  EXPECT_EQ(pointwise(s).break_point, 1);
  EXPECT_EQ(pointwise(s).vectorize, 4);
  // The per-row scale is broadcast along the vector: read as scalars.
  EXPECT_EQ(pointwise(s).vectorize_input, (std::vector<bool>{true, false}));
  auto* out = fusion->outputs()[0]->as<TensorView>();
  EXPECT_EQ(out->axis(0)->getParallelType(), ParallelType::BIDy);
  EXPECT_EQ(out->axis(1)->getParallelType(), ParallelType::BIDx);
}

// A bias broadcast along the rows: a 2-D schedule whose indices hold no
// division or remainder by a run-time extent (one per element in the 1-D
// schedule this replaced).
TEST_F(PointwiseSchedulerTest, OuterBroadcastOpUsesTwoDimensionalSchedule) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  RuntimeInfo info = makeInfo(fusion.get(), biasAdd(fusion.get(), 300, 1000));
  Scheduled s = scheduleWith(fusion.get(), info);
  ASSERT_EQ(s.type, SchedulerType::PointWise);
  EXPECT_EQ(pointwise(s).break_point, 1);
  EXPECT_EQ(pointwise(s).vectorize, 4);
  EXPECT_EQ(pointwise(s).threads_per_block, 128);
  EXPECT_EQ(pointwise(s).rows_per_block, 1);
  // A row spans two blocks: they are consecutive (BIDx), rows on BIDy.
  EXPECT_TRUE(pointwise(s).rows_on_grid_y);
  EXPECT_EQ(pointwise(s).vectorize_input, (std::vector<bool>{true, true}));
  const std::string code = generateCudaKernel(fusion.get());
  const std::string kernel = kernelFunction(code);
  EXPECT_THAT(kernel, HasSubstr("vectorizedCopy<float, 4>"));
  EXPECT_THAT(kernel, Not(HasSubstr(" % ")));
  EXPECT_THAT(kernel, Not(HasSubstr(" / ")));
  // Regression: the broadcast copy next to the vectorized output took the
  // output's vectorized loop and read a loop index out of its scope; every
  // generated kernel must compile.
  EXPECT_NO_THROW(compileToCubin(code, "fuser_kernel", 90, true));
}

// A per-channel scale and shift of an NHWC tensor: rows are N*H*W, the
// inner part the 64 channels, 16 vectors of 4 across threadIdx.x and 8 rows
// across threadIdx.y.
TEST_F(PointwiseSchedulerTest, PerChannelScaleOfNhwcIsTwoDimensional) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  RuntimeInfo info = makeInfo(fusion.get(), nhwcScaleShift(fusion.get()));
  Scheduled s = scheduleWith(fusion.get(), info);
  ASSERT_EQ(s.type, SchedulerType::PointWise);
  EXPECT_EQ(pointwise(s).loop_order, (std::vector<int64_t>{0, 2, 3, 1}));
  EXPECT_EQ(pointwise(s).break_point, 3);
  EXPECT_EQ(pointwise(s).vectorize, 4);
  EXPECT_EQ(pointwise(s).threads_per_block, 16);
  EXPECT_EQ(pointwise(s).rows_per_block, 8);
  // Two operations on 16-byte vectors: not worth unrolling.
  EXPECT_EQ(pointwise(s).unroll, 1);
  EXPECT_FALSE(pointwise(s).rows_on_grid_y); // one block per row
  EXPECT_THAT(
      s.params->toString(), HasSubstr("16 threads x 8 rows, rows on BIDx"));
  const std::string kernel = kernelFunction(generateCudaKernel(fusion.get()));
  EXPECT_THAT(kernel, Not(HasSubstr(" % ")));
  EXPECT_THAT(kernel, Not(HasSubstr(" / ")));
}

// Unrolled (a heavier chain on 8 multiprocessors), the 2-D schedule loads
// the channel vectors once per thread, outside the rows' unrolled loop.
TEST_F(PointwiseSchedulerTest, UnrolledRowsShareTheChannelVectorLoads) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  const InputSizes sizes = nhwcScaleShift(fusion.get());
  TensorView* y = fusion->outputs().front()->as<TensorView>();
  fusion->removeOutput(y);
  for (int k = 0; k < 4; ++k) {
    y = tanh(mul(y, y));
  }
  fusion->addOutput(y);
  RuntimeInfo info = makeInfo(fusion.get(), sizes);
  info.setMultiprocessors(8);
  Scheduled s = scheduleWith(fusion.get(), info);
  ASSERT_EQ(pointwise(s).break_point, 3);
  ASSERT_EQ(pointwise(s).unroll, 4);
  const std::string kernel = kernelFunction(generateCudaKernel(fusion.get()));
  ASSERT_NE(kernel.find("#pragma unroll"), std::string::npos);
  EXPECT_LT(kernel.find("&T1["), kernel.find("#pragma unroll"));
}

// The normalization step of a bf16 NHWC batch norm (its second segment):
// x read in vectors of 4 (8 bytes: the float statistics allow no wider), the
// per-channel vectors once per thread. Not unrolled by default (measured
// slower unrolled, doc/pointwise.md §4); with FUSER_ENABLE=narrow_load_unroll
// the rows are unrolled by 4 (32 bytes in flight a thread), the channel
// vectors still load once, before the rows' unrolled loop, and the rows'
// loads all come before the first store.
TEST_F(PointwiseSchedulerTest, NarrowLoadsBesideWiderVectorsUnrollOnRequest) {
  for (const bool enabled : {false, true}) {
    ScopedEnv env(
        "FUSER_ENABLE", enabled
                            ? std::optional<std::string>("narrow_load_unroll")
                            : std::nullopt);
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigTensor(4, DataType::BFloat16);
    x->setAllocationDomain(
        {x->axis(0), x->axis(2), x->axis(3), x->axis(1)}, true);
    TensorView* mean = makeContigTensor(1);
    TensorView* invstd = makeContigTensor(1);
    TensorView* weight = makeContigTensor(1, DataType::BFloat16);
    TensorView* bias = makeContigTensor(1, DataType::BFloat16);
    for (TensorView* tv : {x, mean, invstd, weight, bias}) {
      fusion->addInput(tv);
    }
    const std::vector<bool> channel = {true, false, true, true};
    auto per_channel = [&](TensorView* v) {
      return broadcast(castOp(DataType::Float, v), channel);
    };
    TensorView* y =
        mul(sub(castOp(DataType::Float, x), per_channel(mean)),
            per_channel(invstd));
    y = add(mul(y, per_channel(weight)), per_channel(bias));
    fusion->addOutput(castOp(DataType::BFloat16, y));
    RuntimeInfo info =
        makeInfo(fusion.get(), {{32, 256, 32, 32}, {256}, {256}, {256}, {256}});
    info.setMultiprocessors(132);
    Scheduled s = scheduleWith(fusion.get(), info);
    ASSERT_EQ(s.type, SchedulerType::PointWise);
    EXPECT_EQ(pointwise(s).break_point, 3);
    EXPECT_EQ(pointwise(s).vectorize, 4);
    EXPECT_EQ(pointwise(s).threads_per_block, 64);
    EXPECT_EQ(pointwise(s).rows_per_block, 2);
    EXPECT_EQ(pointwise(s).unroll, enabled ? 4 : 1) << s.params->toString();
    if (enabled) {
      const std::string kernel =
          kernelFunction(generateCudaKernel(fusion.get()));
      const size_t unrolled = kernel.find("#pragma unroll");
      ASSERT_NE(unrolled, std::string::npos);
      for (const char* vector : {"&T1[", "&T2[", "&T3[", "&T4["}) {
        EXPECT_LT(kernel.find(vector), unrolled) << vector << "\n" << kernel;
      }
      EXPECT_TRUE(loadsPrecedeStores(
          kernel, x, fusion->outputs()[0]->as<TensorView>()));
    }
  }
}

// A reduction is not pointwise; the reduction scheduler takes it, and the
// pointwise scheduler says why it declined.
TEST_F(PointwiseSchedulerTest, ReductionIsDeclinedWithReason) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addOutput(sum(a, {1}));
  RuntimeInfo info = makeInfo(fusion.get(), {{4, 8}});
  Scheduled s = scheduleWith(fusion.get(), info);
  EXPECT_EQ(s.type, SchedulerType::Reduction);
  ASSERT_FALSE(s.rejections.empty());
  EXPECT_THAT(s.rejections.back(), HasSubstr("PointWise"));
  EXPECT_THAT(s.rejections.back(), HasSubstr("reduc"));
}

TEST_F(PointwiseSchedulerTest, NoComputationIsNoOp) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addOutput(a);
  RuntimeInfo info = makeInfo(fusion.get(), {{4, 8}});
  EXPECT_EQ(scheduleWith(fusion.get(), info).type, SchedulerType::NoOp);
}

TEST_F(PointwiseSchedulerTest, EmptyOutputIsNoOp) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addOutput(relu(a));
  RuntimeInfo info = makeInfo(fusion.get(), {{0, 8}});
  Scheduled s = scheduleWith(fusion.get(), info);
  EXPECT_EQ(s.type, SchedulerType::NoOp);
  EXPECT_THAT(s.params->toString(), HasSubstr("NoOp"));
}

// Regression: shapes whose rows are not a multiple of the vector width,
// contiguous and NHWC; scheduling and lowering must succeed and only
// vectorize what stays aligned.
TEST_F(PointwiseSchedulerTest, OddShapesScheduleAndLower) {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
           {4, 5}, {8, 257}, {6, 10}, {2, 3, 4, 5}, {2, 3, 5, 7}}) {
    for (bool nhwc : {false, true}) {
      if (nhwc && shape.size() != 4) {
        continue;
      }
      auto fusion = std::make_unique<Fusion>();
      FusionGuard fg(fusion.get());
      TensorView* a = makeContigTensor(static_cast<int64_t>(shape.size()));
      fusion->addInput(a);
      fusion->addOutput(relu(a));
      if (nhwc) {
        const auto& l = a->getLogicalDomain();
        a->setAllocationDomain({l[0], l[2], l[3], l[1]}, true);
      }
      RuntimeInfo info = makeInfo(fusion.get(), {shape});
      Scheduled s = scheduleWith(fusion.get(), info);
      ASSERT_EQ(s.type, SchedulerType::PointWise);
      int64_t numel = 1;
      for (int64_t d : shape) {
        numel *= d;
      }
      EXPECT_EQ(numel % pointwise(s).vectorize, 0) << s.params->toString();
      EXPECT_NO_THROW(generateCudaKernel(fusion.get())) << s.params->toString();
    }
  }
}

// Regression: a mask read by two consumers that feed two vectorized
// outputs. Inlined past its consumers, it needed loops that the first
// output's vector copy had closed.
TEST_F(PointwiseSchedulerTest, SharedMaskFeedingTwoOutputsLowers) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* t0 = makeContigTensor(1);
  TensorView* t1 = makeContigTensor(1);
  fusion->addInput(t0);
  fusion->addInput(t1);
  TensorView* mask = logical_or(
      gt(t0, IrBuilder::create<Val>(0.5)),
      logical_not(lt(t1, IrBuilder::create<Val>(0.0))));
  fusion->addOutput(logical_and(mask, ne(t0, t1)));
  fusion->addOutput(where(mask, t0, IrBuilder::create<Val>(0.0)));
  RuntimeInfo info = makeInfo(fusion.get(), {{1000}, {1000}});
  Scheduled s = scheduleWith(fusion.get(), info);
  ASSERT_EQ(s.type, SchedulerType::PointWise);
  // No producer is inlined deeper than an inlined consumer of it.
  for (TensorView* tv : fusion->allTvs()) {
    for (Expr* use : tv->uses()) {
      auto* consumer = use->output(0)->as<TensorView>();
      if (consumer->getComputeAtPosition() > 0) {
        EXPECT_LE(tv->getComputeAtPosition(), consumer->getComputeAtPosition())
            << tv->toString() << " -> " << consumer->toString();
      }
    }
  }
  std::string code;
  ASSERT_NO_THROW(code = generateCudaKernel(fusion.get()));
  EXPECT_THAT(code, HasSubstr("globalStore<bool, 4>"));
  EXPECT_THAT(code, HasSubstr("vectorizedCopy<float, 4>"));
}

// ---- on the GPU, through FusionExecutorCache

class PointwiseSchedulerGpuTest : public FuserTest {};

TEST_F(PointwiseSchedulerGpuTest, ChoosesPointwiseAndMatchesATen) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  TensorView* bias = makeContigTensor(1);
  fusion->addInput(a);
  fusion->addInput(bias);
  fusion->addOutput(relu(add(a, broadcast(bias, {true, false}))));
  FusionExecutorCache fec(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  at::Tensor t0 = at::randn({300, 1000}, options);
  at::Tensor t1 = at::randn({1000}, options);
  auto outputs = fec.runFusionWithInputs({t0, t1});
  EXPECT_EQ(
      fec.getMostRecentKernelRuntime()->schedulerType(),
      SchedulerType::PointWise);
  EXPECT_THAT(
      fec.getMostRecentKernelRuntime()->kernelCode(),
      HasSubstr("vectorizedCopy<float, 4>"));
  testValidate(fec.fusion(), outputs, {t0, t1}, __LINE__, __FILE__);
}

TEST_F(PointwiseSchedulerGpuTest, MisalignedInputRunsWithFallbackWidth) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(1);
  fusion->addInput(a);
  fusion->addOutput(mul(a, IrBuilder::create<Val>(3.0)));
  FusionExecutorCache fec(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  at::Tensor base = at::randn({4097}, options);
  at::Tensor aligned = base.narrow(0, 0, 4096);
  at::Tensor misaligned = base.narrow(0, 1, 4096); // 4-byte aligned only
  auto out_aligned = fec.runFusionWithInputs({aligned});
  const auto& params_aligned = dynamic_cast<const PointwiseParams&>(
      *fec.getMostRecentKernelRuntime()->segments()[0].params);
  EXPECT_EQ(params_aligned.vectorize, 4);
  auto out_misaligned = fec.runFusionWithInputs({misaligned});
  const auto& params_misaligned = dynamic_cast<const PointwiseParams&>(
      *fec.getMostRecentKernelRuntime()->segments()[0].params);
  EXPECT_EQ(params_misaligned.vectorize, 1);
  testValidate(fec.fusion(), out_aligned, {aligned}, __LINE__, __FILE__);
  testValidate(fec.fusion(), out_misaligned, {misaligned}, __LINE__, __FILE__);
}

TEST_F(PointwiseSchedulerGpuTest, NhwcReluKeepsChannelsLast) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(4);
  fusion->addInput(in);
  fusion->addOutput(relu(in));
  const auto& l = in->getLogicalDomain();
  in->setAllocationDomain({l[0], l[2], l[3], l[1]}, true);
  FusionExecutorCache fec(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  at::Tensor t = at::randn({4, 8, 16, 16}, options)
                     .contiguous(at::MemoryFormat::ChannelsLast);
  auto outputs = fec.runFusionWithInputs({t});
  EXPECT_TRUE(outputs[0].is_contiguous(at::MemoryFormat::ChannelsLast));
  testValidate(fec.fusion(), outputs, {t}, __LINE__, __FILE__);
}

// A fusion no scheduler takes (a normalization, until its scheduler
// exists) runs op by op through ATen.
// A normalization is not pointwise: the inner persistent scheduler takes
// it (tests/cpp/test_normalization.cpp).
TEST_F(PointwiseSchedulerGpuTest, NormalizationIsNotPointwise) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addOutput(sub(a, broadcast(sum(a, {1}), {false, true})));
  FusionExecutorCache fec(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  at::Tensor t = at::randn({16, 33}, options);
  auto outputs = fec.runFusionWithInputs({t});
  EXPECT_EQ(
      fec.getMostRecentKernelRuntime()->schedulerType(),
      SchedulerType::InnerPersistent);
  testValidate(fec.fusion(), outputs, {t}, __LINE__, __FILE__);
}

TEST_F(PointwiseSchedulerGpuTest, EmptyAndNoComputationRunAsNoOp) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addOutput(relu(a));
  FusionExecutorCache fec(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  auto outputs = fec.runFusionWithInputs({at::randn({0, 5}, options)});
  EXPECT_EQ(
      fec.getMostRecentKernelRuntime()->schedulerType(), SchedulerType::NoOp);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].numel(), 0);
  EXPECT_EQ(outputs[0].sizes(), (at::IntArrayRef{0, 5}));
}

} // namespace fuser
