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

#include <regex>
#include <string>
#include <vector>

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

// Sums over each of the two axes: two reduction segments (one kernel
// cannot reduce both), each kernel declared under its scheduler's name and
// the digest of its own code, so that the two names differ.
TEST_F(KernelNamesGpuTest, EachSegmentsKernelCarriesItsName) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addOutput(sum(x, {0}));
  fusion->addOutput(sum(x, {1}));
  FusionExecutorCache cache(std::move(fusion));
  const at::Tensor tx = at::randn({64, 4096}, at::kCUDA);
  auto outputs = cache.runFusionWithInputs({tx});
  testValidate(cache.fusion(), outputs, {tx}, __LINE__, __FILE__);
  const std::regex declared(" (fuser_reduction_[0-9a-f]{8})\\(");
  std::vector<std::string> names;
  for (Executor* executor : cache.getMostRecentKernelRuntime()->executors()) {
    const std::string code = executor->kernelCode();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(code, match, declared)) << code;
    names.push_back(match[1]);
    EXPECT_THAT(code, ::testing::Not(HasSubstr(" fuser_kernel(")));
  }
  ASSERT_EQ(names.size(), 2);
  EXPECT_NE(names[0], names[1]);
}

} // namespace fuser
