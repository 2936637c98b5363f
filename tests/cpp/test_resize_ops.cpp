// slice, pad and cat: output extents (evaluated as the runtime allocates
// them) against torch's sizes for edge cases (negative, out-of-range and
// crossed bounds, steps, trimming pads), the ATen evaluation over several
// layouts, the axes they map, user errors, a slice as a view of its input
// (contiguity, the ATen evaluation, the ExprEval segment), and on the GPU a
// fusion around each.
#include <expr/evaluator.h>
#include <fusion.h>
#include <id_model/logical_domain_map.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/aten_evaluator.h>
#include <runtime/expr_eval_executor.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/fusion_kernel_runtime.h>
#include <runtime/tensor_layout.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

namespace fuser {

using ::testing::HasSubstr;

class ResizeOpTest : public FuserIrTest {};
class ResizeOpGpuTest : public FuserTest {};

namespace {

Val* idx(int64_t v) {
  return IrBuilder::create<Val>(v, DataType::Index);
}

// Evaluates `fusion`'s one output through ATen and checks that the extents
// the runtime would allocate (the output's logical extents, evaluated)
// are the result's sizes.
at::Tensor evaluateChecked(
    Fusion* fusion, const std::vector<c10::IValue>& inputs) {
  ExpressionEvaluator ee;
  at::Tensor out = evaluateFusionWithATen(fusion, inputs, ee)[0];
  auto* tv = fusion->outputs()[0]->as<TensorView>();
  std::vector<int64_t> extents;
  for (IterDomain* id : tv->getLogicalDomain()) {
    extents.push_back(ee.evaluateOrThrow(id->extent()).asInt());
  }
  EXPECT_EQ(extents, out.sizes().vec());
  return out;
}

// x[start:stop:step] along axis 0 of a [n, 5] input (bounds as given, or
// the default when nullopt).
at::Tensor sliceRows(
    const at::Tensor& x, std::optional<int64_t> start,
    std::optional<int64_t> stop, int64_t step) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* in = makeSymbolicTensor(2);
  fusion.addInput(in);
  SliceRange range;
  range.start = start ? idx(*start) : nullptr;
  range.stop = stop ? idx(*stop) : nullptr;
  range.step = idx(step);
  fusion.addOutput(slice(in, {range}));
  return evaluateChecked(&fusion, {x});
}

} // namespace

TEST_F(ResizeOpTest, SlicesHaveTorchsSizesAndValues) {
  const at::Tensor x = at::randn({10, 5});
  struct Case {
    std::optional<int64_t> start, stop;
    int64_t step;
  };
  const std::vector<Case> cases = {
      {1, 7, 1}, {1, -1, 2},   {-3, std::nullopt, 1}, {std::nullopt, 4, 3},
      {8, 3, 1}, {-20, 20, 4}, {12, 15, 1},           {0, 0, 1},
      {5, -5, 1}};
  for (const Case& c : cases) {
    const at::Tensor want =
        x.slice(0, c.start.value_or(0), c.stop.value_or(INT64_MAX), c.step);
    const at::Tensor got = sliceRows(x, c.start, c.stop, c.step);
    EXPECT_TRUE(at::equal(got, want))
        << c.start.value_or(0) << ":" << c.stop.value_or(-99) << ":" << c.step;
  }
  // A transposed and a strided input, sliced along both axes.
  for (const at::Tensor& in :
       {at::randn({5, 10}).t(), at::randn({10, 10}).slice(1, 0, 10, 2)}) {
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* tv = makeSymbolicTensor(2);
    fusion.addInput(tv);
    fusion.addOutput(
        slice(tv, {{idx(2), idx(9), idx(3)}, {idx(-4), nullptr, nullptr}}));
    EXPECT_TRUE(at::equal(
        evaluateChecked(&fusion, {in}), in.slice(0, 2, 9, 3).slice(1, -4)));
  }
}

