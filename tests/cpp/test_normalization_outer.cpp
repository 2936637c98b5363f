// The outer persistent scheduler (csrc/scheduler/normalization_outer.h,
// doc/normalization.md §10): which fusions it takes and declines, its
// kernels compiled with NVRTC and run on the kernel-IR interpreter on the
// CPU (several blocks, whose totals every thread receives), and on the GPU
// a batch norm in training, forward and backward, against ATen, as one
// kernel.
#include <ops/normalization.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/nvrtc_compile.h>
#include <scheduler/normalization_outer.h>
#include <tests/cpp/reduction_harness.h>

#include <gmock/gmock.h>

namespace fuser {

using ::testing::HasSubstr;
using ::testing::Not;

// The scheduler is off by default (base/options.h): each test turns it on.
class OuterPersistentTest : public FuserIrTest {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }
  ScopedEnv enable_{"FUSER_ENABLE", "outer_persistent"};
};
class OuterPersistentGpuTest : public FuserTest {
 protected:
  void SetUp() override {
    FuserTest::SetUp();
    at::manual_seed(0);
  }
  ScopedEnv enable_{"FUSER_ENABLE", "outer_persistent"};
};

namespace {

// A batch norm in training over [N, H, W, C] (channels last), as a fusion
// and its inputs (on `device`). Forward: from x, the weight, the bias and
// the running statistics, the normalized input, the statistics and the
// updated running statistics. Backward: from dy, x, the weight and the
// forward's saved mean and invstd, the input, weight and bias gradients.
struct BatchNormCase {
  std::unique_ptr<Fusion> fusion;
  std::vector<at::Tensor> inputs;
};

BatchNormCase batchNormNhwc(
    std::vector<int64_t> sizes, at::ScalarType type,
    at::Device device = at::kCPU, bool backward = false) {
  BatchNormCase c;
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  const DataType dtype =
      type == at::kBFloat16 ? DataType::BFloat16 : DataType::Float;
  const int64_t channels = sizes.back();
  const auto on = at::TensorOptions().device(device);
  // Forward: x, w, b, running mean and var; backward: dy, x, w, saved mean
  // and invstd.
  const std::vector<int64_t> second =
      backward ? sizes : std::vector<int64_t>{channels};
  c.inputs = {
      at::randn(sizes, on).to(type), at::randn(second, on).to(type),
      at::randn({channels}, on).to(type), at::randn({channels}, on),
      at::rand({channels}, on) + 0.5};
  std::vector<TensorView*> in = {
      makeContigTensor(4, dtype), makeContigTensor(backward ? 4 : 1, dtype),
      makeContigTensor(1, dtype), makeContigTensor(1), makeContigTensor(1)};
  for (TensorView* tv : in) {
    c.fusion->addInput(tv);
  }
  Val* eps = IrBuilder::create<Val>(1e-5);
  if (backward) {
    BackwardNormResult g = batch_norm_backward(
        in[0], in[1], in[2], nullptr, nullptr, in[3], in[4],
        /*training=*/true, eps, /*channels_last=*/true);
    for (TensorView* tv : {g.grad_input, g.grad_weight, g.grad_bias}) {
      c.fusion->addOutput(tv);
    }
    return c;
  }
  BatchNormResult r = batch_norm(
      in[0], in[1], in[2], in[3], in[4], /*training=*/true,
      IrBuilder::create<Val>(0.1), eps, /*channels_last=*/true);
  for (TensorView* tv :
       {r.output, r.mean, r.invstd, r.running_mean, r.running_var}) {
    c.fusion->addOutput(tv);
  }
  return c;
}

struct Choice {
  SchedulerType type = SchedulerType::ExprEval;
  std::string rejections;
  std::string params;
  std::string code;
};

// The scheduler chosen for `fusion` and `inputs` on a device of `sms`
// multiprocessors; its kernel (compiled with NVRTC for sm_90a) when it is
// the outer persistent one.
Choice choose(
    const Fusion& fusion, const std::vector<at::Tensor>& tensors,
    int64_t sms = 132) {
  Fusion copy(fusion);
  std::vector<c10::IValue> inputs(tensors.begin(), tensors.end());
  RuntimeInfo info = makeRuntimeInfo(&copy, inputs, /*require_cuda=*/false);
  info.setMultiprocessors(sms);
  SchedulerChoice choice = chooseScheduler(&copy, info);
  Choice c;
  c.type = choice.scheduler->type();
  for (const std::string& r : choice.rejections) {
    c.rejections += r + "\n";
  }
  if (c.type != SchedulerType::OuterPersistent) {
    return c;
  }
  auto params = choice.scheduler->computeHeuristics(&copy, info);
  c.params = params->toString();
  choice.scheduler->schedule(&copy, *params);
  c.code = generateCudaKernel(&copy, DataType::Int32, params->kernelFlags());
  EXPECT_NO_THROW(compileToCubin(c.code, "fuser_kernel", 90, true)) << c.params;
  return c;
}

} // namespace

