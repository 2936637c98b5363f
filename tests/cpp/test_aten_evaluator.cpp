// The ATen evaluation of a fusion (csrc/runtime/aten_evaluator.h) and
// testValidate built on it. Everything runs on CPU tensors.

#include <fusion.h>
#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/aten_evaluator.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>

#include <cmath>
#include <functional>
#include <memory>
#include <tuple>
#include <vector>

namespace fuser {

using ::testing::HasSubstr;

class AtenEvaluatorTest : public FuserIrTest {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }
};

namespace {

using Dims = std::vector<int64_t>;

Val* doubleConstant(double value) {
  return IrBuilder::create<Val>(value, DataType::Double);
}

void expectClose(const at::Tensor& got, const at::Tensor& expected) {
  ASSERT_EQ(got.sizes(), expected.sizes());
  ASSERT_EQ(got.scalar_type(), expected.scalar_type());
  EXPECT_TRUE(at::allclose(got, expected, 1e-6, 1e-6, /*equal_nan=*/true))
      << "got\n"
      << got << "\nexpected\n"
      << expected;
}

} // namespace

TEST_F(AtenEvaluatorTest, AddMulWithBroadcast) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeSymbolicTensor(2);
  TensorView* tv1 = makeContigTensor(1);
  fusion->addInput(tv0);
  fusion->addInput(tv1);
  TensorView* tv2 = broadcast(tv1, {true, false});
  TensorView* tv3 = mul(add(tv0, tv2), doubleConstant(2.0));
  fusion->addOutput(tv3);

  at::Tensor t0 = at::randn({4, 3});
  at::Tensor t1 = at::randn({3});
  auto outputs = evaluateFusionWithATen(fusion.get(), {t0, t1});
  ASSERT_EQ(outputs.size(), 1u);
  expectClose(outputs[0], (t0 + t1.unsqueeze(0)) * 2.0);
}

TEST_F(AtenEvaluatorTest, CastsAndHalfArithmetic) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = makeContigTensor(1, DataType::Half);
  fusion->addInput(tv0);
  fusion->addInput(tv1);
  TensorView* as_half = castOp(DataType::Half, tv0);
  // Half + half computes in float and casts back (explicit in the IR).
  TensorView* half_sum = add(as_half, tv1);
  fusion->addOutput(as_half);
  fusion->addOutput(half_sum);
  fusion->addOutput(castOp(DataType::Int, tv0));

  at::Tensor t0 = at::randn({6}) * 4;
  at::Tensor t1 = at::randn({6}).to(at::kHalf);
  auto outputs = evaluateFusionWithATen(fusion.get(), {t0, t1});
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_TRUE(at::equal(outputs[0], t0.to(at::kHalf)));
  EXPECT_TRUE(at::equal(
      outputs[1],
      (t0.to(at::kHalf).to(at::kFloat) + t1.to(at::kFloat)).to(at::kHalf)));
  // Float to int truncates toward zero, as a C++ cast does.
  EXPECT_TRUE(at::equal(outputs[2], t0.trunc().to(at::kLong)));
}

TEST_F(AtenEvaluatorTest, Reductions) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeSymbolicTensor(3);
  fusion->addInput(tv0);
  fusion->addOutput(sum(tv0, {1}, /*keep_dim=*/true));
  fusion->addOutput(sum(tv0, {0, 2}));
  fusion->addOutput(max(tv0, {2}));
  fusion->addOutput(min(tv0, {0}, /*keep_dim=*/true));
  fusion->addOutput(mean(tv0, {1}));

  at::Tensor t0 = at::randn({2, 3, 4});
  auto outputs = evaluateFusionWithATen(fusion.get(), {t0});
  ASSERT_EQ(outputs.size(), 5u);
  expectClose(outputs[0], t0.sum(Dims{1}, /*keepdim=*/true));
  expectClose(outputs[1], t0.sum(Dims{0, 2}));
  expectClose(outputs[2], t0.amax(Dims{2}));
  expectClose(outputs[3], t0.amin(Dims{0}, /*keepdim=*/true));
  expectClose(outputs[4], t0.mean(Dims{1}));
}

