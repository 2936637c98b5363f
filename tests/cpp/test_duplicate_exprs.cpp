// transform/duplicate_exprs.h: what a segment computes twice (input
// forwarding's copies of a chain, landed in one segment) is computed once.
#include <transform/duplicate_exprs.h>

#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/segment_scheduling.h>
#include <segmentation/segmented_fusion.h>
#include <tests/cpp/segmentation_harness.h>
#include <tests/cpp/utils.h>
#include <transform/input_forwarding.h>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace fuser {

using DuplicateExprsTest = FuserIrTest;
using DuplicateExprsGpuTest = FuserTest;

namespace {

int64_t countUnary(Fusion* fusion, UnaryOpType type) {
  int64_t count = 0;
  for (Expr* expr : fusion->exprs()) {
    auto* uop = dynamic_cast<UnaryOp*>(expr);
    count += uop != nullptr && uop->opType() == type ? 1 : 0;
  }
  return count;
}

} // namespace

// Before: two casts of x and two sigmoids of them. After: one of each,
// which both readers of the sigmoid read.
TEST_F(DuplicateExprsTest, CopiesOfAChainMergeLinkByLink) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2, DataType::BFloat16);
  fusion.addInput(x);
  TensorView* s1 = sigmoid(castOp(DataType::Float, x));
  TensorView* s2 = sigmoid(castOp(DataType::Float, x));
  TensorView* out = add(mul(s1, s1), s2);
  fusion.addOutput(out);
  EXPECT_EQ(countUnary(&fusion, UnaryOpType::Sigmoid), 2);

  EXPECT_EQ(mergeDuplicateExprs(&fusion), 2);
  EXPECT_EQ(countUnary(&fusion, UnaryOpType::Sigmoid), 1);
  EXPECT_EQ(countUnary(&fusion, UnaryOpType::Cast), 1);
  EXPECT_EQ(out->definition()->input(1), s1);
  EXPECT_TRUE(s2->uses().empty());
  EXPECT_EQ(mergeDuplicateExprs(&fusion), 0);
}

// Constants are compared by value (two 1.0 are one); another op, another
// constant, another cast type or another broadcast is another value.
TEST_F(DuplicateExprsTest, OnlyTheSameComputationMerges) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  TensorView* a = add(x, IrBuilder::create<Val>(1.0));
  TensorView* same = add(x, IrBuilder::create<Val>(1.0));
  TensorView* other_constant = add(x, IrBuilder::create<Val>(2.0));
  TensorView* other_op = mul(x, IrBuilder::create<Val>(1.0));
  TensorView* half = castOp(DataType::Half, x);
  TensorView* bf16 = castOp(DataType::BFloat16, x);
  TensorView* row = broadcast(sum(x, {1}), {false, true});
  TensorView* column = broadcast(sum(x, {1}), {true, false});
  TensorView* out =
      add(add(add(a, same), add(other_constant, other_op)),
          add(add(castOp(DataType::Float, half), castOp(DataType::Float, bf16)),
              add(row, column)));
  fusion.addOutput(out);

  // The second add and the second sum (the same reduction is no pointwise
  // expr: kept) aside, nothing merges.
  EXPECT_EQ(mergeDuplicateExprs(&fusion), 1);
  EXPECT_TRUE(same->uses().empty());
  EXPECT_FALSE(other_constant->uses().empty());
  EXPECT_FALSE(other_op->uses().empty());
  EXPECT_FALSE(bf16->uses().empty());
  EXPECT_FALSE(column->uses().empty());
}

// A copy the fusion returns is written: it stays.
TEST_F(DuplicateExprsTest, ReturnedCopiesStay) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(1);
  fusion.addInput(x);
  TensorView* e1 = exp(x);
  TensorView* e2 = exp(x);
  fusion.addOutput(add(e1, x));
  fusion.addOutput(e2);
  EXPECT_EQ(mergeDuplicateExprs(&fusion), 0);
  EXPECT_EQ(e2->definition()->input(0), x);
}

namespace {

// A SwiGLU backward beside an ATen product: d = linear(dy, w) (rank 3:
// ATen's), then
// d_up = d * g * sigmoid(g) and d_gate = d * u * s * (1 + g * (1 - s)),
// s = sigmoid(g) (bf16 in and out). The product makes several segments,
// so input forwarding copies the chains of g for each reader.
std::unique_ptr<Fusion> swigluBackwardFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* dy = makeContigTensor(3, DataType::BFloat16);
  TensorView* w = makeContigTensor(2, DataType::BFloat16);
  TensorView* g_in = makeContigTensor(3, DataType::BFloat16);
  TensorView* u_in = makeContigTensor(3, DataType::BFloat16);
  for (TensorView* tv : {dy, w, g_in, u_in}) {
    fusion->addInput(tv);
  }
  TensorView* d = castOp(DataType::Float, linear(dy, w));
  TensorView* g = castOp(DataType::Float, g_in);
  TensorView* s = sigmoid(g);
  Val* one = IrBuilder::create<Val>(1.0);
  fusion->addOutput(castOp(DataType::BFloat16, mul(d, mul(g, s))));
  TensorView* slope = mul(s, add(mul(g, sub(one, s)), one));
  fusion->addOutput(castOp(
      DataType::BFloat16, mul(mul(d, castOp(DataType::Float, u_in)), slope)));
  return fusion;
}

std::vector<c10::IValue> swigluBackwardInputs(at::Device device) {
  const auto bf16 = at::TensorOptions().device(device).dtype(at::kBFloat16);
  return {
      at::randn({2, 128, 64}, bf16), at::randn({512, 64}, bf16),
      at::randn({2, 128, 512}, bf16), at::randn({2, 128, 512}, bf16)};
}

} // namespace

// Before: the kernel's fusion held three sigmoids of three casts of g
// (input forwarding's copies, all in the one pointwise segment). Now one.
TEST_F(DuplicateExprsTest, ASegmentComputesEachSigmoidOnce) {
  std::unique_ptr<Fusion> fusion = swigluBackwardFusion();
  auto segmented =
      checkedSegments(fusion.get(), swigluBackwardInputs(at::kCPU));
  int64_t pointwise = 0;
  for (SegmentedGroup* group : segmented->groups()) {
    if (group->schedulerType() != SchedulerType::PointWise) {
      continue;
    }
    ++pointwise;
    std::unique_ptr<Fusion> part = group->makeFusion();
    EXPECT_EQ(countUnary(part.get(), UnaryOpType::Sigmoid), 1)
        << part->mathToString();
  }
  EXPECT_EQ(pointwise, 1) << segmented->toString();
  // The complete fusion keeps the copies (other segments read them).
  EXPECT_GT(countUnary(segmented->completeFusion(), UnaryOpType::Sigmoid), 1);
}

TEST_F(DuplicateExprsGpuTest, SwigluBackwardMatchesATen) {
  FusionExecutorCache fec(swigluBackwardFusion());
  runOnGpu(fec, swigluBackwardInputs(at::kCUDA), __LINE__);
}

} // namespace fuser
