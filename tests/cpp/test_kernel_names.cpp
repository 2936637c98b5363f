// Each generated kernel is named after the scheduler of its segment
// (runtime/fusion_kernel_runtime.h, kernelNameFor), so that a profile of a
// model's step tells fuser's kernels apart by kind.

#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/fusion_kernel_runtime.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fuser {

using ::testing::HasSubstr;

class KernelNamesTest : public FuserIrTest {};

TEST_F(KernelNamesTest, NamesFollowTheScheduler) {
  EXPECT_EQ(kernelNameFor(SchedulerType::PointWise), "fuser_pointwise");
  EXPECT_EQ(
      kernelNameFor(SchedulerType::InnerPersistent), "fuser_innerpersistent");
  EXPECT_EQ(kernelNameFor(SchedulerType::Matmul), "fuser_matmul");
}

class KernelNamesGpuTest : public FuserTest {};

// A row sum then a relu of it: a reduction kernel and a pointwise one,
// each declared under its scheduler's name.
TEST_F(KernelNamesGpuTest, EachSegmentsKernelCarriesItsName) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addOutput(relu(sum(x, {1})));
  fusion->addOutput(relu(x));
  FusionExecutorCache cache(std::move(fusion));
  const at::Tensor tx = at::randn({64, 4096}, at::kCUDA);
  auto outputs = cache.runFusionWithInputs({tx});
  testValidate(cache.fusion(), outputs, {tx}, __LINE__, __FILE__);
  std::string code;
  for (Executor* executor : cache.getMostRecentKernelRuntime()->executors()) {
    code += executor->kernelCode();
  }
  EXPECT_THAT(code, ::testing::ContainsRegex(" fuser_[a-z]*(reduction|persistent)_[0-9a-f]{8}\\("));
  EXPECT_THAT(code, ::testing::ContainsRegex(" fuser_pointwise_[0-9a-f]{8}\\("));
  EXPECT_THAT(code, ::testing::Not(HasSubstr(" fuser_kernel(")));
}

} // namespace fuser