// An rFactor splits the reduced axis; with 10 elements split by 4 the
// partial reduction sees padding, which must not change the result.
TEST_F(AtenEvaluatorTest, RFactoredReductionWithPadding) {
  for (auto op : {ReductionOpType::Sum, ReductionOpType::Max}) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* tv0 = makeSymbolicTensor(2);
    fusion->addInput(tv0);
    TensorView* tv1 = reductionOp(op, {1}, tv0);
    fusion->addOutput(tv1);
    tv1->split(1, 4);
    tv1->rFactor({1});

    // All negative, so that zero padding would win a max.
    at::Tensor t0 = -at::rand({3, 10}) - 1;
    auto outputs = evaluateFusionWithATen(fusion.get(), {t0});
    ASSERT_EQ(outputs.size(), 1u);
    expectClose(
        outputs[0],
        op == ReductionOpType::Sum ? t0.sum(Dims{1}) : t0.amax(Dims{1}));
  }
}

// A reduction of a reduction's output (whose input tensor has already
// dropped the reduced axis), and caches inserted by scheduling.
TEST_F(AtenEvaluatorTest, ChainedReductionsAndCaches) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeSymbolicTensor(3);
  fusion->addInput(tv0);
  TensorView* row_sums = sum(tv0, {2});
  TensorView* total = sum(row_sums, {0, 1});
  TensorView* transposed = permute(tv0, {1, 2, 0});
  fusion->addOutput(total);
  fusion->addOutput(transposed);
  tv0->cacheAfter();
  total->cacheBefore();
  transposed->cacheBefore();

  at::Tensor t0 = at::randn({2, 3, 4});
  auto outputs = evaluateFusionWithATen(fusion.get(), {t0});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_TRUE(at::allclose(outputs[0], t0.sum(), 1e-5, 1e-5));
  EXPECT_TRUE(at::equal(outputs[1], t0.permute({1, 2, 0})));
}

TEST_F(AtenEvaluatorTest, PermuteAndReshape) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigConcreteTensor({2, 3, 4});
  fusion->addInput(tv0);
  fusion->addOutput(permute(tv0, {2, 0, 1}));
  fusion->addOutput(reshape(tv0, {6, 4}));
  fusion->addOutput(reshape(tv0, {4, -1}));
  fusion->addOutput(transpose(tv0, 0, 2));

  at::Tensor t0 = at::randn({2, 3, 4});
  auto outputs = evaluateFusionWithATen(fusion.get(), {t0});
  ASSERT_EQ(outputs.size(), 4u);
  EXPECT_TRUE(at::equal(outputs[0], t0.permute({2, 0, 1})));
  EXPECT_TRUE(at::equal(outputs[1], t0.reshape({6, 4})));
  EXPECT_TRUE(at::equal(outputs[2], t0.reshape({4, 6})));
  EXPECT_TRUE(at::equal(outputs[3], t0.transpose(0, 2)));
}

// A reshape of a tensor of unknown sizes, to sizes given by a scalar input
// and an extent of the input: the view takes the sizes it is asked for,
// and sizes that do not hold the elements are a user error.
TEST_F(AtenEvaluatorTest, SymbolicReshape) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigTensor(2);
  Val* rows = IrBuilder::create<Val>(DataType::Int);
  fusion->addInput(tv0);
  fusion->addInput(rows);
  fusion->addOutput(reshape(tv0, {-1}));
  fusion->addOutput(reshape(
      tv0, std::vector<Val*>{
               rows, IrBuilder::indexConst(-1), tv0->axis(0)->extent()}));

  at::Tensor t0 = at::randn({3, 8});
  auto outputs = evaluateFusionWithATen(fusion.get(), {t0, int64_t(2)});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_TRUE(at::equal(outputs[0], t0.reshape({24})));
  EXPECT_TRUE(at::equal(outputs[1], t0.reshape({2, 4, 3})));
  EXPECT_THAT(
      [&]() {
        evaluateFusionWithATen(fusion.get(), {t0, int64_t(5)});
      },
      ::testing::ThrowsMessage<UserError>(
          HasSubstr("has 24 elements, but the sizes asked for, [5, 1, 3], "
                    "hold 15")));
}