TEST_F(ResizeOpTest, PadsAndCatsHaveTorchsSizesAndValues) {
  const at::Tensor x = at::randn({4, 6}).t();
  {
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* tv = makeSymbolicTensor(2);
    fusion.addInput(tv);
    fusion.addOutput(pad(
        tv, {idx(1), idx(2), idx(-1), idx(0)}, IrBuilder::create<Val>(3.5)));
    EXPECT_TRUE(at::equal(
        evaluateChecked(&fusion, {x}),
        at::constant_pad_nd(x, {1, 2, -1, 0}, 3.5)));
  }
  {
    // Three layouts and two types: promoted to float, as torch.cat.
    const at::Tensor a = at::randn({6, 4});
    const at::Tensor b = at::randn({6, 2}).to(at::kBFloat16);
    const at::Tensor c = at::randn({6, 6}).slice(1, 0, 6, 2);
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* ta = makeSymbolicTensor(2);
    TensorView* tb = makeSymbolicTensor(2, DataType::BFloat16);
    TensorView* tc = makeSymbolicTensor(2);
    fusion.addInput(ta);
    fusion.addInput(tb);
    fusion.addInput(tc);
    TensorView* joined = cat({ta, tb, tc}, -1);
    EXPECT_EQ(joined->dtype(), DataType::Float);
    fusion.addOutput(joined);
    EXPECT_TRUE(at::equal(
        evaluateChecked(&fusion, {a, b, c}),
        at::cat({a, b.to(at::kFloat), c}, 1)));
  }
}

// Axes a slice or pad leaves whole, and cat's other axes, are mapped.
TEST_F(ResizeOpTest, OnlyAxesNotResizedAreMapped) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  fusion.addInput(x);
  fusion.addInput(y);
  TensorView* rows = slice(x, {{idx(1), nullptr, nullptr}});
  TensorView* padded = pad(x, {idx(0), idx(0), idx(2), idx(2)});
  TensorView* joined = cat({x, y}, 0);
  for (TensorView* out : {rows, padded, joined}) {
    fusion.addOutput(out);
  }
  auto map = [](TensorView* p, TensorView* c) {
    return PairwiseLogicalDomainMap(p, c).mapProducerToConsumer();
  };
  EXPECT_EQ(map(x, rows).size(), 1u);
  EXPECT_EQ(map(x, rows).at(x->axis(1)), rows->axis(1));
  EXPECT_EQ(map(x, padded).size(), 1u);
  EXPECT_EQ(map(x, padded).at(x->axis(1)), padded->axis(1));
  EXPECT_EQ(map(y, joined).size(), 1u);
  EXPECT_EQ(map(y, joined).at(y->axis(1)), joined->axis(1));
}

TEST_F(ResizeOpTest, BadArgumentsAreUserErrors) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* v = makeContigTensor(1);
  fusion.addInput(x);
  fusion.addInput(v);
  EXPECT_THAT(
      [&] {
        slice(x, {{nullptr, nullptr, idx(0)}});
      },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("the step along axis 0 is 0; steps must be positive")));
  EXPECT_THAT(
      [&] { pad(x, {idx(1)}); },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("1 pad widths; give (left, right) pairs")));
  EXPECT_THAT(
      [&] {
        cat({x, v}, 0);
      },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("all must have the same rank")));
  EXPECT_THAT(
      [&] { cat({x}, 2); },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("cat: dim 2 is out of range for tensors of rank 2")));
  fusion.addOutput(cat({x, x}, 1));
  EXPECT_EQ(fusion.outputs().size(), 1u);
}

// A slice is a view: the same memory as its input, so only an innermost
// axis taken whole or with step 1 from a dense innermost axis is known to
// be dense.
TEST_F(ResizeOpTest, SliceIsAViewOfItsInput) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* t = makeContigTensor(2);
  fusion.addInput(x);
  fusion.addInput(t);
  t->setAllocationDomain({t->axis(1), t->axis(0)}, true);
  TensorView* columns =
      slice(x, {{nullptr, nullptr, nullptr}, {idx(96), idx(192)}});
  TensorView* every_other =
      slice(x, {{nullptr, nullptr, nullptr}, {idx(0), nullptr, idx(2)}});
  TensorView* rows = slice(x, {{idx(1), idx(5)}});
  TensorView* of_transposed = slice(t, {{idx(1), idx(5)}});
  using C = Contiguity;
  EXPECT_EQ(columns->getContiguity(), (C{false, true}));
  EXPECT_EQ(every_other->getContiguity(), (C{false, false}));
  EXPECT_EQ(rows->getContiguity(), (C{false, true}));
  EXPECT_EQ(of_transposed->getContiguity(), (C{false, false}));
  fusion.addOutput(columns);
  const at::Tensor in = at::randn({8, 288});
  const at::Tensor out =
      evaluateFusionWithATen(&fusion, {in, at::randn({8, 8})})[0];
  EXPECT_TRUE(out.is_alias_of(in));
  EXPECT_TRUE(at::equal(out, in.slice(1, 96, 192)));
}

