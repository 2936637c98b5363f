// Views between a transformer's products and its kernels (doc/segmentation.md
// §2, doc/ops.md "Slicing, padding and concatenation"):
// - a permute read only by an ATen product joins the product's segment as
//   ATen's view (cuBLAS reads the operand transposed): no copy kernel for a
//   weight gradient's transposed operand or a head merge;
// - slices of a product's heads (a rotary embedding of q and k) are read in
//   place by one kernel per head tensor, through reshapes and permutes that
//   read in memory order.
#include <codegen/codegen.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/aten_evaluator.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/nvrtc_compile.h>
#include <scheduler/registry.h>
#include <segmentation/preseg_passes.h>
#include <tests/cpp/segmentation_harness.h>
#include <tests/cpp/utils.h>
#include <transform/resize_to_inputs.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace fuser {

class SegmentationViewsTest : public FuserIrTest {};
class SegmentationViewsGpuTest : public FuserTest {};

namespace {

Val* idx(int64_t v) {
  return IrBuilder::create<Val>(v, DataType::Index);
}

// The ops of each group, by getOpString, in group order.
std::vector<std::vector<std::string>> groupOps(const SegmentedFusion& s) {
  std::vector<std::vector<std::string>> ops;
  for (const SegmentedGroup* group : s.groups()) {
    ops.emplace_back();
    for (Expr* expr : group->exprs()) {
      ops.back().push_back(expr->getOpString());
    }
  }
  return ops;
}

// tv [.., .., .., D] sliced to [start, stop) along its last axis.
TensorView* lastAxisPart(TensorView* tv, int64_t start, int64_t stop) {
  std::vector<SliceRange> ranges(3, SliceRange{nullptr, nullptr, nullptr});
  ranges.push_back({idx(start), idx(stop)});
  return slice(tv, ranges);
}

// A bf16 [B, H, S, D] of heads laid out [B, S, H, D] (as a head split of a
// projection leaves them, or attention's backward hands them on).
TensorView* headsLaidOutBshd() {
  TensorView* tv = makeContigTensor(4, DataType::BFloat16);
  tv->setAllocationDomain(
      {tv->axis(0), tv->axis(2), tv->axis(1), tv->axis(3)}, true);
  return tv;
}

// grad^T . x over all tokens of bf16 grad [B, S, N] and x [B, S, K] (a
// linear layer's weight gradient, [N, K], as the decoder block's backward
// writes it): the transposed gradient is only the product's operand.
std::unique_ptr<Fusion> weightGradientFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* grad = makeContigTensor(3, DataType::BFloat16);
  TensorView* x = makeContigTensor(3, DataType::BFloat16);
  fusion->addInput(grad);
  fusion->addInput(x);
  TensorView* rows =
      permute(reshape(grad, std::vector<int64_t>{96, 48}), {1, 0});
  TensorView* product = matmul(rows, reshape(x, std::vector<int64_t>{96, 80}));
  fusion->addOutput(castOp(
      DataType::BFloat16,
      add(castOp(DataType::Float, product), IrBuilder::create<Val>(1.0))));
  return fusion;
}

// The heads of an attention output [B, H, S, D], laid out [B, S, H, D],
// merged to [B, S, H * D] and projected by w [E, H * D] (bf16).
std::unique_ptr<Fusion> headMergeFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* attn = headsLaidOutBshd();
  TensorView* w = makeContigTensor(2, DataType::BFloat16);
  fusion->addInput(attn);
  fusion->addInput(w);
  TensorView* merged =
      reshape(permute(attn, {0, 2, 1, 3}), std::vector<int64_t>{2, 16, 64});
  fusion->addOutput(relu(linear(merged, w)));
  return fusion;
}

at::Tensor bshd(int64_t b, int64_t h, int64_t s, int64_t d, at::Device dev) {
  return at::randn({b, s, h, d}, at::TensorOptions().device(dev))
      .to(at::kBFloat16)
      .transpose(1, 2);
}

