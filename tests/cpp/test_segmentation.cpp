// Segments of a fusion (csrc/segmentation/segmented_fusion.h) and the
// segmented runtime (csrc/runtime/fusion_kernel_runtime.h): a fusion cut by
// segment_set runs as several segments, each with its own scheduler and
// executor, and returns the same outputs, in the same layouts, as the
// fusion without the cut. Expands the schedulers decline are in
// test_segmentation_expands.cpp; the shared helpers in
// segmentation_harness.h.
#include <codegen/codegen.h>
#include <device_lower/lower.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/aten_types.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/input_binding.h>
#include <runtime/nvrtc_compile.h>
#include <runtime/segment_scheduling.h>
#include <runtime/tensor_layout.h>
#include <scheduler/registry.h>
#include <segmentation/segmented_fusion.h>
#include <tests/cpp/segmentation_harness.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

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

// x [L, M, N] -> s1 = sum over N; y = x * s1 broadcast over N; s2 = sum
// of y over L: two reductions along different axes, not complementary (M
// is kept by both), which no one kernel takes (the inner-outer scheduler
// takes [M, N] with its sums over N and M, doc/normalization.md §9).
std::unique_ptr<Fusion> twoAxesFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(3);
  fusion->addInput(x);
  TensorView* s1 = sum(x, {2});
  TensorView* y = mul(x, broadcast(s1, {false, false, true}));
  fusion->addOutput(sum(y, {0}));
  return fusion;
}

// softmax along axis 1, then softmax of that along axis 0.
std::unique_ptr<Fusion> softmaxTwiceFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addOutput(softmax(softmax(x, 1), 0));
  return fusion;
}

std::unique_ptr<Fusion> softmaxFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addOutput(softmax(x, 1));
  return fusion;
}

// layer_norm(a @ b) over the last axis, bf16.
std::unique_ptr<Fusion> matmulLayerNormFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2, DataType::BFloat16);
  TensorView* b = makeContigTensor(2, DataType::BFloat16);
  fusion->addInput(a);
  fusion->addInput(b);
  auto ln = layer_norm(
      matmul(a, b), {1}, nullptr, nullptr, IrBuilder::create<Val>(1e-5));
  fusion->addOutput(ln.output);
  return fusion;
}

// x [B, S, H] of unknown sizes summed over H, viewed as [B, S / 8, 8],
// summed over the middle axis.
std::unique_ptr<Fusion> reshapeBetweenReductionsFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(3);
  fusion->addInput(x);
  TensorView* r = reshape(
      sum(x, {2}), std::vector<Val*>{
                       x->axis(0)->extent(), IrBuilder::indexConst(-1),
                       IrBuilder::indexConst(8)});
  fusion->addOutput(sum(r, {1}));
  return fusion;
}

// y = relu(x) laid out transposed, summed along each axis: y is written
// by one segment and read by two others in its own layout.
std::unique_ptr<Fusion> transposedIntermediateFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  TensorView* y = relu(x);
  y->setAllocationDomain({y->axis(1), y->axis(0)}, true);
  fusion->addOutput(sum(y, {1}));
  fusion->addOutput(sum(y, {0}));
  return fusion;
}

// The row means of x, with a cut between the sums and the division by the
// row length: the dividing segment reads only the sums, which carry no
// row length, so it takes the length as a scalar.
std::unique_ptr<Fusion> meanAfterCutFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  TensorView* sums = segment_set(sum(x, {1}));
  fusion->addOutput(div(sums, x->axis(1)->extent()));
  return fusion;
}

// relu(a + b) * 2 with a segment_set after the add.
std::unique_ptr<Fusion> cutPointwiseFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  fusion->addInput(a);
  TensorView* cut = segment_set(add(a, IrBuilder::create<Val>(1.0)));
  fusion->addOutput(mul(relu(cut), IrBuilder::create<Val>(2.0)));
  return fusion;
}

// A random fusion of elementwise ops, broadcasts and reductions over a
// 2-D or 3-D shape (every tensor has the full rank: reductions keep their
// axes as broadcasts), with one or two outputs, and inputs for it.
struct RandomCase {
  std::unique_ptr<Fusion> fusion;
  std::vector<int64_t> shape;
  std::string program;
};