// clamp, addcmul and lerp are compositions of elementwise ops with
// PyTorch's results: NaN stays NaN through clamp, either bound may be
// absent, and a bf16 lerp promotes like torch.lerp.
TEST_F(AtenEvaluatorTest, ClampAddcmulAndLerp) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addInput(y);
  fusion->addInput(w);
  fusion->addOutput(
      clamp(x, IrBuilder::create<Val>(-0.5), IrBuilder::create<Val>(0.25)));
  fusion->addOutput(clamp(x, nullptr, IrBuilder::create<Val>(0.1)));
  fusion->addOutput(addcmul(x, y, w, IrBuilder::create<Val>(0.5)));
  fusion->addOutput(lerp(x, y, w));
  fusion->addOutput(lerp(x, y, IrBuilder::create<Val>(0.75)));

  at::Tensor tx = at::randn({5, 7});
  tx.index_put_({1, 2}, NAN);
  at::Tensor ty = at::randn({5, 7});
  at::Tensor tw = at::rand({5, 7});
  auto outputs = evaluateFusionWithATen(fusion.get(), {tx, ty, tw});
  ASSERT_EQ(outputs.size(), 5u);
  EXPECT_TRUE(
      at::allclose(outputs[0], at::clamp(tx, -0.5, 0.25), 1e-6, 1e-6, true));
  EXPECT_TRUE(std::isnan(outputs[0][1][2].item<float>()));
  EXPECT_TRUE(
      at::allclose(outputs[1], at::clamp_max(tx, 0.1), 1e-6, 1e-6, true));
  EXPECT_TRUE(
      at::allclose(outputs[2], at::addcmul(tx, ty, tw, 0.5), 1e-6, 1e-6, true));
  EXPECT_TRUE(at::allclose(outputs[3], at::lerp(tx, ty, tw), 1e-6, 1e-6, true));
  EXPECT_TRUE(
      at::allclose(outputs[4], at::lerp(tx, ty, 0.75), 1e-6, 1e-6, true));
  EXPECT_THAT(
      [&]() { clamp(x, nullptr, nullptr); },
      ::testing::ThrowsMessage<UserError>(HasSubstr("give min, max or both")));
}

// squeeze views the other axes (a broadcast axis, or one that is 1 when
// the fusion runs); unsqueeze inserts a broadcast axis.
TEST_F(AtenEvaluatorTest, SqueezeAndUnsqueeze) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigConcreteTensor({-1, 1, -1});
  TensorView* y = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addInput(y);
  fusion->addOutput(squeeze(x, {1}));
  fusion->addOutput(squeeze(y, {0}));
  fusion->addOutput(unsqueeze(y, -1));
  EXPECT_EQ(unsqueeze(y, 0)->axis(0)->isBroadcast(), true);

  at::Tensor tx = at::randn({3, 1, 5});
  at::Tensor ty = at::randn({1, 7});
  auto outputs = evaluateFusionWithATen(fusion.get(), {tx, ty});
  EXPECT_TRUE(at::equal(outputs[0], tx.squeeze(1)));
  EXPECT_TRUE(at::equal(outputs[1], ty.squeeze(0)));
  EXPECT_TRUE(at::equal(outputs[2], ty.unsqueeze(-1)));
  // The symbolic axis must be 1 when the fusion runs.
  EXPECT_THAT(
      [&]() {
        evaluateFusionWithATen(fusion.get(), {tx, at::randn({2, 7})});
      },
      ::testing::ThrowsMessage<UserError>(HasSubstr("hold 7")));
  EXPECT_THAT(
      [&]() { squeeze(makeContigConcreteTensor({4, 2}), {1}); },
      ::testing::ThrowsMessage<UserError>(
          HasSubstr("only axes of size 1 can be squeezed")));
  EXPECT_THAT(
      [&]() { unsqueeze(y, 3); },
      ::testing::ThrowsMessage<UserError>(HasSubstr("out of range")));
}