// A reshape of a slice (a QKV split into heads) is a view too: only its
// innermost axis is claimed dense (a view's innermost stride is the
// input's, a copy's is 1); a reshape of a dense tensor is dense.
TEST_F(ResizeOpTest, ReshapeOfASliceIsAView) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* qkv = makeContigTensor(3);
  fusion.addInput(qkv);
  TensorView* q = slice(
      qkv, {{nullptr, nullptr, nullptr},
            {nullptr, nullptr, nullptr},
            {idx(0), idx(64)}});
  TensorView* heads = reshape(q, std::vector<int64_t>{2, 8, 4, 16});
  TensorView* odd = reshape(q, std::vector<int64_t>{2, 8, 2, 32});
  TensorView* merged = reshape(q, std::vector<int64_t>{2, 512});
  TensorView* dense = reshape(qkv, std::vector<int64_t>{16, 192});
  using C = Contiguity;
  EXPECT_EQ(heads->getContiguity(), (C{false, false, false, true}));
  EXPECT_EQ(odd->getContiguity(), (C{false, false, false, true}));
  EXPECT_EQ(merged->getContiguity(), (C{false, true}));
  EXPECT_EQ(dense->getContiguity(), (C{true, true}));
  fusion.addOutput(heads);
  const at::Tensor in = at::randn({2, 8, 192});
  const at::Tensor out = evaluateFusionWithATen(&fusion, {in})[0];
  EXPECT_TRUE(out.is_alias_of(in));
  EXPECT_TRUE(at::equal(out, in.slice(2, 0, 64).reshape({2, 8, 4, 16})));
}

// The slice's segment alone returns a view of its input (no copy); in a
// fusion the kernel after a slice reads the input in place (doc/ops.md
// "Slicing, padding and concatenation"), and a reshape of a slice stays
// an ATen view, laid out for the kernel after it.
TEST_F(ResizeOpGpuTest, SlicesAreViewsOrReadInPlace) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* qkv = makeContigTensor(2);
  fusion->addInput(qkv);
  for (int64_t part = 0; part < 3; ++part) {
    TensorView* t = slice(
        qkv, {{nullptr, nullptr, nullptr},
              {idx(part * 256), idx((part + 1) * 256)}});
    fusion->addOutput(mul(t, IrBuilder::create<Val>(2.0)));
  }
  // The heads of the first part, moved before the rows.
  TensorView* q = slice(qkv, {{nullptr, nullptr, nullptr}, {idx(0), idx(256)}});
  fusion->addOutput(
      permute(reshape(q, std::vector<int64_t>{640, 4, 64}), {1, 0, 2}));
  Fusion* raw = fusion.get();
  {
    // The slice alone, as the ExprEval segment runs it.
    Fusion view;
    FusionGuard view_guard(&view);
    TensorView* in = makeContigTensor(2);
    view.addInput(in);
    view.addOutput(
        slice(in, {{nullptr, nullptr, nullptr}, {idx(256), idx(512)}}));
    const at::Tensor x = at::randn({64, 768}, at::kCUDA);
    ExprEvalExecutor executor;
    executor.compile(&view, {x});
    const at::Tensor out = executor.run({x})[0];
    EXPECT_TRUE(out.is_alias_of(x));
    EXPECT_EQ(out.data_ptr<float>(), x.data_ptr<float>() + 256);
  }
  FusionExecutorCache fec(std::move(fusion));
  const at::Tensor x = at::randn({640, 768}, at::kCUDA);
  const auto out = fec.runFusionWithInputs({x});
  testValidate(raw, out, {x}, __LINE__, __FILE__);
  FusionKernelRuntime* runtime = fec.getMostRecentKernelRuntime();
  int64_t slicing_kernels = 0;
  for (size_t i = 0; i < runtime->segments().size(); ++i) {
    if (runtime->schedulerType(i) != SchedulerType::PointWise) {
      continue;
    }
    for (Expr* expr : runtime->scheduledFusion(i)->exprs()) {
      slicing_kernels += expr->isA<ResizeOp>();
    }
  }
  EXPECT_EQ(slicing_kernels, 3) << "each part's kernel slices qkv in place";
}

