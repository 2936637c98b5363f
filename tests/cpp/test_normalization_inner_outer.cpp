// The inner-outer persistent scheduler
// (csrc/scheduler/normalization_inner_outer.h, doc/normalization.md §9):
// which fusions it takes, its kernels compiled with NVRTC and run on the
// kernel-IR interpreter on the CPU, and on the GPU layer norm and RMS norm
// backward with their weight and bias gradients against ATen, as one
// kernel.
#include <ops/normalization.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/nvrtc_compile.h>
#include <scheduler/normalization_inner_outer.h>
#include <tests/cpp/reduction_harness.h>
#include <transform/redundant_expands.h>

#include <gmock/gmock.h>

namespace fuser {

using ::testing::HasSubstr;

class InnerOuterTest : public FuserIrTest {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }
};
class InnerOuterGpuTest : public FuserTest {
 protected:
  void SetUp() override {
    FuserTest::SetUp();
    at::manual_seed(0);
  }
};

namespace {

struct GradCase {
  std::string name;
  std::unique_ptr<Fusion> fusion;
  std::vector<at::Tensor> inputs; // on the CPU
  // Run with FUSER_ENABLE=shared_buffers (doc/normalization.md §11).
  bool shared_buffers = false;
};

at::ScalarType atenOf(DataType dtype) {
  return dtype == DataType::BFloat16 ? at::kBFloat16 : at::kFloat;
}

// The input tensor of `t`'s type (strides left symbolic when `symbolic`).
TensorView* inputLike(const at::Tensor& t, bool symbolic) {
  const DataType dtype =
      t.scalar_type() == at::kBFloat16 ? DataType::BFloat16 : DataType::Float;
  return symbolic ? makeSymbolicTensor(t.dim(), dtype)
                  : makeContigTensor(t.dim(), dtype);
}

// Layer norm backward over the last axis of [rows, hidden]: inputs dy, x
// (both of `dtype`, x laid out as `x_view` when given), mean and invstd
// (float), weight and bias (`dtype`); outputs the input, weight and bias
// gradients. `split_x` allocates x as [rows/4, 4, hidden].
GradCase layerNormBackward(
    std::string name, int64_t rows, int64_t hidden, DataType dtype,
    at::Tensor x_view = {}, bool split_x = false, bool rms = false,
    at::Device device = at::kCPU) {
  GradCase c;
  c.name = std::move(name);
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  const auto on = at::TensorOptions().device(device);
  at::Tensor x = x_view.defined()
                     ? x_view
                     : at::randn({rows, hidden}, on).to(atenOf(dtype));
  at::Tensor xf = x.to(at::kFloat);
  at::Tensor mean = xf.mean({1});
  at::Tensor invstd = at::rsqrt(xf.var({1}, false) + 1e-5);
  at::Tensor dy = at::randn({rows, hidden}, on).to(atenOf(dtype));
  at::Tensor w = at::randn({hidden}, on).to(atenOf(dtype));
  c.inputs = rms ? std::vector<at::Tensor>{dy, x, invstd, w}
                 : std::vector<at::Tensor>{dy, x, mean, invstd, w, w};
  std::vector<TensorView*> tvs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    tvs.push_back(inputLike(c.inputs[i], i == 1 && x_view.defined()));
    c.fusion->addInput(tvs.back());
  }
  if (split_x) {
    auto [outer, inner] = IterDomain::split(
        tvs[1]->axis(0), IrBuilder::create<Val>(int64_t(4), DataType::Index),
        true);
    tvs[1]->setAllocationDomain({outer, inner, tvs[1]->axis(1)}, true);
  }
  BackwardNormResult r =
      rms ? rms_norm_backward(tvs[0], tvs[1], {1}, tvs[2], tvs[3])
          : layer_norm_backward(
                tvs[0], tvs[1], {1}, tvs[2], tvs[3], tvs[4], tvs[5]);
  c.fusion->addOutput(r.grad_input);
  c.fusion->addOutput(r.grad_weight);
  if (!rms) {
    c.fusion->addOutput(r.grad_bias);
  }
  return c;
}