TEST(OuterPersistentDefaultTest, OffUnlessEnabled) {
  ScopedEnv off("FUSER_ENABLE", std::nullopt);
  BatchNormCase c = batchNormNhwc({4, 3, 3, 64}, at::kFloat);
  std::string reason;
  EXPECT_FALSE(schedulerFor(SchedulerType::OuterPersistent)
                   .canScheduleCompileTime(c.fusion.get(), &reason));
  EXPECT_THAT(reason, HasSubstr("FUSER_ENABLE=outer_persistent"));
}

// A batch norm whose input fits the resident blocks' registers is one
// kernel: statistics across every block (each thread receives them), its
// rows held in registers, no spills.
TEST_F(OuterPersistentTest, BatchNormIsOneKernel) {
  for (at::ScalarType type : {at::kFloat, at::kBFloat16}) {
    SCOPED_TRACE(type == at::kFloat ? "float" : "bfloat16");
    BatchNormCase c = batchNormNhwc({16, 7, 7, 256}, type);
    Choice choice = choose(*c.fusion, c.inputs);
    ASSERT_EQ(choice.type, SchedulerType::OuterPersistent) << choice.rejections;
    EXPECT_THAT(choice.params, HasSubstr("(all resident)"));
    // Two sums (the mean, then the squared deviations from it).
    const std::string kernel =
        choice.code.substr(choice.code.find("__global__"));
    size_t calls = 0;
    for (size_t at = kernel.find("gridAllReduceResident<");
         at != std::string::npos;
         at = kernel.find("gridAllReduceResident<", at + 1)) {
      ++calls;
    }
    EXPECT_EQ(calls, 2u) << kernel;
    // Every block holds the totals: no last-block flag.
    EXPECT_THAT(kernel, Not(HasSubstr("last_block"))) << kernel;
    const KernelInspection inspection = inspectForSm90a(choice.code);
    FUSER_SKIP_WITHOUT_PTXAS_REPORT(inspection);
    EXPECT_TRUE(keepsEverythingInRegisters(inspection)) << choice.params;
  }
}

// Batch norm backward in training: the sums of dy and of dy * (x - mean)
// over N, H, W, then the input gradient from the held dy and x, one
// kernel (segmented, three).
TEST_F(OuterPersistentTest, BatchNormBackwardIsOneKernel) {
  BatchNormCase c = batchNormNhwc(
      {16, 7, 7, 128}, at::kBFloat16, at::kCPU, /*backward=*/true);
  Choice choice = choose(*c.fusion, c.inputs);
  ASSERT_EQ(choice.type, SchedulerType::OuterPersistent) << choice.rejections;
  const std::string kernel = choice.code.substr(choice.code.find("__global__"));
  EXPECT_THAT(kernel, HasSubstr("gridAllReduceResident<")) << choice.params;
  const KernelInspection inspection = inspectForSm90a(choice.code);
  FUSER_SKIP_WITHOUT_PTXAS_REPORT(inspection);
  EXPECT_TRUE(keepsEverythingInRegisters(inspection)) << choice.params;
}

