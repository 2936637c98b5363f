// The library ops (ops/external.h: topk, argsort, grouped_mm, embedding,
// flash attention forward and backward), which run with ATen's kernels in
// a segment of their own; the data-only types they pass around (uint64,
// packed fp4); and the per-run options (base/options.h ScopedOptions).
// CPU: shapes, types, errors, the ATen evaluation against values known by
// construction, the schedulers' choice. GPU: fusions around the ops
// through FusionExecutorCache against torch.
#include <base/options.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/aten_evaluator.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/fusion_kernel_runtime.h>
#include <runtime/input_binding.h>
#include <scheduler/registry.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace fuser {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class LibraryOpsTest : public FuserIrTest {};
class LibraryOpsGpuTest : public FuserTest {};

namespace {

std::vector<int64_t> extents(TensorView* tv) {
  std::vector<int64_t> sizes;
  for (IterDomain* id : TensorDomain::noReductions(tv->getLogicalDomain())) {
    sizes.push_back(
        id->extent()->isConstInt() ? id->extent()->constIntValue() : -1);
  }
  return sizes;
}

Val* constant(int64_t v) {
  return IrBuilder::create<Val>(v, DataType::Int);
}

Val* constant(double v) {
  return IrBuilder::create<Val>(v, DataType::Double);
}

Val* constant(bool v) {
  return IrBuilder::create<Val>(v, DataType::Bool);
}

} // namespace

TEST_F(LibraryOpsTest, ShapesAndTypesFollowPyTorch) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigConcreteTensor({4, 6, 5});
  const TopKResult top = topk(x, constant(int64_t{3}), 1);
  EXPECT_EQ(extents(top.values), (std::vector<int64_t>{4, 3, 5}));
  EXPECT_EQ(top.values->dtype(), DataType::Float);
  EXPECT_EQ(top.indices->dtype(), DataType::Int);
  EXPECT_EQ(top.values->definition(), top.indices->definition());
  EXPECT_EQ(
      top.values->definition()->as<ExternalOp>()->opType(),
      ExternalOpType::TopK);
  EXPECT_EQ(extents(argsort(x, -1)), (std::vector<int64_t>{4, 6, 5}));
  EXPECT_EQ(argsort(x, -1)->dtype(), DataType::Int);

  TensorView* a2 = makeContigConcreteTensor({8, 16}, DataType::BFloat16);
  TensorView* b2 = makeContigConcreteTensor({16, 32}, DataType::BFloat16);
  TensorView* b3 = makeContigConcreteTensor({3, 16, 32}, DataType::BFloat16);
  TensorView* a3 = makeContigConcreteTensor({3, 8, 16}, DataType::BFloat16);
  TensorView* offsets = makeContigConcreteTensor({3}, DataType::Int32);
  EXPECT_EQ(
      extents(groupedMm(a2, b2, offsets)), (std::vector<int64_t>{3, 8, 32}));
  EXPECT_EQ(extents(groupedMm(a2, b3, offsets)), (std::vector<int64_t>{8, 32}));
  EXPECT_EQ(extents(groupedMm(a3, b2, offsets)), (std::vector<int64_t>{8, 32}));
  EXPECT_EQ(
      extents(groupedMm(a3, b3, nullptr)), (std::vector<int64_t>{3, 8, 32}));

  TensorView* ids = makeContigConcreteTensor({2, 7}, DataType::Int);
  TensorView* weight = makeContigConcreteTensor({10, 4});
  TensorView* rows = embedding(ids, weight);
  EXPECT_EQ(extents(rows), (std::vector<int64_t>{2, 7, 4}));
  EXPECT_EQ(rows->dtype(), DataType::Float);

  TensorView* q = makeContigConcreteTensor({2, 4, 9, 16}, DataType::Half);
  TensorView* k = makeContigConcreteTensor({2, 4, 11, 16}, DataType::Half);
  TensorView* v = makeContigConcreteTensor({2, 4, 11, 8}, DataType::Half);
  const SdpaForwardResult fwd =
      sdpfaForward(q, k, v, constant(0.0), constant(false));
  EXPECT_EQ(extents(fwd.output), (std::vector<int64_t>{2, 4, 9, 8}));
  EXPECT_EQ(fwd.output->dtype(), DataType::Half);
  EXPECT_EQ(extents(fwd.logsumexp), (std::vector<int64_t>{2, 4, 9}));
  EXPECT_EQ(fwd.logsumexp->dtype(), DataType::Float);
  EXPECT_EQ(extents(fwd.philox_seed), (std::vector<int64_t>{2}));
  EXPECT_EQ(fwd.philox_seed->dtype(), DataType::UInt64);
  EXPECT_TRUE(extents(fwd.philox_offset).empty());
  const SdpaBackwardResult bwd = sdpfaBackward(
      fwd.output, q, k, v, fwd.output, fwd.logsumexp, constant(0.0),
      constant(false), fwd.philox_seed, fwd.philox_offset, constant(0.25));
  EXPECT_EQ(extents(bwd.grad_k), (std::vector<int64_t>{2, 4, 11, 16}));
  EXPECT_EQ(extents(bwd.grad_v), (std::vector<int64_t>{2, 4, 11, 8}));
  EXPECT_THAT(bwd.grad_q->definition()->toString(), HasSubstr("sdpfa_bwd("));
}