TEST_F(AtenEvaluatorTest, WhereAndScalarInput) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeSymbolicTensor(2);
  Val* alpha = IrBuilder::create<Val>(DataType::Double);
  fusion->addInput(tv0);
  fusion->addInput(alpha);
  TensorView* positive = gt(tv0, doubleConstant(0.0));
  fusion->addOutput(where(positive, tv0, doubleConstant(0.0)));
  // A scalar expression of an input feeds a tensor op.
  fusion->addOutput(mul(tv0, add(alpha, doubleConstant(1.0))));
  fusion->addOutput(positive);

  at::Tensor t0 = at::randn({5, 3});
  auto outputs = evaluateFusionWithATen(fusion.get(), {t0, 0.5});
  ASSERT_EQ(outputs.size(), 3u);
  expectClose(outputs[0], at::where(t0 > 0, t0, at::zeros_like(t0)));
  expectClose(outputs[1], t0 * 1.5);
  EXPECT_TRUE(at::equal(outputs[2], t0 > 0));
}

TEST_F(AtenEvaluatorTest, UnaryOps) {
  using Builder = std::function<TensorView*(TensorView*)>;
  using Reference = std::function<at::Tensor(const at::Tensor&)>;
  const std::vector<std::tuple<const char*, Builder, Reference>> cases = {
      {"neg", [](TensorView* x) { return neg(x); },
       [](const at::Tensor& x) { return at::neg(x); }},
      {"abs", [](TensorView* x) { return abs(x); },
       [](const at::Tensor& x) { return at::abs(x); }},
      {"exp", [](TensorView* x) { return exp(x); },
       [](const at::Tensor& x) { return at::exp(x); }},
      {"log", [](TensorView* x) { return log(abs(x)); },
       [](const at::Tensor& x) { return at::log(at::abs(x)); }},
      {"sqrt", [](TensorView* x) { return sqrt(abs(x)); },
       [](const at::Tensor& x) { return at::sqrt(at::abs(x)); }},
      {"rsqrt", [](TensorView* x) { return rsqrt(abs(x)); },
       [](const at::Tensor& x) { return at::rsqrt(at::abs(x)); }},
      {"reciprocal", [](TensorView* x) { return reciprocal(x); },
       [](const at::Tensor& x) { return at::reciprocal(x); }},
      {"relu", [](TensorView* x) { return relu(x); },
       [](const at::Tensor& x) { return at::relu(x); }},
      {"sigmoid", [](TensorView* x) { return sigmoid(x); },
       [](const at::Tensor& x) { return at::sigmoid(x); }},
      {"tanh", [](TensorView* x) { return tanh(x); },
       [](const at::Tensor& x) { return at::tanh(x); }},
      // The exact (erf) gelu: 0.5 x (1 + erf(x / sqrt(2))).
      {"gelu", [](TensorView* x) { return gelu(x); },
       [](const at::Tensor& x) {
         return 0.5 * x * (1 + at::erf(x / std::sqrt(2.0)));
       }},
      {"silu", [](TensorView* x) { return silu(x); },
       [](const at::Tensor& x) { return x * at::sigmoid(x); }},
      {"sin", [](TensorView* x) { return sin(x); },
       [](const at::Tensor& x) { return at::sin(x); }},
      {"cos", [](TensorView* x) { return cos(x); },
       [](const at::Tensor& x) { return at::cos(x); }},
      {"logical_not", [](TensorView* x) { return logical_not(x); },
       [](const at::Tensor& x) { return at::logical_not(x); }},
  };
  at::Tensor t0 = at::randn({7});
  for (const auto& [name, builder, reference] : cases) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* tv0 = makeContigTensor(1);
    fusion->addInput(tv0);
    fusion->addOutput(builder(tv0));
    auto outputs = evaluateFusionWithATen(fusion.get(), {t0});
    ASSERT_EQ(outputs.size(), 1u) << name;
    SCOPED_TRACE(name);
    expectClose(outputs[0], reference(t0));
  }
}

