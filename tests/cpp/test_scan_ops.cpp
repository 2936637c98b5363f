// Scans (cumsum, cumprod): the op's result types and checks, its ATen
// evaluation against torch's over several layouts, the schedulers'
// reasons for declining it, and on the GPU a fusion around it.
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/aten_evaluator.h>
#include <runtime/aten_types.h>
#include <runtime/fusion_executor_cache.h>
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

class ScanOpTest : public FuserIrTest {};
class ScanOpGpuTest : public FuserTest {};

namespace {

// cumsum (or cumprod) of a 3-D input along `dim`, the input laid out as
// `input` is (transposed layouts through the allocation domain).
std::unique_ptr<Fusion> scanFusion(
    bool sum, int64_t dim, const at::Tensor& input, DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeSymbolicTensor(3, fromAtenType(input.scalar_type()));
  fusion->addInput(x);
  fusion->addOutput(sum ? cumsum(x, dim, dtype) : cumprod(x, dim, dtype));
  return fusion;
}

} // namespace

TEST_F(ScanOpTest, ResultTypesFollowPyTorch) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* f = makeContigTensor(2, DataType::BFloat16);
  TensorView* i = makeContigTensor(2, DataType::Int32);
  TensorView* b = makeContigTensor(2, DataType::Bool);
  fusion.addInput(f);
  fusion.addInput(i);
  fusion.addInput(b);
  EXPECT_EQ(cumsum(f, 1)->dtype(), DataType::BFloat16);
  EXPECT_EQ(cumsum(i, 0)->dtype(), DataType::Int);
  EXPECT_EQ(cumprod(b, -1)->dtype(), DataType::Int);
  TensorView* wide = cumsum(f, -2, DataType::Float);
  EXPECT_EQ(wide->dtype(), DataType::Float);
  auto* scan = dynamic_cast<ScanOp*>(wide->definition());
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(scan->dim(), 0);
  EXPECT_EQ(scan->opType(), ScanOpType::Sum);
}

TEST_F(ScanOpTest, AtenEvaluationEqualsTorchsForEveryLayout) {
  const at::Tensor base = at::randn({5, 6, 7});
  const std::vector<at::Tensor> layouts = {
      base, base.permute({2, 0, 1}).contiguous().permute({1, 2, 0}),
      at::randn({5, 12, 7}).slice(1, 0, 12, 2)};
  for (const at::Tensor& x : layouts) {
    for (int64_t dim : {0, 1, -1}) {
      for (bool sum : {true, false}) {
        std::unique_ptr<Fusion> fusion =
            scanFusion(sum, dim, x, DataType::Null);
        const at::Tensor got = evaluateFusionWithATen(fusion.get(), {x})[0];
        EXPECT_TRUE(
            at::equal(got, sum ? at::cumsum(x, dim) : at::cumprod(x, dim)))
            << (sum ? "cumsum" : "cumprod") << " dim " << dim;
      }
    }
  }
  const at::Tensor ints = at::randint(-5, 5, {4, 9}, at::kInt);
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2, DataType::Int32);
  fusion.addInput(x);
  fusion.addOutput(cumsum(x, 1));
  EXPECT_TRUE(at::equal(
      evaluateFusionWithATen(&fusion, {ints})[0], at::cumsum(ints, 1)));
}

// The compiled schedulers decline a scan, saying why; ExprEval runs it.
TEST_F(ScanOpTest, OnlyExprEvalTakesAScan) {
  const at::Tensor x = at::randn({8, 16, 4});
  std::unique_ptr<Fusion> fusion = scanFusion(true, 1, x, DataType::Null);
  RuntimeInfo info = makeRuntimeInfo(fusion.get(), {x}, false);
  SchedulerChoice choice = chooseScheduler(fusion.get(), info);
  EXPECT_EQ(choice.scheduler->type(), SchedulerType::ExprEval);
  EXPECT_THAT(
      choice.rejections, ::testing::Contains(HasSubstr(
                             "PointWise (compile time): it has a ScanOp")));
}