// x [B, S, E] projected to q, k, v by w [3E, E] (bf16, rank 3: ATen's
// product); q and k rotated as rotary embeddings do, in float:
// q * cos + cat(-q[..., D/2:], q[..., :D/2]) * sin per head of D = 16.
std::unique_ptr<Fusion> rotaryQkvFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(3, DataType::BFloat16);
  TensorView* w = makeContigTensor(2, DataType::BFloat16);
  TensorView* cos = makeContigTensor(2, DataType::BFloat16);
  TensorView* sin = makeContigTensor(2, DataType::BFloat16);
  for (TensorView* tv : {x, w, cos, sin}) {
    fusion->addInput(tv);
  }
  TensorView* qkv = linear(x, w);
  auto table = [](TensorView* t) {
    return broadcast(castOp(DataType::Float, t), {true, false, true, false});
  };
  for (int64_t part = 0; part < 3; ++part) {
    TensorView* y = slice(
        qkv, {{nullptr, nullptr, nullptr},
              {nullptr, nullptr, nullptr},
              {idx(64 * part), idx(64 * (part + 1))}});
    y = reshape(y, std::vector<int64_t>{2, 8, 4, 16});
    if (part < 2) {
      TensorView* f = castOp(DataType::Float, y);
      TensorView* rotated =
          cat({neg(lastAxisPart(f, 8, 16)), lastAxisPart(f, 0, 8)}, 3);
      y = castOp(
          DataType::BFloat16,
          add(mul(f, table(cos)), mul(rotated, table(sin))));
    }
    fusion->addOutput(permute(y, {0, 2, 1, 3}));
  }
  return fusion;
}

std::vector<c10::IValue> rotaryQkvInputs(at::Device dev) {
  const auto bf16 = at::TensorOptions().device(dev).dtype(at::kBFloat16);
  return {
      at::randn({2, 8, 64}, bf16), at::randn({192, 64}, bf16),
      at::randn({8, 16}, bf16), at::randn({8, 16}, bf16)};
}

} // namespace

// Before: a PointWise kernel copied the transposed gradient, and ATen's
// product read the copy. Now the permute is in the product's segment.
TEST_F(SegmentationViewsTest, TransposedOperandOfAnAtenProductIsAView) {
  std::unique_ptr<Fusion> fusion = weightGradientFusion();
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16);
  auto segmented = checkedSegments(
      fusion.get(),
      {at::randn({2, 48, 48}, bf16), at::randn({2, 48, 80}, bf16)});
  ASSERT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::ExprEval, SchedulerType::PointWise}))
      << segmented->toString();
  const std::vector<std::string> product = groupOps(*segmented)[0];
  EXPECT_EQ(std::count(product.begin(), product.end(), "LoadStoreOp"), 1)
      << segmented->toString();
}

// The merged heads are a view of the attention output's memory: no kernel
// before the projection.
TEST_F(SegmentationViewsTest, HeadMergeBeforeAnAtenProductIsAView) {
  std::unique_ptr<Fusion> fusion = headMergeFusion();
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16);
  auto segmented = checkedSegments(
      fusion.get(), {bshd(2, 4, 16, 16, at::kCPU), at::randn({32, 64}, bf16)});
  ASSERT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::ExprEval, SchedulerType::PointWise}))
      << segmented->toString();
}

// ATen evaluates a permute inside a segment as a view; the values equal
// those of the dense copy (the tests' reference).
TEST_F(SegmentationViewsTest, PermutedViewsEvaluateAsCopies) {
  std::unique_ptr<Fusion> fusion = weightGradientFusion();
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16);
  const std::vector<c10::IValue> inputs = {
      at::randn({2, 48, 48}, bf16), at::randn({2, 48, 80}, bf16)};
  ExpressionEvaluator views_ee;
  ExpressionEvaluator copies_ee;
  const at::Tensor viewed = evaluateFusionWithATen(
      fusion.get(), inputs, views_ee, AtenViews::Alias)[0];
  const at::Tensor copied = evaluateFusionWithATen(
      fusion.get(), inputs, copies_ee, AtenViews::Materialize)[0];
  EXPECT_TRUE(at::equal(viewed, copied));
}

// Before: per rotated head tensor, a kernel cast it to float, an ATen
// slice and a kernel took its halves, and a kernel rotated them (four
// segments, three float tensors between them). Now each is one kernel
// that reads the product's heads in place, at three offsets, and v's
// heads are the product segment's output: ExprEval and two kernels.
TEST_F(SegmentationViewsTest, RotaryEmbeddingOfAProductsHeadsIsOneKernel) {
  std::unique_ptr<Fusion> fusion = rotaryQkvFusion();
  auto segmented = checkedSegments(fusion.get(), rotaryQkvInputs(at::kCPU));
  ASSERT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::ExprEval, SchedulerType::PointWise,
          SchedulerType::PointWise}))
      << segmented->toString();
  for (const auto& ops : groupOps(*segmented)) {
    if (std::count(ops.begin(), ops.end(), "MmaOp") > 0) {
      continue;
    }
    // Pads of the kernel's input, no slice or cat of a computed tensor.
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "CatOp"), 0);
    for (const std::string& op : ops) {
      EXPECT_NE(op, "MmaOp");
    }
  }
}