TEST_F(OuterPersistentTest, TheGridFitsTheDevice) {
  BatchNormCase c = batchNormNhwc({32, 14, 14, 64}, at::kBFloat16);
  Fusion copy(*c.fusion);
  std::vector<c10::IValue> inputs(c.inputs.begin(), c.inputs.end());
  RuntimeInfo info = makeRuntimeInfo(&copy, inputs, /*require_cuda=*/false);
  info.setMultiprocessors(132);
  std::string reason;
  auto p = outerPersistentHeuristics(&copy, info, &reason);
  ASSERT_TRUE(p.has_value()) << reason;
  // 64 channels in vectors of 4 (the running statistics are float): 16
  // threads across them, 16 rows per block.
  EXPECT_EQ(p->vectorize, 4);
  EXPECT_EQ(p->threads_x, 16);
  EXPECT_EQ(p->threads_y, 16);
  EXPECT_EQ(p->blocks_y, 1);
  // Every row is held: blocks x rows per block x rows per thread.
  EXPECT_GE(p->blocks_x * p->threads_y * p->batch, 32 * 14 * 14);
  EXPECT_LT((p->blocks_x - 1) * p->threads_y * p->batch, 32 * 14 * 14);
  const int64_t threads = p->threads_x * p->threads_y;
  const int64_t per_sm =
      std::min<int64_t>({65536 / (p->registers * threads), 2048 / threads, 32});
  EXPECT_LE(p->blocks_x * p->blocks_y, 132 * per_sm) << p->toString();
  EXPECT_GE(p->registers, p->persistent_registers) << p->toString();
}

// What does not fit the registers of the resident blocks is segmented;
// inner normalizations are the inner persistent scheduler's; fusions
// that hold nothing are the reduction scheduler's.
TEST_F(OuterPersistentTest, DeclinesWithReasons) {
  auto& scheduler = schedulerFor(SchedulerType::OuterPersistent);
  {
    BatchNormCase c = batchNormNhwc({2, 2, 2, 64}, at::kBFloat16);
    // 2^20 x 512 bf16 (1 GiB): too large to hold.
    c.inputs[0] = at::empty({1024, 32, 32, 512}, at::kBFloat16);
    for (size_t i = 1; i < c.inputs.size(); ++i) {
      c.inputs[i] = at::empty({512}, c.inputs[i].options());
    }
    std::vector<c10::IValue> inputs(c.inputs.begin(), c.inputs.end());
    RuntimeInfo info =
        makeRuntimeInfo(c.fusion.get(), inputs, /*require_cuda=*/false);
    info.setMultiprocessors(132);
    std::string reason;
    ASSERT_TRUE(scheduler.canScheduleCompileTime(c.fusion.get(), &reason))
        << reason;
    EXPECT_FALSE(scheduler.canScheduleRunTime(c.fusion.get(), info, &reason));
    EXPECT_THAT(reason, HasSubstr("more than the registers"));
  }
  {
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = makeContigTensor(2);
    fusion.addInput(x);
    fusion.addOutput(sub(x, broadcast(sum(x, {1}), {false, true})));
    std::vector<c10::IValue> inputs = {at::randn({64, 256})};
    RuntimeInfo info = makeRuntimeInfo(&fusion, inputs, false);
    std::string reason;
    EXPECT_FALSE(scheduler.canScheduleRunTime(&fusion, info, &reason));
    EXPECT_THAT(reason, HasSubstr("innermost in memory"));
  }
  {
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = makeContigTensor(2);
    fusion.addInput(x);
    fusion.addOutput(sum(x, {0}));
    std::vector<c10::IValue> inputs = {at::randn({64, 256})};
    RuntimeInfo info = makeRuntimeInfo(&fusion, inputs, false);
    std::string reason;
    EXPECT_FALSE(scheduler.canScheduleRunTime(&fusion, info, &reason));
    EXPECT_THAT(reason, HasSubstr("nothing to hold"));
  }
}