TEST_F(LibraryOpsTest, BadArgumentsAreUserErrors) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  EXPECT_THAT(
      [&]() { topk(x, constant(1.5), 0); },
      ThrowsMessage<UserError>(HasSubstr("topk: k must be an integer")));
  EXPECT_THAT(
      [&]() { argsort(x, 2); },
      ThrowsMessage<UserError>(HasSubstr("dim 2 is out of range")));
  EXPECT_THAT(
      [&]() { groupedMm(x, makeContigTensor(2), nullptr); },
      ThrowsMessage<UserError>(HasSubstr("need the offsets of the groups")));
  EXPECT_THAT(
      [&]() { groupedMm(x, makeContigTensor(1), nullptr); },
      ThrowsMessage<UserError>(HasSubstr("must have rank 2 or 3")));
  EXPECT_THAT(
      [&]() { embedding(makeContigTensor(1), x); },
      ThrowsMessage<UserError>(HasSubstr("indices must be integers")));
  TensorView* f = makeContigTensor(4);
  EXPECT_THAT(
      [&]() { sdpfaForward(f, f, f, constant(0.0), constant(false)); },
      ThrowsMessage<UserError>(
          HasSubstr("flash attention takes half or bfloat16 tensors")));
  // The fusion stays usable.
  fusion.addInput(x);
  fusion.addOutput(argsort(x, 1));
  EXPECT_EQ(fusion.outputs().size(), 1u);
}

// Values known by construction, so that the argument order of each ATen
// call is checked (dim, largest, descending, padding_idx, max_norm).
TEST_F(LibraryOpsTest, AtenEvaluationGivesTorchsResults) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  TensorView* ids = makeContigTensor(1, DataType::Int);
  TensorView* weight = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addInput(ids);
  fusion->addInput(weight);
  const TopKResult smallest =
      topk(x, constant(int64_t{2}), 1, /*largest=*/false);
  fusion->addOutput(smallest.values);
  fusion->addOutput(smallest.indices);
  fusion->addOutput(argsort(x, 0, /*descending=*/true, /*stable=*/true));
  fusion->addOutput(embedding(ids, weight, /*padding_idx=*/int64_t{1}));

  const at::Tensor in =
      at::tensor({3., 1., 2., -1., 5., 0.}, at::kFloat).reshape({2, 3});
  const at::Tensor idx = at::tensor({2, 0, 2}, at::kLong);
  const at::Tensor w = at::arange(8, at::kFloat).reshape({4, 2});
  const auto out = evaluateFusionWithATen(fusion.get(), {in, idx, w});
  EXPECT_TRUE(at::equal(
      out[0], at::tensor({1., 2., -1., 0.}, at::kFloat).reshape({2, 2})));
  EXPECT_TRUE(
      at::equal(out[1], at::tensor({1, 2, 0, 2}, at::kLong).reshape({2, 2})));
  EXPECT_TRUE(at::equal(
      out[2], at::tensor({0, 1, 0, 1, 0, 1}, at::kLong).reshape({2, 3})));
  EXPECT_TRUE(at::equal(
      out[3],
      at::tensor({4., 5., 0., 1., 4., 5.}, at::kFloat).reshape({3, 2})));
}