TEST_F(AtenEvaluatorTest, BinaryOps) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(1, DataType::Int);
  TensorView* b = makeContigTensor(1, DataType::Int);
  fusion->addInput(a);
  fusion->addInput(b);
  fusion->addOutput(div(a, b)); // true division: float
  fusion->addOutput(mod(a, b)); // C semantics: the sign of a
  fusion->addOutput(maximum(a, b));
  fusion->addOutput(le(a, b));
  fusion->addOutput(logical_and(gt(a, b), ne(b, b)));
  fusion->addOutput(pow(castOp(DataType::Double, a), b));

  at::Tensor ta = at::tensor({-7, 7, 9, -9}, at::kLong);
  at::Tensor tb = at::tensor({3, 3, -2, -2}, at::kLong);
  auto outputs = evaluateFusionWithATen(fusion.get(), {ta, tb});
  ASSERT_EQ(outputs.size(), 6u);
  expectClose(outputs[0], ta.to(at::kFloat) / tb.to(at::kFloat));
  EXPECT_TRUE(at::equal(outputs[1], at::tensor({-1, 1, 1, -1}, at::kLong)));
  EXPECT_TRUE(at::equal(outputs[2], at::maximum(ta, tb)));
  EXPECT_TRUE(at::equal(outputs[3], ta <= tb));
  EXPECT_TRUE(at::equal(outputs[4], at::zeros({4}, at::kBool)));
  expectClose(outputs[5], at::pow(ta.to(at::kDouble), tb));
}

TEST_F(AtenEvaluatorTest, InputIsOutput) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigTensor(1);
  fusion->addInput(tv0);
  fusion->addOutput(tv0);
  fusion->addOutput(set(tv0));
  at::Tensor t0 = at::randn({3});
  auto outputs = evaluateFusionWithATen(fusion.get(), {t0});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_TRUE(at::equal(outputs[0], t0));
  EXPECT_TRUE(at::equal(outputs[1], t0));
  // A set is a copy, not a view of the input.
  EXPECT_NE(outputs[1].data_ptr(), t0.data_ptr());
}

TEST_F(AtenEvaluatorTest, BadInputsAreUserErrors) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigConcreteTensor({4});
  fusion->addInput(tv0);
  fusion->addOutput(set(tv0));
  EXPECT_THAT(
      [&] { evaluateFusionWithATen(fusion.get(), {at::randn({5})}); },
      ::testing::ThrowsMessage<UserError>(HasSubstr("constant extent 4")));
  EXPECT_THAT(
      [&] {
        evaluateFusionWithATen(fusion.get(), {at::randn({4}).to(at::kHalf)});
      },
      ::testing::ThrowsMessage<UserError>(HasSubstr("dtype is Half")));
}

// --- testValidate ----------------------------------------------------------

class TestValidateTest : public AtenEvaluatorTest {};