RandomCase randomSegmentationCase(uint64_t seed) {
  std::mt19937_64 gen(seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen);
  };
  RandomCase c;
  c.fusion = std::make_unique<Fusion>();
  FusionGuard fg(c.fusion.get());
  const int64_t rank = uniform(2, 3);
  for (int64_t i = 0; i < rank; ++i) {
    c.shape.push_back(uniform(2, 70));
  }
  std::vector<TensorView*> pool;
  const int64_t n_inputs = uniform(1, 3);
  for (int64_t i = 0; i < n_inputs; ++i) {
    TensorView* in = makeContigTensor(rank);
    c.fusion->addInput(in);
    pool.push_back(in);
  }
  std::stringstream program;
  const int64_t n_ops = uniform(3, 9);
  for (int64_t op = 0; op < n_ops; ++op) {
    TensorView* a = pool[static_cast<size_t>(
        uniform(0, static_cast<int64_t>(pool.size()) - 1))];
    TensorView* b = pool[static_cast<size_t>(
        uniform(0, static_cast<int64_t>(pool.size()) - 1))];
    const int64_t kind = uniform(0, 9);
    TensorView* out = nullptr;
    if (kind < 3) {
      std::vector<int64_t> axes;
      for (int64_t i = 0; i < rank; ++i) {
        if (!a->axis(i)->isBroadcast() && uniform(0, 1) == 1) {
          axes.push_back(i);
        }
      }
      if (axes.empty()) {
        out = tanh(a);
        program << "tanh; ";
      } else {
        const int64_t which = uniform(0, 2);
        out = which == 0   ? sum(a, axes, /*keep_dim=*/true)
              : which == 1 ? max(a, axes, /*keep_dim=*/true)
                           : mean(a, axes, /*keep_dim=*/true);
        program << (which == 0   ? "sum"
                    : which == 1 ? "max"
                                 : "mean")
                << " over " << axes.size() << " axes; ";
      }
    } else if (kind < 6) {
      switch (uniform(0, 3)) {
        case 0:
          out = relu(a);
          break;
        case 1:
          out = tanh(a);
          break;
        case 2:
          out = sigmoid(a);
          break;
        default:
          out = neg(a);
      }
      program << "unary; ";
    } else {
      switch (uniform(0, 2)) {
        case 0:
          out = add(a, b);
          break;
        case 1:
          out = mul(a, b);
          break;
        default:
          out = sub(a, b);
      }
      program << "binary; ";
    }
    pool.push_back(out);
  }
  TensorView* last = pool.back();
  c.fusion->addOutput(last);
  TensorView* other = pool[static_cast<size_t>(
      uniform(n_inputs, static_cast<int64_t>(pool.size()) - 1))];
  if (other != last && uniform(0, 1) == 1) {
    c.fusion->addOutput(other);
  }
  c.program = program.str();
  return c;
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

// Two reductions along different axes cannot share a kernel: the first is
// one segment, the broadcast product and the second reduction another.
// A cache miss asks the schedulers about each candidate group once: the
// segmenter's repeated questions are answered from what was found, and the
// runtime schedules each final group with the scheduler found for it
// (chosenFor) instead of asking them all again.
TEST_F(SegmentationTest, EachGroupsSchedulerIsChosenOnce) {
  std::unique_ptr<Fusion> fusion = twoAxesFusion();
  const std::vector<c10::IValue> inputs = {at::randn({4, 16, 96})};
  SegmentedFusion segmented(fusion.get());
  Fusion* complete = segmented.completeFusion();
  RuntimeInfo info = makeRuntimeInfo(complete, inputs, /*require_cuda=*/false);
  std::unique_ptr<InputSegmentScheduling> scheduling =
      segmentForInputs(segmented, inputs, info);
  ASSERT_EQ(segmented.groups().size(), 2u);

  const int64_t before = schedulerChoiceCount();
  for (SegmentedGroup* group : segmented.groups()) {
    EXPECT_EQ(scheduling->chosenFor(*group), SchedulerType::Reduction);
    EXPECT_EQ(scheduling->compiledScheduler(*group), SchedulerType::Reduction);
  }
  EXPECT_EQ(schedulerChoiceCount(), before);
}

TEST_F(SegmentationTest, ReductionsAlongTwoAxesAreTwoReductionSegments) {
  std::unique_ptr<Fusion> fusion = twoAxesFusion();
  auto segmented = checkedSegments(fusion.get(), {at::randn({4, 16, 96})});
  ASSERT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::Reduction, SchedulerType::Reduction}));
  const SegmentedGroup* first = segmented->groups()[0];
  const SegmentedGroup* second = segmented->groups()[1];
  EXPECT_TRUE(first->exprs().front()->isA<ReductionOp>());
  EXPECT_TRUE(second->exprs().back()->isA<ReductionOp>());
  ASSERT_EQ(first->outputs().size(), 1u);
  // The edge: the row sums (broadcast) from the first to the second.
  EXPECT_THAT(
      segmented->toString(),
      HasSubstr(
          "edge " + first->outputs()[0]->toString() + ": group 0 -> group 1"));
  EXPECT_THAT(
      second->inputs(),
      ::testing::UnorderedElementsAre(
          segmented->completeFusion()->inputs()[0], first->outputs()[0]));
}

// A fusion one scheduler takes whole stays one group.
TEST_F(SegmentationTest, OneSchedulerTakesTheWholeFusion) {
  std::unique_ptr<Fusion> fusion = softmaxFusion();
  auto segmented = checkedSegments(fusion.get(), {at::randn({64, 96})});
  EXPECT_FALSE(segmented->isSegmented());
  EXPECT_EQ(
      schedulerTypes(*segmented),
      std::vector<SchedulerType>{SchedulerType::InnerPersistent});
}

// The inner softmax is one persistent kernel; the outer one (axis 0, not
// innermost in memory: no persistent scheduler takes it) is cut into two
// reductions and two pointwise kernels, none run by ATen.
TEST_F(SegmentationTest, TwoNormalizationsAlongDifferentAxes) {
  std::unique_ptr<Fusion> fusion = softmaxTwiceFusion();
  auto segmented = checkedSegments(fusion.get(), {at::randn({64, 96})});
  // The rows' softmax with the columns' max (its partials per block,
  // finished across blocks); the exponentials with their column sums (the
  // reduction kernel writes what it sums); the division.
  EXPECT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::InnerOuterPersistent, SchedulerType::Reduction,
          SchedulerType::PointWise}));
  // Without the inner-outer scheduler the columns' max is a kernel of its
  // own.
  ScopedEnv off("FUSER_DISABLE", "inner_outer_persistent");
  EXPECT_EQ(
      schedulerTypes(*checkedSegments(fusion.get(), {at::randn({64, 96})})),
      (std::vector<SchedulerType>{
          SchedulerType::InnerPersistent, SchedulerType::Reduction,
          SchedulerType::Reduction, SchedulerType::PointWise}));
}