std::vector<GradCase> everyCase() {
  const DataType f32 = DataType::Float;
  const DataType bf16 = DataType::BFloat16;
  std::vector<GradCase> cases;
  cases.push_back(
      layerNormBackward("layer_norm f32 [256, 1024]", 256, 1024, f32));
  cases.push_back(
      layerNormBackward("layer_norm bf16 [512, 4096]", 512, 4096, bf16));
  cases.push_back(layerNormBackward(
      "rms_norm bf16 [300, 5120]", 300, 5120, bf16, {}, false, /*rms=*/true));
  // Odd sizes: a padded warp and a last block of fewer rows.
  cases.push_back(
      layerNormBackward("layer_norm f32 [77, 1000]", 77, 1000, f32));
  cases.push_back(layerNormBackward("layer_norm f32 [1, 2048]", 1, 2048, f32));
  // Rows beyond the registers: dy and x held in shared memory
  // (doc/normalization.md §11).
  cases.push_back(layerNormBackward(
      "layer_norm bf16 [64, 16384]", 64, 16384, DataType::BFloat16));
  cases.back().shared_buffers = true;
  // Shared buffers for more rows in flight (doc/normalization.md §11).
  cases.push_back(layerNormBackward(
      "layer_norm bf16 [2048, 4096], dy and x in shared memory", 2048, 4096,
      DataType::BFloat16));
  cases.back().shared_buffers = true;
  // Many rows per block.
  cases.push_back(
      layerNormBackward("layer_norm bf16 [20000, 768]", 20000, 768, bf16));
  // x with gaps between its rows; x allocated [rows/4, 4, hidden].
  cases.push_back(layerNormBackward(
      "layer_norm f32, x a view [64, 1024] of [64, 1100]", 64, 1024, f32,
      at::randn({64, 1100}).slice(1, 0, 1024)));
  cases.push_back(layerNormBackward(
      "layer_norm f32, x split allocation [128, 512]", 128, 512, f32, {},
      /*split_x=*/true));
  return cases;
}

constexpr size_t kGradCases = 10; // one GPU test each (below)

// The scheduler chosen for `c`, its parameters and kernel (compiled with
// NVRTC for sm_90).
std::string scheduleAndCompileCase(
    const GradCase& c, SchedulerType* type, std::string* params) {
  Fusion copy(*c.fusion);
  std::vector<c10::IValue> inputs(c.inputs.begin(), c.inputs.end());
  RuntimeInfo info = makeRuntimeInfo(&copy, inputs, /*require_cuda=*/false);
  SchedulerChoice choice = chooseScheduler(&copy, info);
  *type = choice.scheduler->type();
  for (const std::string& r : choice.rejections) {
    *params += r + "\n";
  }
  if (*type != SchedulerType::InnerOuterPersistent) {
    return "";
  }
  auto heuristics = choice.scheduler->computeHeuristics(&copy, info);
  *params = heuristics->toString();
  choice.scheduler->schedule(&copy, *heuristics);
  std::string code =
      generateCudaKernel(&copy, DataType::Int32, heuristics->kernelFlags());
  EXPECT_NO_THROW(compileToCubin(code, "fuser_kernel", 90, true)) << *params;
  return code;
}

// The inner-outer heuristics for `c` on an H200 (132 SMs), computed on
// `copy`, a copy of its fusion.
std::unique_ptr<HeuristicParams> innerOuterHeuristics(
    const GradCase& c, Fusion* copy) {
  std::vector<c10::IValue> inputs(c.inputs.begin(), c.inputs.end());
  RuntimeInfo info = makeRuntimeInfo(copy, inputs, /*require_cuda=*/false);
  info.setMultiprocessors(132);
  return schedulerFor(SchedulerType::InnerOuterPersistent)
      .computeHeuristics(copy, info);
}

} // namespace

TEST_F(InnerOuterTest, EveryCaseIsOneInnerOuterKernel) {
  const std::vector<GradCase> cases = everyCase();
  ASSERT_EQ(cases.size(), kGradCases)
      << "update kGradCases, the count of GPU tests";
  for (const GradCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::optional<ScopedEnv> env;
    if (c.shared_buffers) {
      env.emplace("FUSER_ENABLE", "shared_buffers");
    }
    SchedulerType type = SchedulerType::ExprEval;
    std::string params;
    std::string code;
    EXPECT_NO_THROW(code = scheduleAndCompileCase(c, &type, &params));
    EXPECT_EQ(type, SchedulerType::InnerOuterPersistent) << params;
    EXPECT_THAT(params, HasSubstr("blocks looping over the rows"));
    // The rows' sums reach every thread of the row; the columns' partials
    // are combined across the blocks, all resident at once, which share
    // out the final step.
    EXPECT_THAT(code, HasSubstr("blockAllReduce"));
    EXPECT_THAT(code, HasSubstr("gridReduceGroupResident<"));
  }
}