// A view the kernels after it could not read in their vectors (an
// unaligned slice) is laid out densely.
TEST_F(ResizeOpTest, OnlyAlignedViewsAreReadableAsDense) {
  const at::Tensor x = at::randn({64, 768});
  EXPECT_TRUE(readableAsDense(x.slice(1, 256, 512)));
  EXPECT_FALSE(readableAsDense(x.slice(1, 1, 257)));
  EXPECT_FALSE(readableAsDense(at::randn({64, 770}).slice(1, 0, 256)));
  EXPECT_TRUE(readableAsDense(x.t()));
}

TEST_F(ResizeOpGpuTest, UnalignedSlicesAreCopiedForTheKernelAfter) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  TensorView* t = slice(x, {{nullptr, nullptr, nullptr}, {idx(1), idx(257)}});
  fusion->addOutput(mul(t, IrBuilder::create<Val>(2.0)));
  Fusion* raw = fusion.get();
  FusionExecutorCache fec(std::move(fusion));
  const at::Tensor in = at::randn({640, 768}, at::kCUDA);
  const auto out = fec.runFusionWithInputs({in});
  testValidate(raw, out, {in}, __LINE__, __FILE__);
}

TEST_F(ResizeOpGpuTest, ResizingInsideAFusionEqualsTorchs) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeSymbolicTensor(2);
  fusion->addInput(x);
  TensorView* y = mul(x, IrBuilder::create<Val>(2.0));
  TensorView* head = slice(y, {{nullptr, nullptr, nullptr}, {idx(0), idx(64)}});
  TensorView* tail =
      slice(y, {{nullptr, nullptr, nullptr}, {idx(64), nullptr}});
  fusion->addOutput(add(cat({tail, head}, 1), IrBuilder::create<Val>(1.0)));
  fusion->addOutput(pad(y, {idx(3), idx(-2)}));
  FusionExecutorCache fec(std::move(fusion));
  const at::Tensor in = at::randn({300, 200}, at::kCUDA).t();
  std::vector<at::Tensor> out = fec.runFusionWithInputs({in});
  const at::Tensor y2 = in * 2;
  EXPECT_TRUE(
      at::equal(out[0], at::cat({y2.slice(1, 64), y2.slice(1, 0, 64)}, 1) + 1));
  EXPECT_TRUE(at::equal(out[1], at::constant_pad_nd(y2, {3, -2}, 0.0)));
}

// Regression: CUDA's launch variables are unsigned int, and a left pad's
// bound test `(i % 32 - 16) >= 0` computed from them in unsigned int held
// for every i: the pad read the row before its input (Llama's rotary
// backward through Thunder; doc/design.md §5).
TEST_F(ResizeOpGpuTest, LeftPadReadsNothingBeforeItsInput) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigConcreteTensor({256, 16});
  TensorView* y = makeContigConcreteTensor({256, 16});
  fusion->addInput(x);
  fusion->addInput(y);
  fusion->addOutput(add(pad(x, {idx(16), idx(0)}), pad(y, {idx(0), idx(16)})));
  FusionExecutorCache fec(std::move(fusion));
  const at::Tensor a = at::randn({256, 16}, at::kCUDA);
  const at::Tensor b = at::randn({256, 16}, at::kCUDA);
  const std::vector<at::Tensor> out = fec.runFusionWithInputs({a, b});
  EXPECT_TRUE(at::equal(out[0], at::cat({b, a}, 1)));
}

} // namespace fuser
