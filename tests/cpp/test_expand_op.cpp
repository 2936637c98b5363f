// expand (ops/alias.h, doc/ops.md "Expand"): its IR (an ExpandOp whose
// output domain holds the sizes), its ATen evaluation against torch's
// expand, the kernels the schedulers make of fusions reading an expanded
// tensor (compiled with NVRTC), the checks of its sizes when defined and
// when run, and on the GPU results equal to ATen's.
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/aten_evaluator.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/input_binding.h>
#include <segmentation/segmented_fusion.h>
#include <tests/cpp/utils.h>
#include <transform/redundant_expands.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace fuser {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class ExpandOpTest : public FuserIrTest {};
class ExpandOpGpuTest : public FuserTest {};

namespace {

Val* indexConst(int64_t v) {
  return IrBuilder::indexConst(v);
}

// Inputs x [M, N] (contiguous, or with its rows split by 4 in the
// allocation) and w [N]; outputs x + expand(w as a row, {M, -1}) and the
// column sums of expand(w as a column, {N, n}) * 2 for a scalar input n:
// an expanded operand of a pointwise op and a reduction over an expanded
// axis.
std::unique_ptr<Fusion> rowPlusExpandedWeight(bool split_rows) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(1);
  fusion->addInput(x);
  fusion->addInput(w);
  if (split_rows) {
    auto [outer, inner] = IterDomain::split(x->axis(0), indexConst(4), true);
    x->setAllocationDomain({outer, inner, x->axis(1)}, true);
  }
  TensorView* row = broadcast(w, {true, false});
  Val* rows = x->getLogicalDomain()[0]->extent();
  fusion->addOutput(add(x, expand(row, {rows, indexConst(-1)})));
  return fusion;
}

std::unique_ptr<Fusion> sumOverExpandedAxis() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* w = makeContigTensor(1);
  Val* n = IrBuilder::create<Val>(DataType::Int);
  fusion->addInput(w);
  fusion->addInput(n);
  TensorView* column = broadcast(w, {false, true});
  TensorView* wide = expand(column, {indexConst(-1), n});
  fusion->addOutput(sum(mul(wide, IrBuilder::create<Val>(2.0)), {1}));
  return fusion;
}

// expand(w as a row, {3, -1}) as the fusion's only output.
std::unique_ptr<Fusion> expandedOutput() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* w = makeContigTensor(1);
  fusion->addInput(w);
  fusion->addOutput(
      expand(broadcast(w, {true, false}), {indexConst(3), indexConst(-1)}));
  return fusion;
}

} // namespace

TEST_F(ExpandOpTest, ExpandIsAnOpWhoseOutputHoldsTheSizes) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* w = makeContigTensor(1);
  fusion.addInput(w);
  TensorView* row = broadcast(w, {true, false});
  TensorView* wide = expand(row, {indexConst(4), indexConst(-1)});
  TensorView* same = expand(row, {indexConst(1), indexConst(-1)});
  fusion.addOutput(wide);
  fusion.addOutput(same);

  ASSERT_NE(wide->definition(), nullptr);
  EXPECT_TRUE(wide->definition()->isA<ExpandOp>());
  const auto& ids = wide->getLogicalDomain();
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0]->getIterType(), IterType::Iteration);
  ASSERT_TRUE(ids[0]->extent()->isConstInt());
  EXPECT_EQ(ids[0]->extent()->constIntValue(), 4);
  EXPECT_EQ(ids[1]->extent(), w->getLogicalDomain()[0]->extent());
  // Expanding a broadcast to 1 keeps it a broadcast.
  EXPECT_TRUE(same->getLogicalDomain()[0]->isBroadcast());
  EXPECT_THAT(wide->definition()->toString(), HasSubstr("= expand(T"));
  // The producer's broadcast axis maps to the expanded one, as an add's.
  const auto pairs = wide->definition()->mappedAxes(row);
  EXPECT_EQ(pairs.size(), 2u);

  // A copy of the fusion keeps the op.
  Fusion copy;
  Fusion::copy(&fusion, &copy);
  EXPECT_TRUE(copy.outputs()[0]->definition()->isA<ExpandOp>());
}