// A row too large for one block's registers: the persistent scheduler
// declines the whole softmax, which becomes a max, a sum of exponentials
// that also writes them (a reduction kernel writing what it sums: every
// row streams through once), and a division, with no segment left to
// ATen.
TEST_F(SegmentationTest, RowTooLargeForOneBlockFallsToSegments) {
  std::unique_ptr<Fusion> fusion = softmaxFusion();
  const at::Tensor x = at::randn({4, 1 << 18});
  auto segmented = checkedSegments(fusion.get(), {x});
  EXPECT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::Reduction, SchedulerType::Reduction,
          SchedulerType::PointWise}));
  // The same definition at a row that fits is one kernel again.
  auto small = checkedSegments(fusion.get(), {at::randn({4, 1 << 10})});
  EXPECT_FALSE(small->isSegmented());
}

// The layouts batch norm is tested in: NCHW, NHWC with C the last
// logical axis (channels_last), and NCHW whose memory is NHWC (PyTorch's
// channels_last memory format).
enum class BatchNormLayout { Nchw, Nhwc, NchwInNhwcMemory };

const char* name(BatchNormLayout layout) {
  switch (layout) {
    case BatchNormLayout::Nchw:
      return "NCHW";
    case BatchNormLayout::Nhwc:
      return "NHWC";
    case BatchNormLayout::NchwInNhwcMemory:
      return "NCHW in NHWC memory";
  }
  return "";
}

constexpr BatchNormLayout kBatchNormLayouts[] = {
    BatchNormLayout::Nchw, BatchNormLayout::Nhwc,
    BatchNormLayout::NchwInNhwcMemory};

// Batch norm in training with its running statistics: outputs the
// normalized tensor, the batch mean and invstd, and the two running
// statistics' updates.
std::unique_ptr<Fusion> batchNormFusion(
    BatchNormLayout layout, DataType dtype = DataType::Float) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(4, dtype);
  TensorView* w = makeContigTensor(1, dtype);
  TensorView* b = makeContigTensor(1, dtype);
  TensorView* rm = makeContigTensor(1);
  TensorView* rv = makeContigTensor(1);
  for (TensorView* tv : {x, w, b, rm, rv}) {
    fusion->addInput(tv);
  }
  if (layout == BatchNormLayout::NchwInNhwcMemory) {
    x->setAllocationDomain(
        {x->axis(0), x->axis(2), x->axis(3), x->axis(1)}, true);
  }
  BatchNormResult r = batch_norm(
      x, w, b, rm, rv, /*training=*/true, IrBuilder::create<Val>(0.1),
      IrBuilder::create<Val>(1e-5), layout == BatchNormLayout::Nhwc);
  for (TensorView* tv :
       {r.output, r.mean, r.invstd, r.running_mean, r.running_var}) {
    fusion->addOutput(tv);
  }
  return fusion;
}

std::vector<c10::IValue> batchNormInputs(
    BatchNormLayout layout, int64_t n, int64_t c, int64_t hw,
    const at::TensorOptions& options = {}, at::ScalarType dtype = at::kFloat) {
  at::Tensor x = layout == BatchNormLayout::Nhwc
                     ? at::randn({n, hw, hw, c}, options)
                     : at::randn({n, c, hw, hw}, options);
  if (layout == BatchNormLayout::NchwInNhwcMemory) {
    x = x.contiguous(at::MemoryFormat::ChannelsLast);
  }
  return {
      x.to(dtype), at::randn({c}, options).to(dtype),
      at::randn({c}, options).to(dtype), at::randn({c}, options),
      at::rand({c}, options) + 0.5};
}

// The gradients of a training batch norm: grad_input, grad_weight and
// grad_bias from dy, x and the forward's saved statistics.
std::unique_ptr<Fusion> batchNormBackwardFusion(BatchNormLayout layout) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* dy = makeContigTensor(4);
  TensorView* x = makeContigTensor(4);
  TensorView* w = makeContigTensor(1);
  TensorView* save_mean = makeContigTensor(1);
  TensorView* save_invstd = makeContigTensor(1);
  for (TensorView* tv : {dy, x, w, save_mean, save_invstd}) {
    fusion->addInput(tv);
  }
  if (layout == BatchNormLayout::NchwInNhwcMemory) {
    for (TensorView* tv : {dy, x}) {
      tv->setAllocationDomain(
          {tv->axis(0), tv->axis(2), tv->axis(3), tv->axis(1)}, true);
    }
  }
  BackwardNormResult g = batch_norm_backward(
      dy, x, w, nullptr, nullptr, save_mean, save_invstd, /*training=*/true,
      nullptr, layout == BatchNormLayout::Nhwc);
  for (TensorView* tv : {g.grad_input, g.grad_weight, g.grad_bias}) {
    fusion->addOutput(tv);
  }
  return fusion;
}

std::vector<c10::IValue> batchNormBackwardInputs(
    BatchNormLayout layout, int64_t n, int64_t c, int64_t hw,
    const at::TensorOptions& options = {}) {
  std::vector<c10::IValue> forward = batchNormInputs(layout, n, c, hw, options);
  const at::Tensor x = forward[0].toTensor();
  return {
      at::randn_like(x), x, forward[1], at::randn({c}, options),
      at::rand({c}, options) + 0.5};
}