// A bf16 layer norm backward over 16384 columns: dy, x and two float
// partials need 48 registers per thread at 1024 threads (the budget is 32).
// With dy and x in shared memory the partials take 32, but the kernel's
// cap (64 others besides) exceeds the 64 registers a thread of 1024 may
// have: at batch 4 (512 threads) the partials take 64, the cap is 128, and
// dy and x 64 KiB of shared memory per block.
// Off by default: the rows are segmented, and the reason says how to turn
// shared buffers on.
TEST_F(InnerOuterTest, RowsBeyondTheRegistersHoldTheirInputsInSharedMemory) {
  GradCase c = layerNormBackward(
      "layer_norm bf16 [64, 16384]", 64, 16384, DataType::BFloat16);
  SchedulerType type = SchedulerType::ExprEval;
  std::string params;
  scheduleAndCompileCase(c, &type, &params);
  EXPECT_NE(type, SchedulerType::InnerOuterPersistent) << params;
  EXPECT_THAT(params, HasSubstr("FUSER_ENABLE=shared_buffers turns them on"));

  ScopedEnv enable("FUSER_ENABLE", "shared_buffers");
  params.clear();
  const std::string code = scheduleAndCompileCase(c, &type, &params);
  ASSERT_EQ(type, SchedulerType::InnerOuterPersistent) << params;
  EXPECT_THAT(
      params,
      HasSubstr("batch 4, threads 512 (launched in multiples of 32) x 1"));
  EXPECT_THAT(
      params,
      HasSubstr("in 64 registers per thread, the buffers of inputs [0 1] in "
                "shared memory (65536 bytes per block); the kernel capped at "
                "128 registers per thread"));
  EXPECT_THAT(code, HasSubstr("fuser_smem + 32768"));
}

TEST_F(InnerOuterTest, ThePartialsCountAsBuffersAndSetTheGrid) {
  GradCase c =
      layerNormBackward("layer_norm bf16", 4096, 4096, DataType::BFloat16);
  Fusion copy(*c.fusion);
  auto params = innerOuterHeuristics(c, &copy);
  const auto& p = dynamic_cast<const InnerPersistentParams&>(*params);
  EXPECT_THAT(p.toString(), HasSubstr("partial"));
  // Two float partials (weight, bias) and the held bf16 rows: at least
  // 2 * 4 bytes per element of the thread's columns.
  EXPECT_GE(p.persistent_registers, 2 * p.batch * p.vectorize);
  // A whole number of blocks per SM, no more than the rows need.
  EXPECT_EQ(p.grid_blocks % 132, 0) << p.toString();
  EXPECT_LE(p.grid_blocks, 4096 / p.threads_y);
}

// With shared buffers on, every placement at every batch competes for the
// most threads resident per SM (the larger batch on a tie): a bf16 layer
// norm backward over 4096 columns keeps dy and x in shared memory and the
// partials in registers, batch 4 of 8 on 128 threads per row, two rows
// per block, two blocks per SM: 4 rows in flight per SM, twice the
// registers-only schedule's (batch 2 on 256 threads, one row per block),
// and its kernel fits its cap of 128 without spilling
// (doc/normalization.md §11).
TEST_F(InnerOuterTest, SharedBuffersLeaveTheRegistersToThePartials) {
  GradCase c =
      layerNormBackward("layer_norm bf16", 32768, 4096, DataType::BFloat16);
  for (const bool shared : {false, true}) {
    std::optional<ScopedEnv> env;
    if (shared) {
      env.emplace("FUSER_ENABLE", "shared_buffers");
    }
    Fusion copy(*c.fusion);
    auto& scheduler = schedulerFor(SchedulerType::InnerOuterPersistent);
    auto params = innerOuterHeuristics(c, &copy);
    const auto& p = dynamic_cast<const InnerPersistentParams&>(*params);
    EXPECT_EQ(p.batch, shared ? 4 : 2) << p.toString();
    EXPECT_EQ(p.threads_x, shared ? 128 : 256) << p.toString();
    const std::vector<int64_t> shared_inputs =
        shared ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{};
    EXPECT_EQ(p.shared_inputs, shared_inputs) << p.toString();
    EXPECT_EQ(p.registers, shared ? 128 : 112) << p.toString();
    EXPECT_EQ(p.threads_y, shared ? 2 : 1) << p.toString();
    EXPECT_EQ(p.grid_blocks, 132 * 2) << p.toString();
    if (!shared) {
      continue;
    }
    scheduler.schedule(&copy, *params);
    const KernelInspection inspection = inspectForSm90a(
        generateCudaKernel(&copy, DataType::Int32, params->kernelFlags()));
    FUSER_SKIP_WITHOUT_PTXAS_REPORT(inspection);
    EXPECT_TRUE(keepsEverythingInRegisters(inspection)) << p.toString();
  }
}