TEST_F(ExpandOpTest, AtenEvaluationEqualsTorch) {
  const at::Tensor x = at::randn({6, 5});
  const at::Tensor w = at::randn({5});
  {
    std::unique_ptr<Fusion> fusion = rowPlusExpandedWeight(false);
    const auto out = evaluateFusionWithATen(fusion.get(), {x, w});
    EXPECT_TRUE(at::allclose(out[0], x + w.expand({6, 5})));
  }
  {
    std::unique_ptr<Fusion> fusion = sumOverExpandedAxis();
    const auto out = evaluateFusionWithATen(fusion.get(), {w, int64_t{7}});
    EXPECT_TRUE(
        at::allclose(out[0], (w.unsqueeze(1).expand({5, 7}) * 2.0).sum({1})));
  }
  {
    std::unique_ptr<Fusion> fusion = expandedOutput();
    const auto out = evaluateFusionWithATen(fusion.get(), {w});
    EXPECT_TRUE(at::equal(out[0], w.expand({3, 5})));
    // Written in full, as a kernel writes it (doc/ops.md "Expand").
    EXPECT_TRUE(out[0].is_contiguous());
  }
}

// An expanded operand is read like any broadcast operand: one pointwise
// kernel for every layout of the other input, w read once per column.
TEST_F(ExpandOpTest, ExpandedOperandsAreReadInOneKernel) {
  for (bool split_rows : {false, true}) {
    SCOPED_TRACE(split_rows ? "rows split by 4" : "contiguous");
    std::unique_ptr<Fusion> fusion = rowPlusExpandedWeight(split_rows);
    const CompiledSchedule s =
        scheduleAndCompile(*fusion, {at::randn({64, 96}), at::randn({96})});
    EXPECT_EQ(s.type, SchedulerType::PointWise);
  }
  {
    std::unique_ptr<Fusion> fusion = expandedOutput();
    const CompiledSchedule s = scheduleAndCompile(*fusion, {at::randn({96})});
    EXPECT_EQ(s.type, SchedulerType::PointWise);
  }
  {
    std::unique_ptr<Fusion> fusion = sumOverExpandedAxis();
    const CompiledSchedule s =
        scheduleAndCompile(*fusion, {at::randn({96}), int64_t{1000}});
    EXPECT_EQ(s.type, SchedulerType::Reduction);
  }
}

// Before and after transform/redundant_expands.h: the add that joins the
// expanded axis with x's reads the broadcast; the relu, which nothing
// else joins, keeps reading the expand.
TEST_F(ExpandOpTest, ExpandsJoinedByAnotherOperandAreBypassed) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(1);
  fusion.addInput(x);
  fusion.addInput(w);
  TensorView* row = broadcast(w, {true, false});
  Val* rows = x->getLogicalDomain()[0]->extent();
  TensorView* wide = expand(row, {rows, indexConst(-1)});
  TensorView* sum_out = add(x, wide);
  TensorView* relu_out = relu(wide);
  fusion.addOutput(sum_out);
  fusion.addOutput(relu_out);
  ASSERT_EQ(sum_out->definition()->input(1), wide);

  EXPECT_EQ(bypassRedundantExpands(&fusion), 1);
  EXPECT_EQ(sum_out->definition()->input(1), row);
  EXPECT_EQ(relu_out->definition()->input(0), wide);
  ASSERT_EQ(wide->uses().size(), 1u);

  // Once the relu is gone, nothing reads the expand: it leaves the exprs.
  Fusion alone;
  FusionGuard fg2(&alone);
  TensorView* a = makeContigTensor(2);
  TensorView* v = makeContigTensor(1);
  alone.addInput(a);
  alone.addInput(v);
  TensorView* b = broadcast(v, {true, false});
  alone.addOutput(
      mul(expand(b, {a->getLogicalDomain()[0]->extent(), indexConst(-1)}), a));
  EXPECT_EQ(bypassRedundantExpands(&alone), 1);
  for (Expr* expr : alone.exprs()) {
    EXPECT_FALSE(expr->isA<ExpandOp>());
  }
}

TEST_F(ExpandOpTest, BadExtentsAreUserErrors) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeConcreteTensor({3, 1});
  fusion.addInput(x);
  EXPECT_THAT(
      [&] { expand(x, {indexConst(3)}); },
      ThrowsMessage<UserError>(
          HasSubstr("needs one extent per axis (2), got 1. To add axes, "
                    "broadcast first.")));
  EXPECT_THAT(
      [&] {
        expand(x, {indexConst(4), indexConst(2)});
      },
      ThrowsMessage<UserError>(
          HasSubstr("axis 0 has size 3 and cannot be expanded to 4; only "
                    "broadcast axes (size 1) expand")));
  EXPECT_THAT(
      [&] {
        expand(x, {indexConst(3), indexConst(-2)});
      },
      ThrowsMessage<UserError>(HasSubstr("extent -2 for axis 1 is negative")));
  EXPECT_THAT(
      [&] {
        expand(x, {indexConst(3), IrBuilder::create<Val>(2.5)});
      },
      ThrowsMessage<UserError>(
          HasSubstr("extent 1 must be an integer scalar")));
  // The fusion is still usable.
  fusion.addOutput(expand(x, {indexConst(3), indexConst(8)}));
  EXPECT_EQ(fusion.outputs().size(), 1u);
}