// Batch norm over a batch too large to stay on chip (64 MiB): the
// per-channel statistics with the running statistics' updates are one
// reduction kernel, the normalization one pointwise kernel, in every
// layout. A small NCHW batch is one inner persistent kernel (its H and W
// are innermost; the batch axis is folded into the rows).
TEST_F(SegmentationTest, BatchNormIsStatisticsThenNormalization) {
  for (BatchNormLayout layout : kBatchNormLayouts) {
    SCOPED_TRACE(name(layout));
    std::unique_ptr<Fusion> fusion = batchNormFusion(layout);
    auto segmented =
        checkedSegments(fusion.get(), batchNormInputs(layout, 256, 64, 32));
    EXPECT_EQ(
        schedulerTypes(*segmented),
        (std::vector<SchedulerType>{
            SchedulerType::Reduction, SchedulerType::PointWise}));
  }
  // bf16 data with float running statistics, as PyTorch keeps them.
  std::unique_ptr<Fusion> bf16 =
      batchNormFusion(BatchNormLayout::NchwInNhwcMemory, DataType::BFloat16);
  auto bf16_segments = checkedSegments(
      bf16.get(),
      batchNormInputs(
          BatchNormLayout::NchwInNhwcMemory, 256, 64, 32, {}, at::kBFloat16));
  EXPECT_EQ(
      schedulerTypes(*bf16_segments),
      (std::vector<SchedulerType>{
          SchedulerType::Reduction, SchedulerType::PointWise}));
  std::unique_ptr<Fusion> fusion = batchNormFusion(BatchNormLayout::Nchw);
  auto small = checkedSegments(
      fusion.get(), batchNormInputs(BatchNormLayout::Nchw, 8, 64, 8));
  EXPECT_EQ(
      schedulerTypes(*small),
      (std::vector<SchedulerType>{SchedulerType::InnerPersistent}));
}

// Softmax as frontends write it: the row statistics broadcast and
// expanded to the input's shape (broadcast_in_dim to x.shape). The expands
// are bypassed (transform/redundant_expands.h), so the schedulers see the
// statistics' broadcasts and the softmax is one inner persistent kernel.
TEST_F(SegmentationTest, ExpandedStatisticsAreReadAsBroadcasts) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigTensor(2);
    fusion->addInput(x);
    auto along_rows = [&](TensorView* stat) {
      Val* cols = x->getLogicalDomain()[1]->extent();
      return expand(
          broadcast(stat, {false, true}), {IrBuilder::indexConst(-1), cols});
    };
    TensorView* e = exp(sub(x, along_rows(max(x, {1}))));
    fusion->addOutput(div(e, along_rows(sum(e, {1}))));
  }
  auto segmented = checkedSegments(fusion.get(), {at::randn({64, 1000})});
  EXPECT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{SchedulerType::InnerPersistent}));
  for (Expr* expr : segmented->completeFusion()->exprs()) {
    EXPECT_FALSE(expr->isA<ExpandOp>()) << expr->toString();
  }
}

// Its backward over a batch too large to hold: the per-channel sums of dy
// and of dy * (x - mean) are one reduction kernel (two groups that read dy
// and x merge, doc/segmentation.md §2 step 6), then grad_input is one
// pointwise kernel. x - mean, read by the second sum and by grad_input, is
// computed in each (transform/input_forwarding.h), not written by one and
// read by the other.
TEST_F(SegmentationTest, BatchNormBackwardIsTwoSumsThenTheInputGradient) {
  for (BatchNormLayout layout : kBatchNormLayouts) {
    SCOPED_TRACE(name(layout));
    std::unique_ptr<Fusion> fusion = batchNormBackwardFusion(layout);
    auto segmented = checkedSegments(
        fusion.get(), batchNormBackwardInputs(layout, 256, 64, 32));
    EXPECT_EQ(
        schedulerTypes(*segmented),
        (std::vector<SchedulerType>{
            SchedulerType::Reduction, SchedulerType::PointWise}));
    // Between the kernels pass per-channel values only.
    for (const SegmentedGroup* group : segmented->groups()) {
      for (Val* out : group->outputs()) {
        const auto ids = TensorDomain::noReductions(
            out->as<TensorView>()->getLogicalDomain());
        const auto full = std::count_if(ids.begin(), ids.end(), [](auto* id) {
          return !id->isBroadcast();
        });
        EXPECT_TRUE(out->isFusionOutput() || full <= 1)
            << "a full-size intermediate: " << out->toString();
      }
    }
  }
}

// A layer norm backward with its weight and bias gradients, the
// inner-outer scheduler turned off: the input gradient is an inner
// persistent kernel, and the two column sums, sum(dy * xhat, 0) and
// sum(dy, 0), which read dy (and x) alike, one reduction kernel.
TEST_F(SegmentationTest, LayerNormBackwardWeightGradientsShareAKernel) {
  // (With it, on by default, the whole fusion is one kernel.)
  ScopedEnv off("FUSER_DISABLE", "inner_outer_persistent");
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* dy = makeContigTensor(2);
  TensorView* x = makeContigTensor(2);
  TensorView* mean = makeContigTensor(1);
  TensorView* invstd = makeContigTensor(1);
  TensorView* w = makeContigTensor(1);
  TensorView* b = makeContigTensor(1);
  for (TensorView* tv : {dy, x, mean, invstd, w, b}) {
    fusion->addInput(tv);
  }
  BackwardNormResult g = layer_norm_backward(dy, x, {1}, mean, invstd, w, b);
  for (TensorView* tv : {g.grad_input, g.grad_weight, g.grad_bias}) {
    fusion->addOutput(tv);
  }
  auto segmented = checkedSegments(
      fusion.get(),
      {at::randn({2048, 1024}), at::randn({2048, 1024}), at::randn({2048}),
       at::rand({2048}), at::randn({1024}), at::randn({1024})});
  EXPECT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::InnerPersistent, SchedulerType::Reduction}));
}