// A 0-dim tensor sorts along dim 0 or -1, as torch lets it (Thunder's
// argsort and topk samples include one): its one element is index 0.
TEST_F(LibraryOpsTest, ZeroDimTensorsSortAlongDimZeroOrMinusOne) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(0);
  fusion->addInput(x);
  fusion->addOutput(argsort(x, -1, /*descending=*/true, /*stable=*/true));
  const TopKResult top = topk(x, constant(int64_t{1}), 0);
  fusion->addOutput(top.values);
  fusion->addOutput(top.indices);
  EXPECT_EQ(rankOf(top.values), 0);
  const at::Tensor value = at::scalar_tensor(2.5, at::kFloat);
  const at::Tensor zero = at::scalar_tensor(0, at::kLong);
  const auto out = evaluateFusionWithATen(fusion.get(), {value});
  EXPECT_TRUE(at::equal(out[0], zero));
  EXPECT_TRUE(at::equal(out[1], value));
  EXPECT_TRUE(at::equal(out[2], zero));
  EXPECT_THAT(
      [&] { argsort(x, 1, false, false); },
      ThrowsMessage<UserError>(HasSubstr("a 0-dim tensor takes 0 or -1")));
}

TEST_F(LibraryOpsTest, EmbeddingWithMaxNormRenormalizesTheRowsRead) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* ids = makeContigTensor(1, DataType::Int);
  TensorView* weight = makeContigTensor(2);
  fusion->addInput(ids);
  fusion->addInput(weight);
  fusion->addOutput(embedding(ids, weight, std::nullopt, constant(1.0)));
  at::Tensor w = at::tensor({3., 4., 0.3, 0.4}, at::kFloat).reshape({2, 2});
  const auto out =
      evaluateFusionWithATen(fusion.get(), {at::tensor({0}, at::kLong), w});
  // Row 0 (norm 5) scaled to norm 1, in the weight too, as torch does;
  // row 1, not read, is left alone.
  EXPECT_TRUE(at::allclose(
      out[0], at::tensor({0.6, 0.8}, at::kFloat).reshape({1, 2}), 1e-5, 1e-5));
  EXPECT_TRUE(
      at::allclose(w[0], at::tensor({0.6, 0.8}, at::kFloat), 1e-5, 1e-5));
  EXPECT_TRUE(at::equal(w[1], at::tensor({0.3, 0.4}, at::kFloat)));
}

TEST_F(LibraryOpsTest, OnlyExprEvalTakesALibraryOp) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addOutput(argsort(x, 1));
  const at::Tensor in = at::randn({8, 16});
  RuntimeInfo info = makeRuntimeInfo(fusion.get(), {in}, false);
  SchedulerChoice choice = chooseScheduler(fusion.get(), info);
  EXPECT_EQ(choice.scheduler->type(), SchedulerType::ExprEval);
  EXPECT_THAT(
      choice.rejections, ::testing::Contains(HasSubstr(
                             "PointWise (compile time): it has a ExternalOp")));
}

// uint64 and packed fp4 tensors move through fusions (a copy compiles to a
// pointwise kernel) but are neither computed on nor cast.
TEST_F(LibraryOpsTest, DataOnlyTypesAreCopiedButNotComputedOn) {
  for (DataType dtype : {DataType::UInt64, DataType::Float4_e2m1fn_x2}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = makeContigTensor(1, dtype);
    fusion.addInput(x);
    fusion.addOutput(set(x));
    EXPECT_THAT(
        [&]() { add(x, x); },
        ThrowsMessage<UserError>(HasSubstr("does not compute on them")));
    EXPECT_THAT(
        [&]() { castOp(DataType::Float, x); },
        ThrowsMessage<UserError>(HasSubstr("are only moved and copied")));
    const at::Tensor in = at::empty(
        {64},
        at::dtype(
            dtype == DataType::UInt64 ? at::kUInt64 : at::kFloat4_e2m1fn_x2));
    const CompiledSchedule compiled = scheduleAndCompile(fusion, {in});
    EXPECT_EQ(compiled.type, SchedulerType::PointWise);
  }
}