// As torch, an axis of size 1 that is not a broadcast axis (here a
// reshape's) expands: it becomes a broadcast axis first.
TEST_F(ExpandOpTest, SizeOneAxesOfAReshapeExpand) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  TensorView* viewed = reshape(x, std::vector<int64_t>{1, 4, 1, 6});
  ASSERT_FALSE(viewed->axis(0)->isBroadcast());
  TensorView* expanded = expand(
      viewed, {indexConst(2), indexConst(-1), indexConst(3), indexConst(-1)});
  fusion->addOutput(expanded);
  const at::Tensor in = at::randn({4, 6});
  const auto out = evaluateFusionWithATen(fusion.get(), {in});
  EXPECT_TRUE(at::equal(out[0], in.reshape({1, 4, 1, 6}).expand({2, 4, 3, 6})));
}

// A size given to expand as a scalar input is checked against the axes
// the fusion joins to it when the fusion runs.
TEST_F(ExpandOpTest, SizesGivenAtRunTimeMustAgreeWithTheJoinedAxes) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(1);
  Val* n = IrBuilder::create<Val>(DataType::Int);
  fusion.addInput(x);
  fusion.addInput(w);
  fusion.addInput(n);
  fusion.addOutput(
      add(x, expand(broadcast(w, {true, false}), {n, indexConst(-1)})));
  const std::vector<c10::IValue> bad = {
      at::randn({4, 8}), at::randn({8}), int64_t{3}};
  ExpressionEvaluator ee;
  bindFusionInputs(&fusion, bad, ee, /*require_cuda=*/false);
  EXPECT_THAT(
      [&] { checkJoinedInputExtents(&fusion, ee); },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("The expanded T"), HasSubstr("has size 3 along axis 0"),
          HasSubstr("input 0 (T0"), HasSubstr("has size 4 along axis 0"))));
  const std::vector<c10::IValue> good = {
      at::randn({4, 8}), at::randn({8}), int64_t{4}};
  ExpressionEvaluator ee_good;
  bindFusionInputs(&fusion, good, ee_good, /*require_cuda=*/false);
  EXPECT_NO_THROW(checkJoinedInputExtents(&fusion, ee_good));
}

// A size given to expand as a scalar input is read by no expr, only by the
// expanded axis: the segment computing on that axis still takes the scalar
// as an input (its kernel needs the extent).
TEST_F(ExpandOpTest, SizesGivenToExpandAreSegmentInputs) {
  std::unique_ptr<Fusion> fusion = sumOverExpandedAxis();
  SegmentedFusion segmented(fusion.get());
  ASSERT_EQ(segmented.groups().size(), 1u);
  const std::vector<Val*>& inputs = segmented.groups()[0]->inputs();
  Val* n = segmented.completeFusion()->inputs()[1];
  EXPECT_NE(std::find(inputs.begin(), inputs.end(), n), inputs.end());
}

TEST_F(ExpandOpGpuTest, ExpandedTensorsEqualTorchs) {
  const auto options = at::TensorOptions().device(at::kCUDA);
  const at::Tensor x = at::randn({132, 260}, options);
  const at::Tensor w = at::randn({260}, options);
  for (bool split_rows : {false, true}) {
    std::unique_ptr<Fusion> fusion = rowPlusExpandedWeight(split_rows);
    Fusion* raw = fusion.get();
    FusionExecutorCache fec(std::move(fusion));
    const auto out = fec.runFusionWithInputs({x, w});
    testValidate(raw, out, {x, w}, __LINE__, __FILE__);
  }
  {
    std::unique_ptr<Fusion> fusion = sumOverExpandedAxis();
    FusionExecutorCache fec(std::move(fusion));
    const auto out = fec.runFusionWithInputs({w, int64_t{3000}});
    EXPECT_TRUE(at::allclose(out[0], w * 6000.0, /*rtol=*/1e-5, /*atol=*/1e-3));
    EXPECT_EQ(
        fec.getMostRecentKernelRuntime()
            ->fusionSegments()
            ->groups()[0]
            ->schedulerType(),
        SchedulerType::Reduction);
  }
  {
    std::unique_ptr<Fusion> fusion = expandedOutput();
    FusionExecutorCache fec(std::move(fusion));
    const auto out = fec.runFusionWithInputs({w});
    EXPECT_TRUE(at::equal(out[0], w.expand({3, 260})));
  }
}

} // namespace fuser