namespace {

// g + cat(2g[..., 64:], -2g[..., :64]) with g = permute(x, [0, 2, 1, 3])
// (heads of 128).
void addRotationOfPermuted(Fusion& fusion, TensorView* x) {
  TensorView* g = castOp(DataType::Float, permute(x, {0, 2, 1, 3}));
  TensorView* twice = mul(g, IrBuilder::create<Val>(2.0));
  TensorView* first = lastAxisPart(twice, 0, 64);
  TensorView* second = lastAxisPart(twice, 64, 128);
  fusion.addOutput(
      castOp(DataType::BFloat16, add(g, cat({second, neg(first)}, 3))));
}

} // namespace

// A permute that transposes what it reads stays: a kernel that reads a
// transposed input through shifted reads fails to lower
// (transform/resize_to_inputs.cpp, readsInMemoryOrder).
TEST_F(SegmentationViewsTest, RotationOfATransposedInputIsNotRewritten) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(4);
  fusion.addInput(x);
  addRotationOfPermuted(fusion, x);
  EXPECT_EQ(resizesToInputs(&fusion), 0);
}

// The heads' gradient of a rotation, laid out [B, S, H, D] and read so
// (as attention's backward hands it on): the slices are rewritten through
// the permute into pads of the input, one kernel (compiled with NVRTC).
std::unique_ptr<Fusion> rotationOfPermutedHeadsFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = headsLaidOutBshd();
  fusion->addInput(x);
  addRotationOfPermuted(*fusion, x);
  return fusion;
}

TEST_F(SegmentationViewsTest, RotationOfPermutedHeadsIsOneKernel) {
  std::unique_ptr<Fusion> fusion = rotationOfPermutedHeadsFusion();
  auto segmented =
      checkedSegments(fusion.get(), {bshd(2, 4, 16, 128, at::kCPU)});
  ASSERT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{SchedulerType::PointWise}))
      << segmented->toString();
  for (Expr* expr : segmented->groups()[0]->exprs()) {
    if (auto* resize = dynamic_cast<ResizeOp*>(expr)) {
      EXPECT_TRUE(resize->tensors()[0]->isFusionInput()) << expr->toString();
    }
  }
}

// ---- On the GPU, against ATen.

TEST_F(SegmentationViewsGpuTest, TransposedOperandOfAnAtenProduct) {
  FusionExecutorCache fec(weightGradientFusion());
  const auto bf16 = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  EXPECT_EQ(
      runOnGpu(
          fec, {at::randn({2, 48, 48}, bf16), at::randn({2, 48, 80}, bf16)},
          __LINE__),
      (std::vector<SchedulerType>{
          SchedulerType::ExprEval, SchedulerType::PointWise}));
}

TEST_F(SegmentationViewsGpuTest, HeadMergeBeforeAnAtenProduct) {
  FusionExecutorCache fec(headMergeFusion());
  const auto bf16 = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  EXPECT_EQ(
      runOnGpu(
          fec, {bshd(2, 4, 16, 16, at::kCUDA), at::randn({32, 64}, bf16)},
          __LINE__),
      (std::vector<SchedulerType>{
          SchedulerType::ExprEval, SchedulerType::PointWise}));
}

TEST_F(SegmentationViewsGpuTest, RotationOfPermutedHeads) {
  FusionExecutorCache fec(rotationOfPermutedHeadsFusion());
  EXPECT_EQ(
      runOnGpu(fec, {bshd(2, 4, 16, 128, at::kCUDA)}, __LINE__),
      (std::vector<SchedulerType>{SchedulerType::PointWise}));
}

TEST_F(SegmentationViewsGpuTest, RotaryEmbeddingOfAProductsHeads) {
  FusionExecutorCache fec(rotaryQkvFusion());
  EXPECT_EQ(
      runOnGpu(fec, rotaryQkvInputs(at::kCUDA), __LINE__),
      (std::vector<SchedulerType>{
          SchedulerType::ExprEval, SchedulerType::PointWise,
          SchedulerType::PointWise}));
}

} // namespace fuser