// cummax and cummin: values of the input's type and int64 indices, equal
// to torch's for every layout, with NaN, ties and integers.
TEST_F(ScanOpTest, CumulativeExtremesEqualTorchs) {
  at::Tensor with_nan = at::randn({5, 6, 7});
  with_nan.index_put_({2, 3, 4}, NAN);
  const std::vector<at::Tensor> inputs = {
      with_nan, with_nan.permute({2, 0, 1}).contiguous().permute({1, 2, 0}),
      at::randint(-3, 3, {5, 6, 7}, at::kInt),
      at::randn({5, 12, 7}).slice(1, 0, 12, 2)};
  for (const at::Tensor& x : inputs) {
    for (int64_t dim : {0, 1, -1}) {
      for (bool max : {true, false}) {
        Fusion fusion;
        FusionGuard fg(&fusion);
        TensorView* tv = makeSymbolicTensor(3, fromAtenType(x.scalar_type()));
        fusion.addInput(tv);
        const ScanWithIndices r = max ? cummax(tv, dim) : cummin(tv, dim);
        EXPECT_EQ(r.values->dtype(), tv->dtype());
        EXPECT_EQ(r.indices->dtype(), DataType::Int);
        fusion.addOutput(r.values);
        fusion.addOutput(r.indices);
        const auto got = evaluateFusionWithATen(&fusion, {x});
        const auto want = max ? at::cummax(x, dim) : at::cummin(x, dim);
        EXPECT_TRUE(
            at::equal(got[0].nan_to_num(99), std::get<0>(want).nan_to_num(99)))
            << (max ? "cummax" : "cummin") << " dim " << dim;
        EXPECT_TRUE(at::equal(got[1], std::get<1>(want)));
      }
    }
  }
}

TEST_F(ScanOpTest, BadArgumentsAreUserErrors) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  EXPECT_THAT(
      [&] { cumsum(x, 2); },
      ::testing::ThrowsMessage<std::exception>(HasSubstr(
          "dim 2 is out of range for a tensor of rank 2 (expected -2 <= dim "
          "< 2)")));
  EXPECT_THAT(
      [&] { cummax(x, -3); },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("cummax of T0_g_float[iS0{i0}, iS1{i2}]: dim -3 is out")));
  EXPECT_THAT(
      [&] { cumprod(x, 0, DataType::Bool); },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("cumprod: dtype bool cannot hold a running cumprod")));
  fusion.addOutput(cumsum(x, -1));
  EXPECT_EQ(fusion.outputs().size(), 1u);
}

TEST_F(ScanOpGpuTest, ScanInsideAFusionEqualsTorchs) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  TensorView* twice = mul(x, IrBuilder::create<Val>(2.0));
  fusion->addOutput(add(cumsum(twice, 1), IrBuilder::create<Val>(1.0)));
  FusionExecutorCache fec(std::move(fusion));
  const at::Tensor in = at::randn({300, 257}, at::kCUDA);
  const at::Tensor out = fec.runFusionWithInputs({in})[0];
  EXPECT_TRUE(at::allclose(out, at::cumsum(in * 2, 1) + 1, 1e-5, 1e-5));
}

TEST_F(ScanOpGpuTest, CumulativeMaxInsideAFusionEqualsTorchs) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  const ScanWithIndices r = cummax(neg(x), 0);
  fusion->addOutput(add(r.values, IrBuilder::create<Val>(1.0)));
  fusion->addOutput(r.indices);
  FusionExecutorCache fec(std::move(fusion));
  const at::Tensor in = at::randn({300, 257}, at::kCUDA);
  const auto out = fec.runFusionWithInputs({in});
  const auto want = at::cummax(-in, 0);
  EXPECT_TRUE(at::equal(out[0], std::get<0>(want) + 1));
  EXPECT_TRUE(at::equal(out[1], std::get<1>(want)));
}

} // namespace fuser