TEST_F(SegmentationTest, MatmulThenLayerNorm) {
  std::unique_ptr<Fusion> fusion = matmulLayerNormFusion();
  auto segmented = checkedSegments(
      fusion.get(), {at::randn({256, 128}).to(at::kBFloat16),
                     at::randn({128, 512}).to(at::kBFloat16)});
  EXPECT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::Matmul, SchedulerType::InnerPersistent}));
  EXPECT_TRUE(segmented->groups()[0]->exprs()[0]->isA<MmaOp>());
}

// No scheduler takes a reshape: it is a segment of its own (ATen's view),
// between the two reduction kernels.
TEST_F(SegmentationTest, ReshapeBetweenTwoReductions) {
  std::unique_ptr<Fusion> fusion = reshapeBetweenReductionsFusion();
  auto segmented = checkedSegments(fusion.get(), {at::randn({8, 64, 32})});
  EXPECT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::Reduction, SchedulerType::ExprEval,
          SchedulerType::Reduction}));
  EXPECT_TRUE(segmented->groups()[1]->exprs()[0]->isA<ViewOp>());
}

// x * 2, then `middle`, then + 1: an op no scheduler compiles between two
// pointwise kernels. Checks the three groups and returns the kind of the
// middle one's first expr.
std::string segmentBetweenPointwise(
    const std::function<TensorView*(TensorView*)>& middle) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  TensorView* twice = mul(x, IrBuilder::create<Val>(2.0));
  fusion->addOutput(add(middle(twice), IrBuilder::create<Val>(1.0)));
  auto segmented = checkedSegments(fusion.get(), {at::randn({16, 40})});
  EXPECT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::PointWise, SchedulerType::ExprEval,
          SchedulerType::PointWise}));
  return segmented->groups().at(1)->exprs().at(0)->getOpString();
}

// No scheduler compiles a scan yet: cumsum is a segment of its own (ATen's),
// between the pointwise kernels before and after it.
TEST_F(SegmentationTest, ScanBetweenTwoPointwiseKernels) {
  EXPECT_EQ(
      segmentBetweenPointwise([](TensorView* t) { return cumsum(t, 1); }),
      "ScanOp");
}

// A slice of a computed tensor is rewritten as the computation over a
// slice of the input (transform/resize_to_inputs.h): one kernel, whose
// extents are scalar expressions of the sizes.
TEST_F(SegmentationTest, SliceOfAComputedTensorIsOneKernel) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  TensorView* twice = mul(x, IrBuilder::create<Val>(2.0));
  Val* one = IrBuilder::create<Val>(int64_t{1}, DataType::Index);
  fusion->addOutput(
      add(slice(twice, {{one, nullptr, nullptr}, {one, nullptr, nullptr}}),
          IrBuilder::create<Val>(1.0)));
  auto segmented = checkedSegments(fusion.get(), {at::randn({16, 40})});
  ASSERT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{SchedulerType::PointWise}));
  EXPECT_EQ(
      segmented->groups().at(0)->exprs().at(0)->getOpString(), "ResizeOp");
}

TEST_F(SegmentationTest, SizeUsedAcrossACutIsAScalarInput) {
  std::unique_ptr<Fusion> fusion = meanAfterCutFusion();
  auto segmented = checkedSegments(fusion.get(), {at::randn({16, 24})});
  ASSERT_EQ(segmented->groups().size(), 2u);
  const SegmentedGroup* divide = segmented->groups()[1];
  Val* row_length = segmented->completeFusion()
                        ->inputs()[0]
                        ->as<TensorView>()
                        ->axis(1)
                        ->extent();
  EXPECT_THAT(divide->inputs(), ::testing::Contains(row_length));
  // Its kernel takes the length as a parameter.
  std::unique_ptr<Fusion> part = divide->makeFusion();
  EXPECT_THAT(
      generateCudaKernel(part.get()),
      HasSubstr("nvfuser_index_t " + row_length->toString()));
}

// squeeze is a reshape: a view between the kernels before and after it.
TEST_F(SegmentationTest, SqueezeIsAViewBetweenKernels) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigConcreteTensor({-1, 1, -1});
    fusion->addInput(x);
    TensorView* squeezed = squeeze(relu(x), {1});
    fusion->addOutput(unsqueeze(sum(squeezed, {1}), 1));
  }
  auto segmented = checkedSegments(fusion.get(), {at::randn({40, 1, 300})});
  EXPECT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::PointWise, SchedulerType::ExprEval,
          SchedulerType::Reduction}));
}

// segment_set cuts even where one kernel would do.
TEST_F(SegmentationTest, SegmentSetCutsTheSegmenter) {
  std::unique_ptr<Fusion> fusion = cutPointwiseFusion();
  auto segmented = checkedSegments(fusion.get(), {at::randn({16, 24})});
  EXPECT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::PointWise, SchedulerType::PointWise}));
  EXPECT_TRUE(isSegmenterSet(segmented->groups()[0]->exprs().back()));
}

