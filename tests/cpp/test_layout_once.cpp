// Each input's layout (layout/tensor_layout.h) is made once per cache miss
// (doc/design.md §6): the runtime makes it when it binds the inputs and
// hands it to segmentation, scheduling and the kernel's launch plan,
// which copy it instead of replaying logical -> allocation again. The
// counter inputLayoutCount() counts the replays.

#include <fusion.h>
#include <ir/all_nodes.h>
#include <layout/tensor_layout.h>
#include <ops/all_ops.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/input_binding.h>
#include <runtime/segment_scheduling.h>
#include <segmentation/segmented_fusion.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace fuser {

namespace {

// x [a, b, c] (allocation c-major for the last two axes) and w [c]: a sum
// over c, a product with x, then a sum over a; two reductions along
// different axes, so two segments.
std::unique_ptr<Fusion> twoSegmentFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(3);
  TensorView* w = makeContigTensor(1);
  fusion->addInput(x);
  fusion->addInput(w);
  const auto& l = x->getLogicalDomain();
  x->setAllocationDomain({l[0], l[2], l[1]}, true);
  TensorView* s1 = sum(mul(x, broadcast(w, {true, true, false})), {2});
  TensorView* y = mul(x, broadcast(s1, {false, false, true}));
  fusion->addOutput(sum(y, {0}));
  return fusion;
}

// x laid out as twoSegmentFusion declares it.
at::Tensor permutedInput(const at::TensorOptions& options) {
  return at::randn({4, 16, 96}, options)
      .transpose(1, 2)
      .contiguous()
      .transpose(1, 2);
}

} // namespace

class LayoutOnceTest : public FuserIrTest {};

// What the runtime does before it schedules a segment (segment_scheduling.h
// tries schedulers on each candidate group): the two inputs' layouts are
// made once, by makeRuntimeInfo on the whole fusion.
TEST_F(LayoutOnceTest, SegmentingMakesEachInputLayoutOnce) {
  std::unique_ptr<Fusion> fusion = twoSegmentFusion();
  const std::vector<c10::IValue> inputs = {
      permutedInput(at::TensorOptions()), at::randn({96})};
  const int64_t before = inputLayoutCount();
  SegmentedFusion segmented(fusion.get());
  Fusion* complete = segmented.completeFusion();
  RuntimeInfo info = makeRuntimeInfo(complete, inputs, /*require_cuda=*/false);
  segmentForInputs(segmented, inputs, info);
  ASSERT_EQ(segmented.groups().size(), 2u);
  EXPECT_EQ(inputLayoutCount() - before, 2);
}

// Layouts handed to makeRuntimeInfo are copied, not made again, and are
// what the schedulers read.
TEST_F(LayoutOnceTest, KnownLayoutsAreCopiedNotMadeAgain) {
  std::unique_ptr<Fusion> fusion = twoSegmentFusion();
  const std::vector<c10::IValue> inputs = {
      permutedInput(at::TensorOptions()), at::randn({96})};
  RuntimeInfo first =
      makeRuntimeInfo(fusion.get(), inputs, /*require_cuda=*/false);
  const KnownLayouts layouts = layoutsOf(fusion.get(), first);
  ASSERT_EQ(layouts.size(), 2u);
  ASSERT_NE(layouts[0], nullptr);
  EXPECT_EQ(
      layouts[0]->allocation_strides, (std::vector<int64_t>{1536, 16, 1}));

  const int64_t before = inputLayoutCount();
  RuntimeInfo second =
      makeRuntimeInfo(fusion.get(), inputs, /*require_cuda=*/false, layouts);
  EXPECT_EQ(inputLayoutCount(), before);
  auto* x = fusion->inputs()[0]->as<TensorView>();
  EXPECT_EQ(
      second.tensorInfo(x)->layout.allocation_strides,
      layouts[0]->allocation_strides);
}

class LayoutOnceGpuTest : public FuserTest {};

// On the GPU, through FusionExecutorCache: a cache miss of the two-segment
// fusion (segmentation, scheduling and compiling two kernels, and their
// launch plans) makes each of its two inputs' layouts once; a hit makes
// none.
TEST_F(LayoutOnceGpuTest, ACacheMissMakesEachInputLayoutOnce) {
  FusionExecutorCache cache(twoSegmentFusion());
  const at::TensorOptions options = at::TensorOptions().device(at::kCUDA);
  const std::vector<c10::IValue> inputs = {
      permutedInput(options), at::randn({96}, options)};
  const int64_t before = inputLayoutCount();
  auto outputs = cache.runFusionWithInputs(inputs);
  EXPECT_EQ(inputLayoutCount() - before, 2);
  ASSERT_EQ(cache.getMostRecentKernelRuntime()->executors().size(), 2u);
  testValidate(cache.fusion(), outputs, inputs, __LINE__, __FILE__);

  const int64_t after_miss = inputLayoutCount();
  cache.runFusionWithInputs(inputs);
  EXPECT_EQ(inputLayoutCount(), after_miss);
}

} // namespace fuser