// The layer norm backward's kernel fits its register cap without
// spilling. It spilled 792 bytes per thread when each element of the copy
// of the row loop for the last row group tested the row (221 registers
// unbounded; device_lower/pass/unswitch.cpp now tests the row once per
// nest there) and when x was loaded after the first row sum's barrier.
TEST_F(InnerOuterTest, LayerNormBackwardKernelDoesNotSpill) {
  for (const bool rms : {false, true}) {
    GradCase c = layerNormBackward(
        rms ? "rms_norm bf16" : "layer_norm bf16", 32768, 4096,
        DataType::BFloat16, {}, false, rms);
    Fusion copy(*c.fusion);
    auto& scheduler = schedulerFor(SchedulerType::InnerOuterPersistent);
    auto params = innerOuterHeuristics(c, &copy);
    scheduler.schedule(&copy, *params);
    const KernelInspection inspection = inspectForSm90a(
        generateCudaKernel(&copy, DataType::Int32, params->kernelFlags()));
    FUSER_SKIP_WITHOUT_PTXAS_REPORT(inspection);
    EXPECT_TRUE(keepsEverythingInRegisters(inspection))
        << c.name << ": " << params->toString();
  }
}

namespace {

// The RMS norm backward with its weight gradient as
// benchmarks/bench_normalization.py writes it through the Python frontend:
// dy, x and w in bf16 cast to float, invstd [rows] in float, broadcast_in_dim
// to the constant shape [rows, 4096], dw = sum(dy * xhat) over the rows;
// then its expands bypassed, as the runtime does.
std::unique_ptr<Fusion> benchRmsNormBackward(int64_t rows) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  const DataType bf16 = DataType::BFloat16;
  TensorView* dy_in = makeContigTensor(2, bf16);
  TensorView* x_in = makeContigTensor(2, bf16);
  TensorView* w_in = makeContigTensor(1, bf16);
  TensorView* invstd_in = makeContigTensor(1);
  for (TensorView* tv : {dy_in, x_in, w_in, invstd_in}) {
    fusion->addInput(tv);
  }
  auto shape = [&] {
    return std::vector<Val*>{
        IrBuilder::indexConst(rows), IrBuilder::indexConst(4096)};
  };
  auto along_rows = [&](TensorView* stat) {
    return expand(broadcast(stat, {false, true}), shape());
  };
  TensorView* dy = castOp(DataType::Float, dy_in);
  TensorView* x = castOp(DataType::Float, x_in);
  TensorView* w = castOp(DataType::Float, w_in);
  TensorView* invstd = along_rows(invstd_in);
  TensorView* xhat = mul(x, invstd);
  TensorView* g = mul(dy, expand(broadcast(w, {true, false}), shape()));
  TensorView* mean_gx =
      along_rows(div(sum(mul(g, xhat), {1}), IrBuilder::create<Val>(4096.0)));
  TensorView* dx = mul(invstd, sub(g, mul(xhat, mean_gx)));
  fusion->addOutput(castOp(bf16, dx));
  fusion->addOutput(castOp(bf16, sum(mul(dy, xhat), {0})));
  bypassRedundantExpands(fusion.get());
  return fusion;
}

} // namespace

// The benchmark's RMS norm weight gradient fits its register cap. It
// spilled 17.7 million local-memory requests on the GPU (0.42 of nvFuser's
// speed on an H100, the results of commit 2a68639): its cap left no
// slack, and the heuristics now take the batch whose cap does.
TEST_F(InnerOuterTest, BenchmarkRmsNormBackwardDoesNotSpill) {
  const int64_t rows = 32768;
  GradCase c;
  c.name = "bench rms_norm bf16 [32768, 4096]";
  c.fusion = benchRmsNormBackward(rows);
  c.inputs = {
      at::randn({rows, 4096}).to(at::kBFloat16),
      at::randn({rows, 4096}).to(at::kBFloat16),
      at::randn({4096}).to(at::kBFloat16), at::rand({rows})};
  Fusion copy(*c.fusion);
  auto params = innerOuterHeuristics(c, &copy);
  schedulerFor(SchedulerType::InnerOuterPersistent).schedule(&copy, *params);
  const KernelInspection inspection = inspectForSm90a(
      generateCudaKernel(&copy, DataType::Int32, params->kernelFlags()));
  FUSER_SKIP_WITHOUT_PTXAS_REPORT(inspection);
  EXPECT_TRUE(keepsEverythingInRegisters(inspection))
      << c.name << ": " << params->toString() << "\n"
      << inspection.ptxas_log;
}