TEST_F(LibraryOpsTest, ScopedOptionsNestAndNameTheKnownOnes) {
  EXPECT_FALSE(isDisabled(DisableOption::MatmulExprEval));
  const uint64_t before = scopedOptionBits();
  {
    ScopedOptions outer({"warp_per_row"}, {});
    EXPECT_TRUE(isEnabled(EnableOption::WarpPerRow));
    {
      ScopedOptions inner({}, {"matmul_expr_eval"});
      EXPECT_TRUE(isEnabled(EnableOption::WarpPerRow));
      EXPECT_TRUE(isDisabled(DisableOption::MatmulExprEval));
    }
    EXPECT_FALSE(isDisabled(DisableOption::MatmulExprEval));
    EXPECT_NE(scopedOptionBits(), before);
  }
  EXPECT_EQ(scopedOptionBits(), before);
  EXPECT_FALSE(isEnabled(EnableOption::WarpPerRow));
  EXPECT_THAT(
      []() { ScopedOptions bad({}, {"no_such_option"}); },
      ThrowsMessage<UserError>(HasSubstr(
          "Unknown option \"no_such_option\" to disable (the names "
          "FUSER_DISABLE takes): expected one of inner_outer_persistent")));
  EXPECT_EQ(scopedOptionBits(), before);
}

// Without its ATen fallback (matmul_expr_eval disabled), a product the
// Matmul scheduler declines (float operands) finds no scheduler: a user
// error that says which option to drop.
TEST_F(LibraryOpsTest, DisabledMatmulFallbackLeavesNoScheduler) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addInput(b);
  fusion->addOutput(matmul(a, b));
  const at::Tensor ta = at::randn({24, 16});
  const at::Tensor tb = at::randn({16, 16});
  RuntimeInfo info = makeRuntimeInfo(fusion.get(), {ta, tb}, false);
  EXPECT_EQ(
      chooseScheduler(fusion.get(), info).scheduler->type(),
      SchedulerType::ExprEval);
  ScopedOptions options({}, {"matmul_expr_eval"});
  EXPECT_THAT(
      [&]() { chooseScheduler(fusion.get(), info); },
      ThrowsMessage<UserError>(
          HasSubstr("Can not find a scheduler to schedule fusion segment")));
}

// ---- GPU: fusions around the library ops, against torch.

TEST_F(LibraryOpsGpuTest, TopkBetweenPointwiseOpsIsItsOwnSegment) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  Val* k = IrBuilder::create<Val>(DataType::Int);
  fusion->addInput(x);
  fusion->addInput(k);
  const TopKResult top = topk(relu(x), k, 1);
  fusion->addOutput(mul(top.values, IrBuilder::create<Val>(2.0)));
  fusion->addOutput(top.indices);
  FusionExecutorCache fec(std::move(fusion));
  const at::Tensor in = at::randn({300, 257}, at::kCUDA);
  const auto out = fec.runFusionWithInputs({in, int64_t{7}});
  const auto want = at::topk(at::relu(in), 7, 1);
  EXPECT_TRUE(at::equal(out[0], std::get<0>(want) * 2));
  EXPECT_TRUE(
      at::equal(at::gather(at::relu(in), 1, out[1]), std::get<0>(want)));
  std::vector<SchedulerType> types;
  for (SegmentedGroup* group :
       fec.getMostRecentKernelRuntime()->fusionSegments()->groups()) {
    types.push_back(group->schedulerType());
  }
  EXPECT_THAT(types, ::testing::Contains(SchedulerType::ExprEval));
  EXPECT_THAT(types, ::testing::Contains(SchedulerType::PointWise));
}

TEST_F(LibraryOpsGpuTest, ArgsortAndEmbeddingEqualTorchs) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  TensorView* ids = makeContigTensor(2, DataType::Int);
  TensorView* weight = makeContigTensor(2, DataType::BFloat16);
  fusion->addInput(x);
  fusion->addInput(ids);
  fusion->addInput(weight);
  fusion->addOutput(argsort(neg(x), 0, /*descending=*/false, /*stable=*/true));
  fusion->addOutput(
      castOp(DataType::Float, embedding(ids, weight, int64_t{0})));
  FusionExecutorCache fec(std::move(fusion));
  const at::Tensor in = at::randint(0, 5, {129, 33}, at::kCUDA).to(at::kFloat);
  const at::Tensor idx = at::randint(
      0, 50, {4, 9}, at::TensorOptions().device(at::kCUDA).dtype(at::kLong));
  const at::Tensor w = at::randn({50, 64}, at::kCUDA).to(at::kBFloat16);
  const auto out = fec.runFusionWithInputs({in, idx, w});
  EXPECT_TRUE(at::equal(out[0], at::argsort(-in, /*stable=*/true, 0)));
  EXPECT_TRUE(at::equal(out[1], at::embedding(w, idx, 0).to(at::kFloat)));
}