TEST_F(TestValidateTest, AcceptsMatchingOutputsWithEveryInputForm) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeSymbolicTensor(2);
  Val* alpha = IrBuilder::create<Val>(DataType::Double);
  fusion->addInput(tv0);
  fusion->addInput(alpha);
  fusion->addOutput(mul(tv0, alpha));

  at::Tensor t0 = at::randn({4, 3});
  at::Tensor expected = t0 * 2.5;
  // A braced list of a tensor and a double.
  testValidate(fusion.get(), {expected}, {t0, 2.5}, __LINE__, __FILE__);
  // A std::vector<c10::IValue>.
  std::vector<c10::IValue> ivalues = {t0, 2.5};
  testValidate(fusion.get(), {expected}, ivalues, __LINE__, __FILE__);
  // Explicit expected outputs.
  testValidate(
      fusion.get(), {expected}, {t0, 2.5}, {t0 * 2.5}, __LINE__, __FILE__);
}

TEST_F(TestValidateTest, TensorOnlyInputForms) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeSymbolicTensor(1);
  fusion->addInput(tv0);
  fusion->addOutput(relu(tv0));
  at::Tensor t0 = at::randn({9});
  std::vector<at::Tensor> outputs = {at::relu(t0)};
  // The form nvFuser tests use: a braced list of one tensor.
  testValidate(fusion.get(), outputs, {t0}, __LINE__, __FILE__);
  // A std::vector<at::Tensor> lvalue (the template overload).
  std::vector<at::Tensor> inputs = {t0};
  testValidate(fusion.get(), outputs, inputs, __LINE__, __FILE__, "msg");
}

TEST_F(TestValidateTest, CatchesAWrongElement) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeSymbolicTensor(2);
  fusion->addInput(tv0);
  fusion->addOutput(add(tv0, tv0));
  at::Tensor t0 = at::ones({2, 3});
  at::Tensor wrong = t0 * 2;
  wrong[1][2] = 2.5;
  EXPECT_NONFATAL_FAILURE(
      testValidate(fusion.get(), {wrong}, {t0}, __LINE__, __FILE__, "ctx42"),
      "output 0");
  EXPECT_NONFATAL_FAILURE(
      testValidate(fusion.get(), {wrong}, {t0}, __LINE__, __FILE__),
      "worst element at [1, 2]: got 2.5, expected 2");
  EXPECT_NONFATAL_FAILURE(
      testValidate(fusion.get(), {wrong}, {t0}, __LINE__, __FILE__, "ctx42"),
      "ctx42");
  EXPECT_NONFATAL_FAILURE(
      testValidate(fusion.get(), {wrong}, {t0}, __LINE__, __FILE__),
      "max abs error 0.5");
}

TEST_F(TestValidateTest, CatchesShapeDtypeAndCountMismatches) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeSymbolicTensor(1);
  fusion->addInput(tv0);
  fusion->addOutput(neg(tv0));
  at::Tensor t0 = at::randn({4});
  EXPECT_NONFATAL_FAILURE(
      testValidate(
          fusion.get(), {-t0.reshape({2, 2})}, {t0}, __LINE__, __FILE__),
      "sizes differ: got [2, 2], expected [4]");
  EXPECT_NONFATAL_FAILURE(
      testValidate(
          fusion.get(), {(-t0).to(at::kDouble)}, {t0}, __LINE__, __FILE__),
      "dtypes differ: got Double, expected Float");
  EXPECT_NONFATAL_FAILURE(
      testValidate(fusion.get(), {-t0, -t0}, {t0}, __LINE__, __FILE__),
      "got 2 outputs, expected 1");
  // A failing ATen evaluation is reported, not thrown.
  EXPECT_NONFATAL_FAILURE(
      testValidate(fusion.get(), {-t0}, {t0.to(at::kHalf)}, __LINE__, __FILE__),
      "the ATen evaluation of the fusion failed");
}

