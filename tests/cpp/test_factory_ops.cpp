// Tensors made from scalars (full, zeros, ones, iota) and the triangular
// masks built from them (triu, tril): their exprs, their ATen evaluation
// against torch's own functions, one pointwise kernel for every input
// layout (compiled with NVRTC), user errors, and on the GPU kernels equal
// to ATen.
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/aten_evaluator.h>
#include <runtime/fusion_executor_cache.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace fuser {

using ::testing::HasSubstr;

class FactoryOpTest : public FuserIrTest {};
class FactoryOpGpuTest : public FuserTest {};

namespace {

Val* indexConst(int64_t v) {
  return IrBuilder::create<Val>(v, DataType::Index);
}

// The layouts a triu/tril input is tested in.
enum class Layout { Contiguous, Transposed, SplitRows, Strided };

std::string name(Layout layout) {
  switch (layout) {
    case Layout::Contiguous:
      return "contiguous";
    case Layout::Transposed:
      return "transposed";
    case Layout::SplitRows:
      return "rows split by 4 in the allocation";
    case Layout::Strided:
      return "every other column";
  }
  return "";
}

// triu(x, diagonal) or tril(x, diagonal) of a [rows, cols] input in
// `layout`, with the input tensor for that layout.
struct TriangleCase {
  std::unique_ptr<Fusion> fusion = std::make_unique<Fusion>();
  at::Tensor input;
};

TriangleCase triangleCase(
    Layout layout, bool upper, int64_t diagonal, int64_t rows, int64_t cols) {
  TriangleCase c;
  FusionGuard fg(c.fusion.get());
  TensorView* x =
      layout == Layout::Strided ? makeSymbolicTensor(2) : makeContigTensor(2);
  c.fusion->addInput(x);
  c.fusion->addOutput(upper ? triu(x, diagonal) : tril(x, diagonal));
  switch (layout) {
    case Layout::Contiguous:
      c.input = at::randn({rows, cols});
      break;
    case Layout::Transposed:
      x->setAllocationDomain({x->axis(1), x->axis(0)}, true);
      c.input = at::randn({cols, rows}).t();
      break;
    case Layout::SplitRows: {
      auto [outer, inner] = IterDomain::split(x->axis(0), indexConst(4), true);
      x->setAllocationDomain({outer, inner, x->axis(1)}, true);
      c.input = at::randn({rows, cols});
      break;
    }
    case Layout::Strided:
      c.input = at::randn({rows, 2 * cols}).slice(1, 0, 2 * cols, 2);
      break;
  }
  return c;
}

// For an input n: iota(n, start 7) and full(n, 3.0) + float(iota).
std::unique_ptr<Fusion> factoriesWithoutTensorInputs() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  Val* n = IrBuilder::create<Val>(DataType::Int);
  fusion->addInput(n);
  TensorView* counted = iota(n, IrBuilder::create<Val>(int64_t{7}));
  fusion->addOutput(counted);
  fusion->addOutput(
      add(full({n}, IrBuilder::create<Val>(3.0), DataType::Float),
          castOp(DataType::Float, counted)));
  return fusion;
}

constexpr Layout kLayouts[] = {
    Layout::Contiguous, Layout::Transposed, Layout::SplitRows, Layout::Strided};

} // namespace