// An intermediate the user laid out transposed keeps that layout: the
// segment computing it writes it so, and the two reading it read it so.
TEST_F(SegmentationTest, IntermediateKeepsItsOwnLayout) {
  std::unique_ptr<Fusion> fusion = transposedIntermediateFusion();
  auto segmented = checkedSegments(fusion.get(), {at::randn({64, 96})});
  ASSERT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::PointWise, SchedulerType::Reduction,
          SchedulerType::Reduction}));
  auto* y = segmented->groups()[0]->outputs().at(0)->as<TensorView>();
  EXPECT_TRUE(segmented->isIntermediate(y));
  const auto& logical = y->getLogicalDomain();
  EXPECT_EQ(
      y->getAllocationDomain(),
      (std::vector<IterDomain*>{logical[1], logical[0]}));
  for (size_t g = 1; g < 3; ++g) {
    std::unique_ptr<Fusion> part = segmented->groups()[g]->makeFusion();
    auto* in = part->inputs().at(0)->as<TensorView>();
    const auto& in_logical = in->getLogicalDomain();
    EXPECT_EQ(
        in->getAllocationDomain(),
        (std::vector<IterDomain*>{in_logical[1], in_logical[0]}));
  }
}

// Random fusions of elementwise ops, broadcasts and reductions: every
// segmentation is valid, every group is a compiled kernel (each expr alone
// is one, so none may be left to ATen), and every kernel compiles.
// The attention probabilities of a transformer block
// (examples/transformer_block.py): a causal mask made by triu of a full
// tensor (two iotas, no memory), softmax and dropout, as one kernel.
TEST_F(SegmentationTest, CausalSoftmaxWithDropoutIsOneKernel) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* scores = makeContigTensor(4, DataType::BFloat16);
  Val* seed = IrBuilder::create<Val>(DataType::Int);
  Val* offset = IrBuilder::create<Val>(DataType::Int);
  fusion.addInput(scores);
  fusion.addInput(seed);
  fusion.addInput(offset);
  std::vector<Val*> shape;
  for (IterDomain* id : scores->getLogicalDomain()) {
    shape.push_back(id->extent());
  }
  auto* zero = IrBuilder::create<Val>(0.0);
  auto* one = IrBuilder::create<Val>(1.0);
  TensorView* x =
      mul(castOp(DataType::Float, scores), IrBuilder::create<Val>(0.125));
  TensorView* future = triu(full(shape, one, DataType::Float), 1);
  x = where(gt(future, zero), IrBuilder::create<Val>(-INFINITY), x);
  TensorView* e =
      exp(sub(x, broadcast(max(x, {3}), {false, false, false, true})));
  TensorView* probs =
      div(e, broadcast(sum(e, {3}), {false, false, false, true}));
  TensorView* keep =
      lt(uniform(shape, zero, one, seed, offset), IrBuilder::create<Val>(0.9));
  TensorView* dropped =
      where(keep, mul(probs, IrBuilder::create<Val>(1.0 / 0.9)), zero);
  fusion.addOutput(castOp(DataType::BFloat16, dropped));
  const auto options = at::TensorOptions().dtype(at::kBFloat16);
  auto segmented = segmentAndCompile(
      &fusion, {at::randn({2, 4, 256, 256}, options), int64_t{7}, int64_t{0}});
  EXPECT_EQ(
      schedulerTypes(*segmented),
      std::vector<SchedulerType>{SchedulerType::InnerPersistent})
      << segmented->toString();
}

// Neighbouring groups only ATen runs are one segment: a slice, the
// reshape of it and the permute of that (views of what ATen computes stay
// ATen's: segmentation/segmenter.cpp), then the relu's kernel.
TEST_F(SegmentationTest, NeighboursRunThroughATenAreOneSegment) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* qkv = makeContigTensor(3);
  fusion.addInput(qkv);
  TensorView* k = slice(
      qkv, {{nullptr, nullptr, nullptr},
            {nullptr, nullptr, nullptr},
            {IrBuilder::indexConst(64), IrBuilder::indexConst(128)}});
  TensorView* heads = reshape(k, std::vector<int64_t>{2, 8, 4, 16});
  // Computed from: views the fusion only returned would be ATen's views
  // alone (tests/cpp/test_input_views.cpp).
  fusion.addOutput(relu(permute(heads, {0, 2, 1, 3})));
  auto segmented = segmentAndCompile(&fusion, {at::randn({2, 8, 192})});
  ASSERT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::ExprEval, SchedulerType::PointWise}))
      << segmented->toString();
  EXPECT_EQ(segmented->groups()[0]->exprs().size(), 3u);
  // The view the relu's kernel reads is handed on as ATen's view of the
  // input (runtime/handed_views.h): [2, 4, 8, 16] with strides [1536, 16,
  // 192, 1], its allocation the axes by stride ([0, 2, 1, 3]), the tokens
  // 192 apart; it was laid out densely before (a copy).
  auto* handed_on = segmented->groups()[0]->outputs().at(0)->as<TensorView>();
  const auto& logical = handed_on->getLogicalDomain();
  EXPECT_EQ(
      handed_on->getMaybeAllocationDomain(),
      (std::vector<IterDomain*>{
          logical[0], logical[2], logical[1], logical[3]}));
  EXPECT_EQ(handed_on->getContiguity(), (Contiguity{true, false, true, true}));
}

// relu(linear(x, w)) of bf16 with x of rank 3, which the matmul scheduler
// declines: the product's cast back to bf16 runs in the product's ATen
// segment (one bf16 product; onlyNarrowingCast), and the relu's kernel
// reads bf16.
std::unique_ptr<Fusion> atenLinearReluFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(3, DataType::BFloat16);
  TensorView* w = makeContigTensor(2, DataType::BFloat16);
  fusion->addInput(x);
  fusion->addInput(w);
  fusion->addOutput(relu(linear(x, w)));
  return fusion;
}

