// Failures inside the runtime (doc/design.md §8): generated code that NVRTC
// rejects (injected through the test hooks of runtime/kernel_executor.h)
// runs its segment with ATen instead, with a warning and the reason kept;
// under FUSER_DISABLE=kernel_fallback, and for a launch the driver refuses,
// it is an InternalError that names the kernel and the dump options that
// show it, and leaves the executor cache usable: the same fusion runs on
// the next call, another one meanwhile.
#include <base/options.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/fusion_kernel_runtime.h>
#include <runtime/kernel_executor.h>
#include <runtime/run_validation.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fuser {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class FailureGpuTest : public FuserTest {
 protected:
  void TearDown() override {
    failNextCompilesForTesting(0);
    failNextLaunchesForTesting(0);
    FuserTest::TearDown();
  }
};

namespace {

std::unique_ptr<Fusion> reluFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addOutput(relu(x));
  return fusion;
}

std::unique_ptr<Fusion> rowSumFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addOutput(sum(x, {1}));
  return fusion;
}

} // namespace

// FUSER_ENABLE=validate_runs's check (runtime/run_validation.h): outputs
// equal to the ATen evaluation pass; a wrong element is an InternalError
// that names the output, the element and how the fusion ran.
TEST(RunValidationTest, AWrongOutputElementIsNamed) {
  std::unique_ptr<Fusion> fusion = reluFusion();
  const at::Tensor x = at::randn({4, 6});
  at::Tensor out = at::relu(x);
  EXPECT_NO_THROW(validateRunWithATen(fusion.get(), {x}, {out}, "PointWise"));
  out.view({-1})[7] = 5.0;
  EXPECT_THAT(
      [&] { validateRunWithATen(fusion.get(), {x}, {out}, "PointWise"); },
      ThrowsMessage<InternalError>(AllOf(
          HasSubstr("output 0 (T1_g_float"),
          HasSubstr("1 of 24 elements differ"),
          HasSubstr("element 7 (flat) is 5"),
          HasSubstr("The fusion ran as: PointWise"))));
}

// The same check for one segment of a run, named by the runtime.
TEST(RunValidationTest, AWrongSegmentOutputNamesTheSegment) {
  std::unique_ptr<Fusion> fusion = reluFusion();
  const at::Tensor x = at::randn({4, 6});
  at::Tensor out = at::relu(x);
  const std::string which = "segment 2 of 5 (PointWise)";
  EXPECT_NO_THROW(validateSegmentWithATen(fusion.get(), {x}, {out}, which));
  out.view({-1})[3] = -1.0;
  EXPECT_THAT(
      [&] { validateSegmentWithATen(fusion.get(), {x}, {out}, which); },
      ThrowsMessage<InternalError>(AllOf(
          HasSubstr("validate_runs: segment 2 of 5 (PointWise): output 0"),
          HasSubstr("1 of 24 elements differ"),
          HasSubstr("element 3 (flat) is -1"), HasSubstr("The segment:"))));
}

// Under validate_runs every kernel segment of a run is checked: a correct
// run of a row sum, a reshape (a segment of its own) and a relu passes.
TEST_F(FailureGpuTest, ValidateRunsChecksEverySegmentOfACorrectRun) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigTensor(2);
    fusion->addInput(x);
    TensorView* rows = sum(relu(x), {1});
    fusion->addOutput(relu(reshape(rows, std::vector<int64_t>{4, -1})));
  }
  FusionExecutorCache fec(std::move(fusion));
  ScopedOptions validate({"validate_runs"}, {});
  const at::Tensor x = cudaRandn({64, 96});
  const auto outputs = fec.runFusionWithInputs({x});
  EXPECT_GT(fec.getMostRecentKernelRuntime()->segments().size(), 1u);
  testValidate(fec.fusion(), outputs, {x}, __LINE__, __FILE__);
}