TEST_F(LibraryOpsGpuTest, GroupedMatmulEqualsTorchs) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2, DataType::BFloat16);
  TensorView* b = makeSymbolicTensor(3, DataType::BFloat16);
  TensorView* offsets = makeContigTensor(1, DataType::Int32);
  fusion->addInput(a);
  fusion->addInput(b);
  fusion->addInput(offsets);
  fusion->addOutput(groupedMm(a, b, offsets));
  FusionExecutorCache fec(std::move(fusion));
  const at::Tensor ta = at::randn({96, 64}, at::kCUDA).to(at::kBFloat16);
  const at::Tensor tb =
      at::randn({3, 32, 64}, at::kCUDA).to(at::kBFloat16).transpose(1, 2);
  const at::Tensor offs = at::tensor({32, 48, 96}, at::kInt).to(at::kCUDA);
  const auto out = fec.runFusionWithInputs({ta, tb, offs});
  EXPECT_TRUE(at::equal(out[0], at::_grouped_mm(ta, tb, offs)));
}

// The forward's output and statistics equal ATen's flash attention; the
// backward, given the forward's philox state, equals ATen's backward
// (dropout included: the state replays the same mask).
TEST_F(LibraryOpsGpuTest, FlashAttentionForwardAndBackwardEqualATens) {
  for (double dropout : {0.0, 0.25}) {
    SCOPED_TRACE("dropout " + std::to_string(dropout));
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* q = makeContigTensor(4, DataType::BFloat16);
    TensorView* k = makeContigTensor(4, DataType::BFloat16);
    TensorView* v = makeContigTensor(4, DataType::BFloat16);
    TensorView* grad = makeContigTensor(4, DataType::BFloat16);
    for (TensorView* tv : {q, k, v, grad}) {
      fusion->addInput(tv);
    }
    const SdpaForwardResult fwd =
        sdpfaForward(q, k, v, constant(dropout), constant(true));
    const SdpaBackwardResult bwd = sdpfaBackward(
        grad, q, k, v, fwd.output, fwd.logsumexp, constant(dropout),
        constant(true), fwd.philox_seed, fwd.philox_offset);
    for (TensorView* tv :
         {fwd.output, fwd.logsumexp, fwd.philox_seed, fwd.philox_offset,
          bwd.grad_q, bwd.grad_k, bwd.grad_v}) {
      fusion->addOutput(tv);
    }
    FusionExecutorCache fec(std::move(fusion));
    const auto opts = at::TensorOptions().device(at::kCUDA);
    std::vector<at::Tensor> in;
    for (int i = 0; i < 4; ++i) {
      in.push_back(at::randn({2, 4, 128, 64}, opts).to(at::kBFloat16));
    }
    const auto out = fec.runFusionWithInputs({in[0], in[1], in[2], in[3]});
    ASSERT_EQ(out.size(), 7u);
    EXPECT_EQ(out[2].scalar_type(), at::kUInt64);
    const auto want_bwd = at::_scaled_dot_product_flash_attention_backward(
        in[3], in[0], in[1], in[2], out[0], out[1], at::Tensor(), at::Tensor(),
        128, 128, dropout, true, out[2], out[3]);
    EXPECT_TRUE(at::equal(out[4], std::get<0>(want_bwd)));
    EXPECT_TRUE(at::equal(out[5], std::get<1>(want_bwd)));
    EXPECT_TRUE(at::equal(out[6], std::get<2>(want_bwd)));
    if (dropout == 0.0) {
      const auto want = at::_scaled_dot_product_flash_attention(
          in[0], in[1], in[2], 0.0, true);
      EXPECT_TRUE(at::equal(out[0], std::get<0>(want)));
      EXPECT_TRUE(at::equal(out[1], std::get<1>(want)));
    }
  }
}

} // namespace fuser
