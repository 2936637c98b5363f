// Segments of a fusion (csrc/segmentation/segmented_fusion.h) and the
// segmented runtime (csrc/runtime/fusion_kernel_runtime.h): a fusion cut by
// segment_set runs as several segments, each with its own scheduler and
// executor, and returns the same outputs, in the same layouts, as the
// fusion without the cut.
#include <codegen/codegen.h>
#include <device_lower/lower.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/input_binding.h>
#include <runtime/nvrtc_compile.h>
#include <scheduler/registry.h>
#include <segmentation/segmented_fusion.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fuser {

using ::testing::HasSubstr;

class SegmentationTest : public FuserIrTest {};
class SegmentationGpuTest : public FuserTest {};

namespace {

// relu(a + b), cut after the sum; the output laid out transposed.
std::unique_ptr<Fusion> cutFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addInput(b);
  TensorView* sum = add(a, b);
  TensorView* cut = segment_set(sum);
  TensorView* out = mul(relu(cut), IrBuilder::create<Val>(2.0));
  fusion->addOutput(out);
  out->setAllocationDomain({out->axis(1), out->axis(0)}, true);
  return fusion;
}

} // namespace

TEST_F(SegmentationTest, SegmentSetCutsTheFusionInTwo) {
  std::unique_ptr<Fusion> fusion = cutFusion();
  SegmentedFusion segmented(fusion.get());
  ASSERT_TRUE(segmented.isSegmented());
  ASSERT_EQ(segmented.groups().size(), 2u);
  Fusion* complete = segmented.completeFusion();
  const SegmentedGroup* first = segmented.groups()[0];
  const SegmentedGroup* second = segmented.groups()[1];
  // The first group computes the sum and the cut copy; the second reads
  // the copy.
  EXPECT_EQ(first->exprs().size(), 2u);
  EXPECT_EQ(first->inputs(), complete->inputs());
  ASSERT_EQ(first->outputs().size(), 1u);
  Val* cut = first->outputs()[0];
  EXPECT_EQ(second->inputs(), std::vector<Val*>{cut});
  EXPECT_EQ(second->outputs(), complete->outputs());
  EXPECT_TRUE(segmented.isIntermediate(cut));
  EXPECT_FALSE(segmented.isIntermediate(complete->inputs()[0]));
  // The intermediate's layout is fixed for both sides.
  EXPECT_TRUE(cut->as<TensorView>()->hasAllocation());
  EXPECT_THAT(
      segmented.toString(),
      HasSubstr("edge " + cut->toString() + ": group 0 -> group 1"));

  // Each group is a fusion of its own, which the pointwise scheduler takes
  // and whose kernel compiles.
  for (const SegmentedGroup* group : segmented.groups()) {
    std::unique_ptr<Fusion> part = group->makeFusion();
    EXPECT_EQ(part->inputs().size(), group->inputs().size());
    EXPECT_EQ(part->outputs().size(), group->outputs().size());
    for (Val* in : part->inputs()) {
      EXPECT_EQ(in->definition(), nullptr);
    }
    std::vector<c10::IValue> inputs;
    for (size_t i = 0; i < part->inputs().size(); ++i) {
      inputs.emplace_back(at::randn({8, 12}));
    }
    RuntimeInfo info = makeRuntimeInfo(part.get(), inputs, false);
    SchedulerChoice choice = chooseScheduler(part.get(), info);
    ASSERT_EQ(choice.scheduler->type(), SchedulerType::PointWise);
    choice.scheduler->schedule(
        part.get(), *choice.scheduler->computeHeuristics(part.get(), info));
    EXPECT_NO_THROW(compileToCubin(
        generateCudaKernel(part.get()), "fuser_kernel", 90, true));
  }
}

// Without a segment_set the fusion is one group with its own inputs and
// outputs.
TEST_F(SegmentationTest, NoCutIsOneGroup) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addOutput(relu(a));
  SegmentedFusion segmented(fusion.get());
  EXPECT_FALSE(segmented.isSegmented());
  ASSERT_EQ(segmented.groups().size(), 1u);
  EXPECT_EQ(
      segmented.groups()[0]->inputs(), segmented.completeFusion()->inputs());
}

TEST_F(SegmentationGpuTest, SegmentSetRunsAsTwoSegments) {
  FusionExecutorCache fec(cutFusion());
  const auto options = at::TensorOptions().device(at::kCUDA);
  at::Tensor a = at::randn({48, 40}, options);
  at::Tensor b = at::randn({48, 40}, options);
  for (int run = 0; run < 2; ++run) {
    std::vector<at::Tensor> outputs = fec.runFusionWithInputs({a, b});
    FusionKernelRuntime* runtime = fec.getMostRecentKernelRuntime();
    EXPECT_TRUE(runtime->isSegmented());
    ASSERT_EQ(runtime->fusionSegments()->groups().size(), 2u);
    ASSERT_EQ(runtime->executors().size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(
          runtime->fusionSegments()->groups()[i]->schedulerType(),
          SchedulerType::PointWise);
      EXPECT_FALSE(runtime->kernelCode(i).empty());
      EXPECT_NE(runtime->scheduledFusion(i), nullptr);
    }
    ASSERT_EQ(outputs.size(), 1u);
    // The declared (transposed) layout of the output.
    EXPECT_EQ(outputs[0].strides().vec(), (std::vector<int64_t>{1, 48}));
    testValidate(fec.fusion(), outputs, {a, b}, __LINE__, __FILE__);
  }
  EXPECT_EQ(fec.numRuntimes(), 1u);
  EXPECT_EQ(fec.getMostRecentKernelRuntime()->runCount(), 2);
}

} // namespace fuser