TEST_F(TestValidateTest, DtypeAwareTolerances) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* f32 = makeContigTensor(1);
  TensorView* f16 = makeContigTensor(1, DataType::Half);
  TensorView* i64 = makeContigTensor(1, DataType::Int);
  fusion->addInput(f32);
  fusion->addInput(f16);
  fusion->addInput(i64);
  fusion->addOutput(set(f32));
  fusion->addOutput(set(f16));
  fusion->addOutput(set(i64));
  at::Tensor a = at::ones({4});
  at::Tensor h = at::ones({4}, at::kHalf);
  at::Tensor i = at::ones({4}, at::kLong);
  // One half ulp off (2^-10 at 1.0) passes, 1% does not.
  testValidate(
      fusion.get(), {a * (1 + 2e-6), h + 0.0009765625, i}, {a, h, i}, __LINE__,
      __FILE__);
  EXPECT_NONFATAL_FAILURE(
      testValidate(
          fusion.get(), {a * (1 + 1e-4), h, i}, {a, h, i}, __LINE__, __FILE__),
      "output 0");
  EXPECT_NONFATAL_FAILURE(
      testValidate(
          fusion.get(), {a, h * 1.01, i}, {a, h, i}, __LINE__, __FILE__),
      "output 1");
  EXPECT_NONFATAL_FAILURE(
      testValidate(fusion.get(), {a, h, i + 1}, {a, h, i}, __LINE__, __FILE__),
      "output 2");
}

TEST_F(TestValidateTest, NaNsMustMatch) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigTensor(1);
  fusion->addInput(tv0);
  fusion->addOutput(sqrt(tv0));
  at::Tensor t0 = at::tensor({4.0f, -1.0f, 9.0f});
  testValidate(fusion.get(), {at::sqrt(t0)}, {t0}, __LINE__, __FILE__);
  EXPECT_NONFATAL_FAILURE(
      testValidate(
          fusion.get(), {at::tensor({2.0f, 0.0f, 3.0f})}, {t0}, __LINE__,
          __FILE__),
      "worst element at [1]: got 0, expected nan");
}

// Reductions widen the tolerance with sqrt(reduced elements).
TEST_F(TestValidateTest, ReductionScalesTolerance) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeContigTensor(1);
  fusion->addInput(tv0);
  TensorView* total = sum(tv0, {0});
  fusion->addOutput(total);
  at::Tensor t0 = at::ones({10000});
  at::Tensor expected = t0.sum();
  // A relative error of 1e-4: over 10000 elements the tolerance is 1e-3.
  testValidate(fusion.get(), {expected * (1 + 1e-4)}, {t0}, __LINE__, __FILE__);
  EXPECT_NONFATAL_FAILURE(
      testValidate(
          fusion.get(), {expected * (1 + 1e-2)}, {t0}, __LINE__, __FILE__),
      "output 0");
}

// The same evaluation on CUDA tensors stays on the device.
class AtenEvaluatorGpuTest : public FuserTest {};

TEST_F(AtenEvaluatorGpuTest, EvaluatesOnTheInputsDevice) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* tv0 = makeSymbolicTensor(2, DataType::Half);
  fusion->addInput(tv0);
  TensorView* tv1 = gelu(tv0);
  fusion->addOutput(tv1);
  fusion->addOutput(sum(tv1, {1}));

  at::Tensor t0 = at::randn({64, 128}, at::TensorOptions().dtype(at::kHalf));
  at::Tensor t0_cuda = t0.cuda();
  auto on_gpu = evaluateFusionWithATen(fusion.get(), {t0_cuda});
  ASSERT_EQ(on_gpu.size(), 2u);
  EXPECT_TRUE(on_gpu[0].is_cuda());
  EXPECT_TRUE(on_gpu[1].is_cuda());
  // GPU results checked against the CPU evaluation and against the fusion.
  testValidate(
      fusion.get(), {on_gpu[0].cpu(), on_gpu[1].cpu()}, {t0}, __LINE__,
      __FILE__);
  testValidate(fusion.get(), on_gpu, {t0_cuda}, __LINE__, __FILE__);
  EXPECT_NONFATAL_FAILURE(
      testValidate(
          fusion.get(), {on_gpu[0] + 1, on_gpu[1]}, {t0_cuda}, __LINE__,
          __FILE__),
      "output 0");
}

} // namespace fuser