// Register buffers start at zero (codegen/memory.cpp): an element that a
// predicated write skips was an undefined register, which ptxas kept live
// from the kernel's entry through the row loop. The layer norm backward
// over 16384 columns with dy and x in shared memory (512 threads, at most
// 128 registers each) spilled 972 bytes per thread that way (208
// registers unbounded), and fits in 120 registers with the
// initializations (doc/design.md §5).
TEST_F(InnerOuterTest, NoUndefinedRegisterStaysLiveThroughTheRowLoop) {
  ScopedEnv enable("FUSER_ENABLE", "shared_buffers");
  GradCase c = layerNormBackward(
      "layer_norm bf16 [64, 16384]", 64, 16384, DataType::BFloat16);
  Fusion copy(*c.fusion);
  auto& scheduler = schedulerFor(SchedulerType::InnerOuterPersistent);
  auto params = innerOuterHeuristics(c, &copy);
  scheduler.schedule(&copy, *params);
  const std::string code =
      generateCudaKernel(&copy, DataType::Int32, params->kernelFlags());
  EXPECT_THAT(code, HasSubstr("] = {};"));
  const KernelInspection inspection = inspectForSm90a(code);
  FUSER_SKIP_WITHOUT_PTXAS_REPORT(inspection);
  EXPECT_TRUE(keepsEverythingInRegisters(inspection)) << params->toString();
}

// A column reduction whose result the rows use again needs it in every
// block: the scheduler declines, and the fusion still runs (segmented).
TEST_F(InnerOuterTest, ColumnResultsUsedOnTheRowsAreDeclined) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  TensorView* centered = sub(x, broadcast(sum(x, {1}), {false, true}));
  TensorView* column = sum(x, {0});
  fusion.addOutput(add(centered, broadcast(column, {true, false})));
  std::vector<c10::IValue> inputs = {at::randn({64, 256})};
  RuntimeInfo info = makeRuntimeInfo(&fusion, inputs, /*require_cuda=*/false);
  std::string reason;
  auto& scheduler = schedulerFor(SchedulerType::InnerOuterPersistent);
  ASSERT_TRUE(scheduler.canScheduleCompileTime(&fusion, &reason)) << reason;
  EXPECT_FALSE(scheduler.canScheduleRunTime(&fusion, info, &reason));
  EXPECT_THAT(reason, HasSubstr("uses the column reduction"));
}

TEST(InnerOuterDefaultTest, OnUnlessDisabled) {
  GradCase c = layerNormBackward("layer_norm", 64, 1024, DataType::Float);
  std::string reason;
  {
    ScopedEnv on("FUSER_DISABLE", std::nullopt);
    EXPECT_TRUE(schedulerFor(SchedulerType::InnerOuterPersistent)
                    .canScheduleCompileTime(c.fusion.get(), &reason))
        << reason;
  }
  ScopedEnv off("FUSER_DISABLE", "inner_outer_persistent");
  EXPECT_FALSE(schedulerFor(SchedulerType::InnerOuterPersistent)
                   .canScheduleCompileTime(c.fusion.get(), &reason));
  EXPECT_THAT(reason, HasSubstr("FUSER_DISABLE=inner_outer_persistent"));
}

// Reductions along both axes with nothing held across them: separate
// reduction kernels (the segmenter's) serve them.
TEST_F(InnerOuterTest, ReductionsWithNothingHeldAreDeclined) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  fusion.addOutput(sum(x, {0}));
  fusion.addOutput(sum(x, {1}));
  std::string reason;
  EXPECT_FALSE(schedulerFor(SchedulerType::InnerOuterPersistent)
                   .canScheduleCompileTime(&fusion, &reason));
  EXPECT_THAT(reason, HasSubstr("nothing to hold"));
}