// The index math, the rows each thread holds, the totals across the
// blocks that every thread receives, and the statistics written once,
// on the interpreter (2 SMs: several blocks along the rows).
TEST_F(OuterPersistentTest, KernelsNormalizeEveryColumnOnTheInterpreter) {
  auto centered = [](Fusion* f, TensorView* in) {
    TensorView* total = sum(in, {0});
    f->addOutput(total);
    f->addOutput(sub(in, broadcast(total, {true, false})));
  };
  // x - mean, then scaled by the sum of squared deviations (a variance's
  // structure): two sums in a row, the second from the held rows.
  auto two_sums = [](Fusion* f, TensorView* in) {
    const std::vector<bool> rows = {true, true, true, false};
    TensorView* c = sub(in, broadcast(sum(in, {0, 1, 2}), rows));
    TensorView* squares = sum(mul(c, c), {0, 1, 2});
    f->addOutput(squares);
    f->addOutput(mul(c, broadcast(squares, rows)));
  };
  // Two sums of one input, independent of each other (batch norm
  // backward's structure): both cross the grid before the output.
  auto independent_sums = [](Fusion* f, TensorView* in) {
    const std::vector<bool> rows = {true, false};
    TensorView* total = sum(in, {0});
    TensorView* squares = sum(mul(in, in), {0});
    f->addOutput(
        add(mul(in, broadcast(total, rows)), broadcast(squares, rows)));
  };
  // Reduced axes apart from each other, the kept ones between and after
  // them ([N, C, H, W] normalized over N and H).
  auto apart = [](Fusion* f, TensorView* in) {
    const std::vector<bool> reduced = {true, false, true, false};
    f->addOutput(sub(in, broadcast(sum(in, {0, 2}), reduced)));
  };
  const std::vector<InterpretedCase> cases = {
      {"x - sum(x, {0, 2}) [6, 3, 9, 8]", {6, 3, 9, 8}, apart},
      {"x * sum(x, 0) + sum(x * x, 0) [90, 36]", {90, 36}, independent_sums},
      {"x - sum(x, 0) [150, 24]", {150, 24}, centered},
      {"x - sum(x, 0) [77, 5] (odd columns)", {77, 5}, centered},
      // One SM holds 4 blocks of these: each thread holds 2 rows.
      {"x - sum(x, 0) [150, 24] on one SM", {150, 24}, centered, {}, false, 1},
      {"two sums over [N, H, W] of [3, 5, 7, 40]", {3, 5, 7, 40}, two_sums},
  };
  for (const InterpretedCase& ic : cases) {
    std::string params;
    const std::string failure =
        interpret(ic, &params, SchedulerType::OuterPersistent);
    EXPECT_EQ(failure, "") << ic.name << "\n  " << params;
    EXPECT_THAT(params, HasSubstr("OuterPersistent")) << ic.name;
    // Several blocks share the rows.
    EXPECT_THAT(params, Not(HasSubstr("blocks 1 x"))) << ic.name;
    if (ic.multiprocessors == 1) {
      EXPECT_THAT(params, HasSubstr("batch 2")) << ic.name;
    }
  }
}

// Batch norm in training, forward and backward, against ATen, as one
// kernel, twice (compile, then a cache hit).
TEST_F(OuterPersistentGpuTest, BatchNormMatchesATen) {
  for (at::ScalarType type : {at::kFloat, at::kBFloat16}) {
    for (const std::vector<int64_t>& sizes :
         {std::vector<int64_t>{16, 7, 7, 256}, {5, 3, 9, 40}}) {
      SCOPED_TRACE(
          std::string(type == at::kFloat ? "float " : "bfloat16 ") +
          std::to_string(sizes.back()) + " channels");
      for (bool backward : {false, true}) {
        SCOPED_TRACE(backward ? "backward" : "forward");
        BatchNormCase c = batchNormNhwc(sizes, type, at::kCUDA, backward);
        std::vector<c10::IValue> inputs(c.inputs.begin(), c.inputs.end());
        FusionExecutorCache fec(std::make_unique<Fusion>(*c.fusion));
        for (int run = 0; run < 2; ++run) {
          std::vector<at::Tensor> outputs = fec.runFusionWithInputs(inputs);
          const auto* runtime = fec.getMostRecentKernelRuntime();
          EXPECT_EQ(runtime->schedulerType(), SchedulerType::OuterPersistent);
          EXPECT_FALSE(runtime->isSegmented());
          testValidate(fec.fusion(), outputs, inputs, __LINE__, __FILE__);
        }
      }
    }
  }
}

} // namespace fuser