TEST_F(FactoryOpTest, FactoriesAreExprsWithoutTensorInputs) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  Val* n = IrBuilder::create<Val>(DataType::Int);
  fusion.addInput(n);
  TensorView* filled =
      full({n, indexConst(3)}, IrBuilder::create<Val>(2.5), DataType::Half);
  TensorView* counted = iota(n);
  fusion.addOutput(filled);
  fusion.addOutput(counted);

  auto* fill = dynamic_cast<FullOp*>(filled->definition());
  ASSERT_NE(fill, nullptr);
  EXPECT_EQ(filled->dtype(), DataType::Half);
  ASSERT_EQ(filled->getLogicalDomain().size(), 2u);
  EXPECT_EQ(filled->getLogicalDomain()[0]->extent(), n);
  // The fill value, then the extents: the scalar input is reachable.
  ASSERT_EQ(fill->inputs().size(), 3u);
  EXPECT_EQ(fill->input(1), n);
  auto* count = dynamic_cast<IotaOp*>(counted->definition());
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(counted->dtype(), DataType::Int);
  EXPECT_EQ(count->length(), n);
  EXPECT_EQ(count->start()->value().asInt(), 0);
  EXPECT_EQ(count->step()->value().asInt(), 1);

  // triu: two iotas (rows and columns), compared and selected.
  Fusion tri;
  FusionGuard tri_guard(&tri);
  TensorView* x = makeContigTensor(3, DataType::BFloat16);
  tri.addInput(x);
  TensorView* upper = triu(x, 1);
  tri.addOutput(upper);
  EXPECT_EQ(upper->dtype(), DataType::BFloat16);
  int iotas = 0;
  int wheres = 0;
  for (Expr* expr : tri.exprs()) {
    iotas += expr->isA<IotaOp>();
    wheres += expr->isA<TernaryOp>();
  }
  EXPECT_EQ(iotas, 2);
  EXPECT_EQ(wheres, 1);
}

TEST_F(FactoryOpTest, AtenEvaluationEqualsTorch) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  Val* n = IrBuilder::create<Val>(DataType::Int);
  Val* start = IrBuilder::create<Val>(DataType::Double);
  fusion.addInput(n);
  fusion.addInput(start);
  fusion.addOutput(
      full({indexConst(2), n}, IrBuilder::create<Val>(-1.5), DataType::Float));
  fusion.addOutput(zeros({n}, DataType::Int));
  fusion.addOutput(ones({indexConst(3)}, DataType::BFloat16));
  fusion.addOutput(iota(
      n, IrBuilder::create<Val>(int64_t{2}),
      IrBuilder::create<Val>(int64_t{-3})));
  fusion.addOutput(
      iota(n, start, IrBuilder::create<Val>(0.25), DataType::Float));
  const std::vector<at::Tensor> out =
      evaluateFusionWithATen(&fusion, {int64_t{5}, 0.5});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_TRUE(at::equal(out[0], at::full({2, 5}, -1.5)));
  EXPECT_TRUE(at::equal(out[1], at::zeros({5}, at::kLong)));
  EXPECT_TRUE(at::equal(out[2], at::ones({3}, at::kBFloat16)));
  EXPECT_TRUE(at::equal(out[3], at::arange(2, 2 - 3 * 5, -3, at::kLong)));
  EXPECT_TRUE(at::equal(out[4], at::arange(5, at::kFloat) * 0.25 + 0.5));

  for (bool upper : {true, false}) {
    for (int64_t diagonal : {-7, -1, 0, 2, 9}) {
      TriangleCase c =
          triangleCase(Layout::Transposed, upper, diagonal, /*rows=*/6, 8);
      const at::Tensor got =
          evaluateFusionWithATen(c.fusion.get(), {c.input})[0];
      const at::Tensor want =
          upper ? at::triu(c.input, diagonal) : at::tril(c.input, diagonal);
      EXPECT_TRUE(at::equal(got, want))
          << (upper ? "triu" : "tril") << " diagonal " << diagonal;
    }
  }
}

// A triangle is one pointwise kernel whatever the input's layout: the
// iotas index the output's logical axes, not the input's memory.
TEST_F(FactoryOpTest, TrianglesOfEveryLayoutAreOnePointwiseKernel) {
  for (Layout layout : kLayouts) {
    SCOPED_TRACE(name(layout));
    TriangleCase c = triangleCase(layout, true, 1, /*rows=*/64, 96);
    const CompiledSchedule s = scheduleAndCompile(*c.fusion, {c.input});
    EXPECT_EQ(s.type, SchedulerType::PointWise);
    // Each iota's element is its logical index in 64-bit integers; column
    // - row is compared with the diagonal.
    EXPECT_THAT(s.code, HasSubstr("castTo<int64_t>(")) << s.code;
    EXPECT_THAT(s.code, HasSubstr(" >= 1LL)")) << s.code;
  }
}