TEST_F(SegmentationTest, AnAtenProductIsRoundedInItsSegment) {
  std::unique_ptr<Fusion> fusion = atenLinearReluFusion();
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16);
  auto segmented = checkedSegments(
      fusion.get(), {at::randn({2, 64, 96}, bf16), at::randn({80, 96}, bf16)});
  ASSERT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::ExprEval, SchedulerType::PointWise}))
      << segmented->toString();
  const SegmentedGroup* product = segmented->groups()[0];
  ASSERT_EQ(product->exprs().size(), 2u);
  EXPECT_TRUE(product->exprs()[0]->isA<MmaOp>());
  EXPECT_EQ(
      product->outputs().at(0)->as<TensorView>()->dtype(), DataType::BFloat16);
}

// t1 + w beside sum(expand(w, [70, n]) * 2, 1): the add has the
// reduction input's rank but not its shape ([33, 70] against [70, n]), so
// the reduction kernel does not write it (it did, and lowering failed: a
// register buffer sized by t1's row count).
TEST_F(SegmentationTest, AnOutputOfAnotherShapeStaysOutOfTheReduction) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* w = makeContigTensor(1);
    TensorView* t1 = makeContigTensor(2);
    Val* n = IrBuilder::create<Val>(DataType::Int);
    fusion->addInput(w);
    fusion->addInput(t1);
    fusion->addInput(n);
    fusion->addOutput(add(t1, broadcast(w, {true, false})));
    TensorView* wide =
        expand(broadcast(w, {false, true}), {w->axis(0)->extent(), n});
    fusion->addOutput(sum(mul(wide, IrBuilder::create<Val>(2.0)), {1}));
  }
  auto segmented = checkedSegments(
      fusion.get(), {at::randn({70}), at::randn({33, 70}), int64_t{500}});
  for (const SegmentedGroup* group : segmented->groups()) {
    if (group->schedulerType() != SchedulerType::Reduction) {
      continue;
    }
    for (Val* out : group->outputs()) {
      EXPECT_TRUE(
          out->as<TensorView>()->hasReduction() ||
          rankOf(out->as<TensorView>()) == 1)
          << group->toString();
    }
  }
}

TEST_F(SegmentationTest, RandomFusionsSegmentIntoKernels) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    RandomCase c = randomSegmentationCase(seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + c.program);
    std::vector<c10::IValue> inputs;
    for (size_t i = 0; i < c.fusion->inputs().size(); ++i) {
      inputs.emplace_back(at::randn(c.shape));
    }
    auto segmented = checkedSegments(c.fusion.get(), inputs);
    EXPECT_THAT(
        schedulerTypes(*segmented),
        ::testing::Not(::testing::Contains(SchedulerType::ExprEval)))
        << segmented->toString();
  }
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

// Uniform [0, 1) inputs: with randn, sum(x * rowsum(x), 0) cancels to
// values near 0 whose float rounding (about |x * rowsum| * eps * sqrt(rows),
// 1e-3 here) exceeds a tolerance relative to the result.
TEST_F(SegmentationGpuTest, ReductionsAlongTwoAxes) {
  FusionExecutorCache fec(twoAxesFusion());
  EXPECT_EQ(
      runOnGpu(
          fec,
          {at::rand({10, 100, 1500}, at::TensorOptions().device(at::kCUDA))},
          __LINE__),
      (std::vector<SchedulerType>{
          SchedulerType::Reduction, SchedulerType::Reduction}));
}

TEST_F(SegmentationGpuTest, TwoNormalizationsAlongDifferentAxes) {
  FusionExecutorCache fec(softmaxTwiceFusion());
  const std::vector<SchedulerType> types =
      runOnGpu(fec, {cudaRandn({512, 1000})}, __LINE__);
  // The rows' softmax is held in one persistent kernel (with the columns'
  // max when the inner-outer scheduler takes it).
  EXPECT_THAT(
      types.front(),
      ::testing::AnyOf(
          SchedulerType::InnerPersistent, SchedulerType::InnerOuterPersistent));
  EXPECT_THAT(
      types, ::testing::Not(::testing::Contains(SchedulerType::ExprEval)));
}

// The cache segments each input signature on its own: a row too large for
// one block runs as segments, a small one as one kernel, and going back
// to the large one reuses its segments.
TEST_F(SegmentationGpuTest, RowTooLargeForOneBlockFallsToSegments) {
  FusionExecutorCache fec(softmaxFusion());
  const at::Tensor large = cudaRandn({4, 1 << 18});
  EXPECT_EQ(
      runOnGpu(fec, {large}, __LINE__),
      (std::vector<SchedulerType>{
          SchedulerType::Reduction, SchedulerType::Reduction,
          SchedulerType::PointWise}));
  FusionKernelRuntime* large_runtime = fec.getMostRecentKernelRuntime();
  EXPECT_EQ(
      runOnGpu(fec, {cudaRandn({4, 1 << 10})}, __LINE__),
      std::vector<SchedulerType>{SchedulerType::InnerPersistent});
  fec.runFusionWithInputs({large});
  EXPECT_EQ(fec.getMostRecentKernelRuntime(), large_runtime);
  EXPECT_EQ(fec.numRuntimes(), 2u);
}

TEST_F(SegmentationGpuTest, MatmulThenLayerNorm) {
  FusionExecutorCache fec(matmulLayerNormFusion());
  const auto options = at::TensorOptions().device(at::kCUDA);
  EXPECT_EQ(
      runOnGpu(
          fec,
          {at::randn({512, 256}, options).to(at::kBFloat16),
           at::randn({256, 1024}, options).to(at::kBFloat16)},
          __LINE__),
      (std::vector<SchedulerType>{
          SchedulerType::Matmul, SchedulerType::InnerPersistent}));
}