// The index math, the loop over each block's rows, and the partials
// combined across blocks, on the interpreter (two SMs: several rows per
// block): every output element written once with its value.
TEST_F(InnerOuterTest, KernelsReduceRowsAndColumnsOnTheInterpreter) {
  auto rows_and_columns = [](Fusion* f, TensorView* in) {
    TensorView* centered = sub(in, broadcast(sum(in, {1}), {false, true}));
    f->addOutput(centered);
    f->addOutput(sum(mul(centered, in), {0}));
    f->addOutput(sum(in, {0}));
  };
  // One SM: 3 blocks of 8 rows looping over 5 row groups.
  const std::vector<InterpretedCase> cases = {
      {"rows and columns [40, 128]", {40, 128}, rows_and_columns, {}, false, 1},
  };
  for (const InterpretedCase& ic : cases) {
    std::string params;
    const std::string failure =
        interpret(ic, &params, SchedulerType::InnerOuterPersistent);
    EXPECT_EQ(failure, "") << ic.name << "\n  " << params;
    EXPECT_THAT(params, HasSubstr("x 8, 3 blocks looping over the rows"))
        << ic.name;
  }
}

// Each case runs twice (compile, then a cache hit), as one kernel.
class InnerOuterCaseGpuTest : public InnerOuterGpuTest,
                              public ::testing::WithParamInterface<size_t> {};

TEST_P(InnerOuterCaseGpuTest, MatchesATen) {
  std::vector<GradCase> cases = everyCase();
  const GradCase& c = cases.at(GetParam());
  SCOPED_TRACE(c.name);
  std::optional<ScopedEnv> env;
  if (c.shared_buffers) {
    env.emplace("FUSER_ENABLE", "shared_buffers");
  }
  std::vector<c10::IValue> inputs;
  for (const at::Tensor& t : c.inputs) {
    inputs.push_back(onDevice(t));
  }
  FusionExecutorCache fec(std::make_unique<Fusion>(*c.fusion));
  for (int run = 0; run < 2; ++run) {
    std::vector<at::Tensor> outputs = fec.runFusionWithInputs(inputs);
    const auto* runtime = fec.getMostRecentKernelRuntime();
    EXPECT_EQ(runtime->schedulerType(), SchedulerType::InnerOuterPersistent);
    EXPECT_FALSE(runtime->isSegmented());
    testValidate(
        fec.fusion(), outputs, inputs, __LINE__, __FILE__,
        c.name + ", run " + std::to_string(run));
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryCase, InnerOuterCaseGpuTest, ::testing::Range(size_t{0}, kGradCases));

// 2^31 + 4096 elements: the kernel indexes in 64 bits. The ATen reference
// computes in float: about 73 GiB at its peak (it ran out of memory on an
// 80 GB H100 beside the other test processes).
TEST_F(InnerOuterGpuTest, InputAbove2To31Elements) {
  FUSER_SKIP_UNLESS_DEVICE_MEMORY_GIB(100);
  GradCase c = layerNormBackward(
      "rms_norm of 2^31 + 4096 elements", (int64_t{1} << 19) + 1, 4096,
      DataType::BFloat16, {}, false, /*rms=*/true, at::kCUDA);
  std::vector<c10::IValue> inputs(c.inputs.begin(), c.inputs.end());
  FusionExecutorCache fec(std::make_unique<Fusion>(*c.fusion));
  std::vector<at::Tensor> outputs = fec.runFusionWithInputs(inputs);
  EXPECT_EQ(
      fec.getMostRecentKernelRuntime()->schedulerType(),
      SchedulerType::InnerOuterPersistent);
  testValidate(fec.fusion(), outputs, inputs, __LINE__, __FILE__);
}

// The benchmark's RMS norm backward (above) against ATen, one kernel.
TEST_F(InnerOuterGpuTest, BenchmarkRmsNormBackwardMatchesATen) {
  const int64_t rows = 2048;
  const auto on = at::TensorOptions().device(at::kCUDA);
  std::vector<c10::IValue> inputs = {
      at::randn({rows, 4096}, on).to(at::kBFloat16),
      at::randn({rows, 4096}, on).to(at::kBFloat16),
      at::randn({4096}, on).to(at::kBFloat16), at::rand({rows}, on) + 0.5};
  FusionExecutorCache fec(benchRmsNormBackward(rows));
  std::vector<at::Tensor> outputs = fec.runFusionWithInputs(inputs);
  EXPECT_EQ(
      fec.getMostRecentKernelRuntime()->schedulerType(),
      SchedulerType::InnerOuterPersistent);
  testValidate(fec.fusion(), outputs, inputs, __LINE__, __FILE__);
}

} // namespace fuser