TEST_F(FactoryOpTest, FloatIotaIsComputedInDouble) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(1);
  fusion.addInput(x);
  Val* length = x->getLogicalDomain()[0]->extent();
  fusion.addOutput(
      add(x, iota(
                 length, IrBuilder::create<Val>(1.0),
                 IrBuilder::create<Val>(0.5), DataType::Float)));
  const CompiledSchedule s = scheduleAndCompile(fusion, {at::randn({1000})});
  EXPECT_EQ(s.type, SchedulerType::PointWise);
  EXPECT_THAT(s.code, HasSubstr("castTo<double>(")) << s.code;
}

// Without a tensor input the outputs alone define the kernel.
TEST_F(FactoryOpTest, FactoriesAloneAreAPointwiseKernel) {
  std::unique_ptr<Fusion> fusion = factoriesWithoutTensorInputs();
  const CompiledSchedule s = scheduleAndCompile(*fusion, {int64_t{1000}});
  EXPECT_EQ(s.type, SchedulerType::PointWise);
  EXPECT_THAT(s.code, HasSubstr("(7LL + castTo<int64_t>(")) << s.code;
}

TEST_F(FactoryOpTest, BadArgumentsAreUserErrors) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* v = makeContigTensor(1);
  fusion.addInput(v);
  Val* half_size = IrBuilder::create<Val>(2.5);
  EXPECT_THAT(
      [&] { full({half_size}, IrBuilder::create<Val>(1.0), DataType::Float); },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("full: size 0 (2.5) is a double scalar; sizes are "
                    "integers.")));
  EXPECT_THAT(
      [&] { zeros({indexConst(-2)}, DataType::Float); },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("full: size 0 is -2; sizes must not be negative.")));
  EXPECT_THAT(
      [&] { iota(indexConst(4), nullptr, nullptr, DataType::Bool); },
      ::testing::ThrowsMessage<std::exception>(HasSubstr(
          "iota: dtype must be an integer or floating-point type; got bool")));
  EXPECT_THAT(
      [&] { iota(indexConst(4), IrBuilder::create<Val>(0.5)); },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("iota: an integer iota needs integer start and step")));
  EXPECT_THAT(
      [&] { triu(v); },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("has rank 1; the input must have at least 2 dimensions")));
  // The fusion is still usable.
  fusion.addOutput(tril(broadcast(v, {true, false})));
  EXPECT_EQ(fusion.outputs().size(), 1u);
}

TEST_F(FactoryOpGpuTest, TrianglesOfEveryLayoutEqualTorchs) {
  for (Layout layout : kLayouts) {
    for (bool upper : {true, false}) {
      for (int64_t diagonal : {-3, 0, 5}) {
        SCOPED_TRACE(
            name(layout) + (upper ? " triu " : " tril ") +
            std::to_string(diagonal));
        // 132 rows: the split-allocation layout splits them by 4.
        TriangleCase c = triangleCase(layout, upper, diagonal, 132, 260);
        // (.to keeps the strides of a dense layout; a strided one is made
        // on the device.)
        const at::Tensor input =
            layout == Layout::Strided
                ? at::randn({132, 520}, at::kCUDA).slice(1, 0, 520, 2)
                : c.input.to(at::kCUDA);
        FusionExecutorCache fec(std::move(c.fusion));
        std::vector<at::Tensor> out = fec.runFusionWithInputs({input});
        const at::Tensor want =
            upper ? at::triu(input, diagonal) : at::tril(input, diagonal);
        EXPECT_TRUE(at::equal(out[0], want));
      }
    }
  }
}

TEST_F(FactoryOpGpuTest, FactoriesWithoutTensorInputsRunOnTheGpu) {
  std::unique_ptr<Fusion> fusion = factoriesWithoutTensorInputs();
  FusionExecutorCache fec(std::move(fusion));
  std::vector<at::Tensor> out = fec.runFusionWithInputs({int64_t{1000}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].is_cuda());
  EXPECT_TRUE(at::equal(out[0].cpu(), at::arange(7, 1007, at::kLong)));
  EXPECT_TRUE(at::equal(out[1].cpu(), at::arange(7, 1007, at::kFloat) + 3.0f));
}

} // namespace fuser