TEST_F(SegmentationGpuTest, BatchNormMatchesATen) {
  const auto options = at::TensorOptions().device(at::kCUDA);
  for (BatchNormLayout layout : kBatchNormLayouts) {
    for (int64_t n : {8, 256}) {
      SCOPED_TRACE(std::string(name(layout)) + ", N " + std::to_string(n));
      FusionExecutorCache fec(batchNormFusion(layout));
      const std::vector<SchedulerType> types =
          runOnGpu(fec, batchNormInputs(layout, n, 64, 32, options), __LINE__);
      EXPECT_THAT(
          types, ::testing::Not(::testing::Contains(SchedulerType::ExprEval)));
    }
  }
}

TEST_F(SegmentationGpuTest, BatchNormBackwardMatchesATen) {
  const auto options = at::TensorOptions().device(at::kCUDA);
  for (BatchNormLayout layout : kBatchNormLayouts) {
    for (int64_t n : {8, 256}) {
      SCOPED_TRACE(std::string(name(layout)) + ", N " + std::to_string(n));
      FusionExecutorCache fec(batchNormBackwardFusion(layout));
      const std::vector<SchedulerType> types = runOnGpu(
          fec, batchNormBackwardInputs(layout, n, 64, 32, options), __LINE__);
      EXPECT_THAT(
          types, ::testing::Not(::testing::Contains(SchedulerType::ExprEval)));
    }
  }
}

TEST_F(SegmentationGpuTest, ReshapeBetweenTwoReductions) {
  FusionExecutorCache fec(reshapeBetweenReductionsFusion());
  EXPECT_EQ(
      runOnGpu(fec, {cudaRandn({8, 64, 32})}, __LINE__),
      (std::vector<SchedulerType>{
          SchedulerType::Reduction, SchedulerType::ExprEval,
          SchedulerType::Reduction}));
}

TEST_F(SegmentationGpuTest, SizeUsedAcrossACutIsAScalarInput) {
  FusionExecutorCache fec(meanAfterCutFusion());
  EXPECT_EQ(
      runOnGpu(fec, {cudaRandn({300, 700})}, __LINE__),
      (std::vector<SchedulerType>{
          SchedulerType::Reduction, SchedulerType::PointWise}));
}

TEST_F(SegmentationGpuTest, SegmentSetCutsTheSegmenter) {
  FusionExecutorCache fec(cutPointwiseFusion());
  EXPECT_EQ(
      runOnGpu(fec, {cudaRandn({300, 700})}, __LINE__),
      (std::vector<SchedulerType>{
          SchedulerType::PointWise, SchedulerType::PointWise}));
}

// The transposed intermediate is written and read in its layout, and the
// runtime frees it after the last segment that reads it.
TEST_F(SegmentationGpuTest, IntermediateKeepsItsOwnLayout) {
  FusionExecutorCache fec(transposedIntermediateFusion());
  EXPECT_EQ(
      runOnGpu(fec, {cudaRandn({300, 700})}, __LINE__),
      (std::vector<SchedulerType>{
          SchedulerType::PointWise, SchedulerType::Reduction,
          SchedulerType::Reduction}));
  const auto& segments = fec.getMostRecentKernelRuntime()->segments();
  EXPECT_TRUE(segments[1].last_reads.empty());
  ASSERT_EQ(segments[2].last_reads.size(), 1u);
  EXPECT_EQ(segments[2].last_reads[0], segments[0].output_slots[0]);
}

TEST_F(SegmentationGpuTest, AnAtenProductIsRoundedInItsSegment) {
  FusionExecutorCache fec(atenLinearReluFusion());
  const auto bf16 = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  const at::Tensor x = at::randn({2, 64, 96}, bf16);
  const at::Tensor w = at::randn({80, 96}, bf16);
  const std::vector<at::Tensor> outputs = fec.runFusionWithInputs({x, w});
  EXPECT_EQ(
      fec.getMostRecentKernelRuntime()->schedulerType(0),
      SchedulerType::ExprEval);
  const at::Tensor expected = at::relu(at::linear(x, w)).to(at::kFloat);
  EXPECT_TRUE(at::allclose(outputs.at(0).to(at::kFloat), expected, 1e-2, 1e-2));
}

// An output that is an input stays that very tensor when the fusion is
// segmented.
TEST_F(SegmentationGpuTest, OutputThatIsAnInputIsThatTensor) {
  std::unique_ptr<Fusion> fusion = twoAxesFusion();
  fusion->addOutput(fusion->inputs()[0]);
  FusionExecutorCache fec(std::move(fusion));
  // Uniform, as in ReductionsAlongTwoAxes.
  const at::Tensor x =
      at::rand({3, 100, 500}, at::TensorOptions().device(at::kCUDA));
  std::vector<at::Tensor> outputs = fec.runFusionWithInputs({x});
  EXPECT_TRUE(fec.getMostRecentKernelRuntime()->isSegmented());
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_TRUE(outputs[1].is_same(x));
  testValidate(fec.fusion(), outputs, {x}, __LINE__, __FILE__);
}

TEST_F(SegmentationGpuTest, RandomFusionsMatchATen) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    RandomCase c = randomSegmentationCase(seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + c.program);
    std::vector<c10::IValue> inputs;
    for (size_t i = 0; i < c.fusion->inputs().size(); ++i) {
      inputs.emplace_back(cudaRandn(c.shape));
    }
    FusionExecutorCache fec(std::move(c.fusion));
    EXPECT_THAT(
        runOnGpu(fec, inputs, __LINE__),
        ::testing::Not(::testing::Contains(SchedulerType::ExprEval)));
  }
}

} // namespace fuser