// A fusion whose output is made from scalars alone (nanoGPT's positions,
// an iota): ATen evaluates it on the CPU, and validate_runs compared that
// with the kernel's CUDA output across devices ("Expected all tensors to
// be on the same device").
TEST_F(FailureGpuTest, ValidateRunsChecksAFactoryOfScalarsAlone) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    Val* length = IrBuilder::create<Val>(DataType::Int);
    fusion->addInput(length);
    fusion->addOutput(iota(length));
  }
  FusionExecutorCache fec(std::move(fusion));
  ScopedOptions validate({"validate_runs"}, {});
  const auto outputs = fec.runFusionWithInputs({c10::IValue(int64_t{64})});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_TRUE(outputs[0].is_cuda());
  EXPECT_TRUE(at::equal(outputs[0].cpu(), at::arange(64, at::kLong)));
}

TEST_F(FailureGpuTest, RejectedKernelRunsWithATenInstead) {
  FusionExecutorCache fec(rowSumFusion());
  const at::Tensor x = cudaRandn({64, 96});
  failNextCompilesForTesting(1);
  const int64_t before = kernelFallbackCount();
  const auto outputs = fec.runFusionWithInputs({x});
  testValidate(fec.fusion(), outputs, {x}, __LINE__, __FILE__);
  EXPECT_EQ(kernelFallbackCount(), before + 1);
  expectKernelFallbacks();
  const FusionKernelRuntime* runtime = fec.getMostRecentKernelRuntime();
  EXPECT_EQ(runtime->schedulerType(0), SchedulerType::ExprEval);
  EXPECT_THAT(
      runtime->segments()[0].fallback_reason,
      AllOf(
          HasSubstr("Reduction kernel failed"),
          HasSubstr("injected compile failure")));
  // The fallback is cached with the runtime: the next call runs it again.
  testValidate(
      fec.fusion(), fec.runFusionWithInputs({x}), {x}, __LINE__, __FILE__);
  EXPECT_EQ(fec.numRuntimes(), 1u);
}

TEST_F(FailureGpuTest, RejectedKernelIsAnInternalErrorAndNothingIsCached) {
  FusionExecutorCache fec(reluFusion());
  const at::Tensor x = cudaRandn({64, 96});
  ScopedOptions strict({}, {"kernel_fallback"});
  failNextCompilesForTesting(1);
  EXPECT_THAT(
      [&] { fec.runFusionWithInputs({x}); },
      ThrowsMessage<InternalError>(AllOf(
          HasSubstr("NVRTC failed to compile kernel 'fuser_pointwise_"),
          HasSubstr("injected compile failure"),
          HasSubstr("FUSER_DUMP=cuda_kernel"))));
  EXPECT_EQ(fec.numRuntimes(), 0u);
  // Another fusion runs, and so does this one now.
  FusionExecutorCache other(rowSumFusion());
  testValidate(
      other.fusion(), other.runFusionWithInputs({x}), {x}, __LINE__, __FILE__);
  testValidate(
      fec.fusion(), fec.runFusionWithInputs({x}), {x}, __LINE__, __FILE__);
}

TEST_F(FailureGpuTest, RefusedLaunchIsAnInternalErrorAndTheCacheStaysUsable) {
  FusionExecutorCache fec(rowSumFusion());
  const at::Tensor x = cudaRandn({64, 4096});
  testValidate(
      fec.fusion(), fec.runFusionWithInputs({x}), {x}, __LINE__, __FILE__);
  failNextLaunchesForTesting(1);
  EXPECT_THAT(
      [&] { fec.runFusionWithInputs({x}); },
      ThrowsMessage<InternalError>(AllOf(
          HasSubstr("Launching kernel fuser_"), HasSubstr("(source hash"),
          HasSubstr("an injected launch failure"),
          HasSubstr("FUSER_DUMP=cuda_kernel,launch_params"))));
  // The error is not sticky: the cached kernel and another fusion run.
  testValidate(
      fec.fusion(), fec.runFusionWithInputs({x}), {x}, __LINE__, __FILE__);
  FusionExecutorCache other(reluFusion());
  testValidate(
      other.fusion(), other.runFusionWithInputs({x}), {x}, __LINE__, __FILE__);
  EXPECT_EQ(fec.numRuntimes(), 1u);
}

} // namespace fuser
