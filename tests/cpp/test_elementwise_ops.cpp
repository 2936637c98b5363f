// The elementwise math ops beyond arithmetic (doc/ops.md): float
// functions, rounding, sign and the predicates, remainder, atan2, bitwise
// ops, shifts and gcd. On the CPU: their types and errors, their kernels
// compiled with NVRTC for every type they take, and the host evaluator's
// values against ATen's. On the GPU: every op against ATen over several
// types and layouts, edge values included.
#include <codegen/codegen.h>
#include <expr/evaluator.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/aten_evaluator.h>
#include <runtime/fusion_executor_cache.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace fuser {

using ::testing::HasSubstr;

class ElementwiseOpsTest : public FuserIrTest {};
class ElementwiseOpsGpuTest : public FuserTest {
 protected:
  void SetUp() override {
    FuserTest::SetUp();
    at::manual_seed(0);
  }
};

namespace {

using UnaryBuilder = TensorView* (*)(TensorView*);
using BinaryBuilder = TensorView* (*)(TensorView*, TensorView*);

struct UnaryCase {
  std::string name;
  UnaryBuilder op;
  at::Tensor (*torch_op)(const at::Tensor&);
  // The inputs it is defined on, as a function of a uniform [0, 1) draw.
  std::function<at::Tensor(const at::Tensor&)> domain;
};

at::Tensor signedUnit(const at::Tensor& u) {
  return u * 1.98 - 0.99;
}

// torch has no erfcinv: -ndtri(x / 2) / sqrt(2), in double.
at::Tensor erfcinvReference(const at::Tensor& x) {
  return (at::special_ndtri(x.to(at::kDouble) * 0.5) * -M_SQRT1_2)
      .to(x.scalar_type());
}

std::vector<UnaryCase> floatFunctions() {
  auto wide = [](const at::Tensor& u) { return u * 8 - 4; };
  auto positive = [](const at::Tensor& u) { return u * 10 + 0.05; };
  return {
      {"acos", acos, at::acos, signedUnit},
      {"acosh", acosh, at::acosh,
       [](const at::Tensor& u) { return u * 9 + 1; }},
      {"asin", asin, at::asin, signedUnit},
      {"asinh", asinh, at::asinh, wide},
      {"atan", atan, at::atan, wide},
      {"atanh", atanh, at::atanh, signedUnit},
      {"cosh", cosh, at::cosh, wide},
      {"sinh", sinh, at::sinh, wide},
      {"tan", tan, at::tan, [](const at::Tensor& u) { return u * 2.8 - 1.4; }},
      {"exp2", exp2, at::exp2, wide},
      {"expm1", expm1, at::expm1, wide},
      {"erf", erf, at::erf, wide},
      {"erfc", erfc, at::erfc, wide},
      {"erfinv", erfinv, at::erfinv, signedUnit},
      {"erfcinv", erfcinv, erfcinvReference,
       [](const at::Tensor& u) { return u * 1.96 + 0.02; }},
      {"lgamma", lgamma, at::lgamma, positive},
      {"log10", log10, at::log10, positive},
      {"log1p", log1p, at::log1p, positive},
      {"log2", log2, at::log2, positive},
      {"ceil", ceil, at::ceil, wide},
      {"floor", floor, at::floor, wide},
      {"round", round, at::round, wide},
      {"trunc", trunc, at::trunc, wide},
      {"frac", frac, at::frac, wide},
      {"sign", sign, at::sign, wide},
  };
}

std::vector<UnaryCase> predicates() {
  auto any = [](const at::Tensor& u) { return u * 8 - 4; };
  return {
      {"signbit", signbit, at::signbit, any},
      {"isnan", isnan, at::isnan, any},
      {"isinf", isinf, at::isinf, any},
      {"isfinite", isfinite, at::isfinite, any},
  };
}

struct BinaryCase {
  std::string name;
  BinaryBuilder op;
  at::Tensor (*torch_op)(const at::Tensor&, const at::Tensor&);
};

std::vector<BinaryCase> integerOps() {
  return {
      {"bitwise_and", bitwise_and, at::bitwise_and},
      {"bitwise_or", bitwise_or, at::bitwise_or},
      {"bitwise_xor", bitwise_xor, at::bitwise_xor},
      {"bitwise_left_shift", bitwise_left_shift, at::bitwise_left_shift},
      {"bitwise_right_shift", bitwise_right_shift, at::bitwise_right_shift},
      {"gcd", gcd, at::gcd},
      {"remainder", remainder, at::remainder},
  };
}

// Edge values of the float functions: NaN, infinities, signed zeros,
// halfway points for rounding, a subnormal and large magnitudes.
at::Tensor edgeValues(at::ScalarType dtype) {
  const double inf = std::numeric_limits<double>::infinity();
  return at::tensor(
             {std::nan(""), inf, -inf, -0.0, 0.0, 0.5, -0.5, 1.5, -1.5, 2.5,
              -2.5, 3.5, 1e-40, -1e-40, 1e30, -1e30, 7.25, -7.75},
             at::kDouble)
      .to(dtype);
}

at::ScalarType atenType(DataType dtype) {
  switch (dtype) {
    case DataType::Float:
      return at::kFloat;
    case DataType::Double:
      return at::kDouble;
    case DataType::BFloat16:
      return at::kBFloat16;
    case DataType::Half:
      return at::kHalf;
    case DataType::Int32:
      return at::kInt;
    case DataType::Bool:
      return at::kBool;
    default:
      return at::kLong;
  }
}

std::unique_ptr<Fusion> unaryFusion(UnaryBuilder op, DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeSymbolicTensor(2, dtype);
  fusion->addInput(x);
  fusion->addOutput(op(x));
  return fusion;
}

std::unique_ptr<Fusion> binaryFusion(BinaryBuilder op, DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeSymbolicTensor(2, dtype);
  TensorView* b = makeSymbolicTensor(2, dtype);
  fusion->addInput(a);
  fusion->addInput(b);
  fusion->addOutput(op(a, b));
  return fusion;
}

} // namespace

// ---- Types and errors (CPU).

TEST_F(ElementwiseOpsTest, ResultTypesFollowPyTorch) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* i64 = makeContigTensor(1, DataType::Int);
  TensorView* i32 = makeContigTensor(1, DataType::Int32);
  TensorView* bf16 = makeContigTensor(1, DataType::BFloat16);
  TensorView* f64 = makeContigTensor(1, DataType::Double);
  TensorView* flag = makeContigTensor(1, DataType::Bool);
  // Float functions of integers give the default float type.
  EXPECT_EQ(erfinv(i64)->dtype(), DataType::Float);
  EXPECT_EQ(erfcinv(i64)->dtype(), DataType::Float);
  EXPECT_EQ(nextafter(f64, f64)->dtype(), DataType::Double);
  EXPECT_EQ(atan2(i32, i32)->dtype(), DataType::Float);
  // 16-bit floats compute in float and round back.
  TensorView* lg = lgamma(bf16);
  EXPECT_EQ(lg->dtype(), DataType::BFloat16);
  EXPECT_EQ(lg->definition()->as<UnaryOp>()->opType(), UnaryOpType::Cast);
  EXPECT_EQ(expm1(f64)->dtype(), DataType::Double);
  // Rounding an integer is a copy of it.
  TensorView* floored = floor(i32);
  EXPECT_EQ(floored->dtype(), DataType::Int32);
  EXPECT_TRUE(floored->definition()->isA<LoadStoreOp>());
  // Predicates are bool, computed in the operand's type (float for bf16).
  TensorView* nan = isnan(bf16);
  EXPECT_EQ(nan->dtype(), DataType::Bool);
  EXPECT_EQ(nan->definition()->as<UnaryOp>()->in()->dtype(), DataType::Float);
  EXPECT_EQ(signbit(i64)->dtype(), DataType::Bool);
  // Integer ops keep the promoted integer type; bools stay bool.
  EXPECT_EQ(bitwise_and(i32, i64)->dtype(), DataType::Int);
  EXPECT_EQ(bitwise_xor(flag, flag)->dtype(), DataType::Bool);
  EXPECT_EQ(bitwise_not(flag)->dtype(), DataType::Bool);
  EXPECT_EQ(gcd(i32, i32)->dtype(), DataType::Int32);
  EXPECT_EQ(
      bitwise_left_shift(i64, IrBuilder::create<Val>(int64_t{3}))->dtype(),
      DataType::Int);
  EXPECT_EQ(remainder(i32, i32)->dtype(), DataType::Int32);
  EXPECT_EQ(remainder(bf16, bf16)->dtype(), DataType::BFloat16);
}

TEST_F(ElementwiseOpsTest, OperandsOfTheWrongKindAreUserErrors) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* f32 = makeContigTensor(1);
  TensorView* i64 = makeContigTensor(1, DataType::Int);
  TensorView* flag = makeContigTensor(1, DataType::Bool);
  EXPECT_THAT(
      [&]() { bitwise_and(f32, i64); },
      ::testing::ThrowsMessage<UserError>(
          HasSubstr("bitwise_and: expected integer or bool operands; got T0")));
  EXPECT_THAT(
      [&]() { bitwise_left_shift(flag, i64); },
      ::testing::ThrowsMessage<UserError>(
          HasSubstr("bitwise_left_shift: expected integer operands")));
  EXPECT_THAT(
      [&]() { gcd(i64, f32); },
      ::testing::ThrowsMessage<UserError>(HasSubstr("Cast it first")));
  EXPECT_THAT(
      [&]() { bitwise_not(f32); },
      ::testing::ThrowsMessage<UserError>(
          HasSubstr("bitwise_not: expected an integer or bool operand")));
  EXPECT_THAT(
      [&]() { frac(i64); }, ::testing::ThrowsMessage<UserError>(HasSubstr(
                                "frac: expected a floating-point operand")));
  // nextafter steps in the operands' own type: float or double only.
  EXPECT_THAT(
      [&]() {
        TensorView* bf16 = makeContigTensor(1, DataType::BFloat16);
        nextafter(bf16, bf16);
      },
      ::testing::ThrowsMessage<UserError>(
          HasSubstr("nextafter: takes float or double operands")));
  EXPECT_THAT(
      [&]() { nextafter(i64, i64); },
      ::testing::ThrowsMessage<UserError>(HasSubstr("Cast them to float")));
  // The fusion stays usable after the errors.
  fusion.addInput(i64);
  fusion.addOutput(bitwise_not(i64));
  EXPECT_EQ(fusion.outputs().size(), 1u);
}

// ---- Kernels (CPU: NVRTC).

TEST_F(ElementwiseOpsTest, EveryOpCompilesForEveryTypeItTakes) {
  const auto u = at::rand({8, 33});
  for (DataType dtype :
       {DataType::Float, DataType::Double, DataType::BFloat16,
        DataType::Half}) {
    const at::Tensor x = u.to(atenType(dtype));
    for (const auto& cases : {floatFunctions(), predicates()}) {
      for (const UnaryCase& c : cases) {
        SCOPED_TRACE(c.name + " of " + toString(dtype));
        EXPECT_EQ(
            scheduleAndCompile(*unaryFusion(c.op, dtype), {x}).type,
            SchedulerType::PointWise);
      }
    }
    SCOPED_TRACE("atan2, remainder of " + toString(dtype));
    EXPECT_NO_THROW(scheduleAndCompile(*binaryFusion(atan2, dtype), {x, x}));
    EXPECT_NO_THROW(
        scheduleAndCompile(*binaryFusion(remainder, dtype), {x, x}));
    if (dtype == DataType::Float || dtype == DataType::Double) {
      EXPECT_NO_THROW(
          scheduleAndCompile(*binaryFusion(nextafter, dtype), {x, x}));
    }
  }
  for (DataType dtype : {DataType::Int32, DataType::Int}) {
    const at::Tensor x = at::randint(1, 9, {8, 33}).to(atenType(dtype));
    for (const BinaryCase& c : integerOps()) {
      SCOPED_TRACE(c.name + " of " + toString(dtype));
      EXPECT_NO_THROW(scheduleAndCompile(*binaryFusion(c.op, dtype), {x, x}));
    }
    EXPECT_NO_THROW(
        scheduleAndCompile(*binaryFusion(logical_right_shift, dtype), {x, x}));
    for (UnaryBuilder op : std::vector<UnaryBuilder>{
             bitwise_not, sign, signbit, isnan, isinf, isfinite}) {
      EXPECT_NO_THROW(scheduleAndCompile(*unaryFusion(op, dtype), {x}));
    }
  }
  const at::Tensor flags = at::rand({8, 33}) > 0.5;
  for (BinaryBuilder op :
       std::vector<BinaryBuilder>{bitwise_and, bitwise_or, bitwise_xor}) {
    EXPECT_NO_THROW(
        scheduleAndCompile(*binaryFusion(op, DataType::Bool), {flags, flags}));
  }
  EXPECT_NO_THROW(
      scheduleAndCompile(*unaryFusion(bitwise_not, DataType::Bool), {flags}));
}

TEST_F(ElementwiseOpsTest, GeneratedCodeUsesTheRuntimeHelpers) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(1);
  TensorView* n = makeContigTensor(1, DataType::Int);
  TensorView* flag = makeContigTensor(1, DataType::Bool);
  fusion->addInput(x);
  fusion->addInput(n);
  fusion->addInput(flag);
  fusion->addOutput(round(x));
  fusion->addOutput(erfinv(x));
  fusion->addOutput(erfcinv(x));
  fusion->addOutput(nextafter(x, x));
  fusion->addOutput(remainder(x, x));
  fusion->addOutput(logical_right_shift(n, n));
  fusion->addOutput(bitwise_not(flag));
  fusion->addOutput(bitwise_not(n));
  const std::string code = generateCudaKernel(fusion.get(), DataType::Int32);
  EXPECT_THAT(code, HasSubstr("rintf(")); // half to even, as torch.round
  EXPECT_THAT(code, HasSubstr("erfinvf("));
  EXPECT_THAT(code, HasSubstr("erfcinvf("));
  EXPECT_THAT(code, HasSubstr("nextafterf("));
  EXPECT_THAT(code, HasSubstr("fuserRemainder("));
  EXPECT_THAT(code, HasSubstr("fuserLogicalRightShift("));
  EXPECT_THAT(code, HasSubstr("(!")); // not ~: ~true is true
  EXPECT_THAT(code, HasSubstr("(~"));
}

// ---- The host's evaluation of scalars, against ATen (CPU).

TEST_F(ElementwiseOpsTest, ScalarValuesMatchATen) {
  const std::vector<double> points = {-3.75, -1.5, -0.5, -0.0, 0.25,
                                      0.5,   0.9,  2.5,  6.0};
  for (const auto& cases : {floatFunctions(), predicates()}) {
    for (const UnaryCase& c : cases) {
      for (double p : points) {
        const at::Tensor expected = c.torch_op(at::tensor({p}, at::kDouble));
        Fusion fusion;
        FusionGuard fg(&fusion);
        // The op's type, read off a tensor use of it; then the op on a
        // constant scalar.
        const UnaryOpType type = c.op(makeContigTensor(1, DataType::Double))
                                     ->definition()
                                     ->as<UnaryOp>()
                                     ->opType();
        Val* result = unaryOp(type, IrBuilder::create<Val>(p));
        ExpressionEvaluator ee;
        auto value = ee.evaluate(result);
        ASSERT_TRUE(value.has_value()) << c.name;
        const double want = expected.to(at::kDouble).item<double>();
        const double got = value->asDouble();
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got)) << c.name << "(" << p << ")";
        } else if (std::isinf(want)) {
          EXPECT_EQ(got, want) << c.name << "(" << p << ")";
        } else {
          EXPECT_NEAR(got, want, 1e-12 * (1 + std::fabs(want)))
              << c.name << "(" << p << ")";
        }
      }
    }
  }
}

TEST_F(ElementwiseOpsTest, ScalarIntegerOpsMatchATen) {
  const std::vector<std::pair<int64_t, int64_t>> pairs = {
      {-7, 64}, {7, -1}, {-8, 3},  {5, 70},  {-12, 18},
      {0, 0},   {0, -5}, {7, -21}, {-1, 63}, {12345, 2}};
  for (const BinaryCase& c : integerOps()) {
    for (auto [a, b] : pairs) {
      if (c.name == "remainder" && b == 0) {
        continue;
      }
      const int64_t want =
          c.torch_op(at::tensor({a}, at::kLong), at::tensor({b}, at::kLong))
              .item<int64_t>();
      Fusion fusion;
      FusionGuard fg(&fusion);
      TensorView* probe = c.op(
          makeContigTensor(1, DataType::Int),
          makeContigTensor(1, DataType::Int));
      Val* result = binaryOp(
          probe->definition()->as<BinaryOp>()->opType(),
          IrBuilder::create<Val>(a), IrBuilder::create<Val>(b));
      ExpressionEvaluator ee;
      EXPECT_EQ(ee.evaluate(result)->asInt(), want)
          << c.name << "(" << a << ", " << b << ")";
    }
  }
}

// ATen has no logical right shift; the reference masks the arithmetic one.
TEST_F(ElementwiseOpsTest, LogicalRightShiftReferenceFillsZeros) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(1, DataType::Int);
  TensorView* b = makeContigTensor(1, DataType::Int);
  TensorView* a32 = makeContigTensor(1, DataType::Int32);
  TensorView* b32 = makeContigTensor(1, DataType::Int32);
  fusion->addInput(a);
  fusion->addInput(b);
  fusion->addInput(a32);
  fusion->addInput(b32);
  fusion->addOutput(logical_right_shift(a, b));
  fusion->addOutput(logical_right_shift(a32, b32));
  const at::Tensor ta = at::tensor({-1, -8, 8, -1, -1, 5}, at::kLong);
  const at::Tensor tb = at::tensor({0, 1, 2, 63, 64, -1}, at::kLong);
  auto outputs = evaluateFusionWithATen(
      fusion.get(), {ta, tb, ta.to(at::kInt), tb.to(at::kInt)});
  EXPECT_TRUE(at::equal(
      outputs[0], at::tensor(
                      {int64_t{-1}, int64_t{0x7ffffffffffffffc}, int64_t{2},
                       int64_t{1}, int64_t{0}, int64_t{0}},
                      at::kLong)));
  EXPECT_TRUE(at::equal(
      outputs[1], at::tensor({-1, 0x7ffffffc, 2, 0, 0, 0}, at::kInt)));
}

// ---- On the GPU, against ATen.

namespace {

// The input in three layouts: contiguous, transposed and a strided view.
std::vector<at::Tensor> layouts(const at::Tensor& contiguous) {
  return {
      contiguous, contiguous.t().contiguous().t(),
      at::cat({contiguous, contiguous}, 1).slice(1, 0, c10::nullopt, 2)};
}

void expectSameAsTorch(
    const at::Tensor& out, const at::Tensor& expected,
    const std::string& what) {
  ASSERT_EQ(out.scalar_type(), expected.scalar_type()) << what;
  ASSERT_EQ(out.sizes(), expected.sizes()) << what;
  const bool exact =
      !at::isFloatingType(expected.scalar_type()) || expected.numel() == 0;
  if (exact) {
    EXPECT_TRUE(at::equal(out, expected)) << what;
    return;
  }
  const double tol = expected.scalar_type() == at::kBFloat16 ? 1e-2
                     : expected.scalar_type() == at::kHalf   ? 1e-3
                     : expected.scalar_type() == at::kFloat  ? 2e-6
                                                             : 1e-12;
  EXPECT_TRUE(at::allclose(out, expected, tol, tol, /*equal_nan=*/true))
      << what << ": max error "
      << (out.to(at::kDouble) - expected.to(at::kDouble))
             .abs()
             .nan_to_num(0)
             .max()
             .item<double>();
}

} // namespace

TEST_F(ElementwiseOpsGpuTest, FloatFunctionsMatchTorch) {
  const auto cuda = at::TensorOptions().device(at::kCUDA);
  for (const auto& cases : {floatFunctions(), predicates()}) {
    for (const UnaryCase& c : cases) {
      for (DataType dtype :
           {DataType::Float, DataType::Double, DataType::BFloat16}) {
        FusionExecutorCache fec(unaryFusion(c.op, dtype));
        const at::Tensor x =
            c.domain(at::rand({257, 130}, cuda.dtype(at::kDouble)))
                .to(atenType(dtype));
        for (const at::Tensor& input : layouts(x)) {
          const std::string what = c.name + " of " + toString(dtype) +
                                   " strides " + c10::str(input.strides());
          auto outputs = fec.runFusionWithInputs({input});
          expectSameAsTorch(outputs[0], c.torch_op(input), what);
          testValidate(
              fec.fusion(), outputs, {input}, __LINE__, __FILE__, what);
        }
        // Edge values: NaN, infinities, signed zeros, halfway points.
        const at::Tensor edges =
            edgeValues(atenType(dtype)).to(at::kCUDA).reshape({3, 6});
        auto outputs = fec.runFusionWithInputs({edges});
        expectSameAsTorch(
            outputs[0], c.torch_op(edges), c.name + " of edge values");
      }
    }
  }
}

TEST_F(ElementwiseOpsGpuTest, FloatBinaryOpsMatchTorch) {
  const auto cuda = at::TensorOptions().device(at::kCUDA);
  for (DataType dtype :
       {DataType::Float, DataType::Double, DataType::BFloat16}) {
    for (auto [name, op, torch_op] : std::vector<
             std::tuple<std::string, BinaryBuilder, decltype(&at::atan2)>>{
             {"atan2", atan2, at::atan2},
             {"remainder", remainder, at::remainder},
             {"fmod", mod, at::fmod}}) {
      FusionExecutorCache fec(binaryFusion(op, dtype));
      const at::Tensor a =
          (at::randn({300, 70}, cuda) * 10).to(atenType(dtype));
      at::Tensor b = (at::randn({300, 70}, cuda) * 3).to(atenType(dtype));
      b = at::where(b.abs() < 0.1, at::ones_like(b), b);
      for (const at::Tensor& lhs : layouts(a)) {
        auto outputs = fec.runFusionWithInputs({lhs, b});
        expectSameAsTorch(
            outputs[0], torch_op(lhs, b), name + " of " + toString(dtype));
      }
    }
  }
  // nextafter: float and double, exactly (one ulp apart, equal operands,
  // signed zeros and NaN included).
  for (DataType dtype : {DataType::Float, DataType::Double}) {
    FusionExecutorCache fec(binaryFusion(nextafter, dtype));
    at::Tensor a = at::randn({300, 70}, cuda).to(atenType(dtype));
    at::Tensor b = at::randn({300, 70}, cuda).to(atenType(dtype));
    b.index_put_({0}, a.index({0}));
    // Of the fusion's rank (a regression: rank 1 was passed).
    const at::Tensor edges =
        edgeValues(atenType(dtype)).to(at::kCUDA).reshape({3, 6});
    for (auto [lhs, rhs] : std::vector<std::pair<at::Tensor, at::Tensor>>{
             {a, b}, {edges, edges.flip(0)}}) {
      auto outputs = fec.runFusionWithInputs({lhs, rhs});
      EXPECT_TRUE(
          at::equal(at::isnan(outputs[0]), at::isnan(at::nextafter(lhs, rhs))));
      EXPECT_TRUE(at::equal(
          at::nan_to_num(outputs[0]), at::nan_to_num(at::nextafter(lhs, rhs))))
          << "nextafter of " << toString(dtype);
    }
  }
}

TEST_F(ElementwiseOpsGpuTest, IntegerOpsMatchTorch) {
  const auto cuda = at::TensorOptions().device(at::kCUDA);
  for (DataType dtype : {DataType::Int32, DataType::Int}) {
    const at::ScalarType type = atenType(dtype);
    const int64_t width = type == at::kInt ? 32 : 64;
    const at::Tensor a = at::randint(-1000, 1000, {129, 77}, cuda.dtype(type));
    // Shift amounts around the width, negative ones included; divisors
    // without zero.
    const at::Tensor shifts =
        at::randint(-2, width + 3, {129, 77}, cuda.dtype(type));
    at::Tensor b = at::randint(-60, 60, {129, 77}, cuda.dtype(type));
    b = at::where(b == 0, at::ones_like(b), b);
    for (const BinaryCase& c : integerOps()) {
      FusionExecutorCache fec(binaryFusion(c.op, dtype));
      const bool shift = c.name.find("shift") != std::string::npos;
      const at::Tensor rhs = shift ? shifts : b;
      for (const at::Tensor& lhs : layouts(a)) {
        auto outputs = fec.runFusionWithInputs({lhs, rhs});
        expectSameAsTorch(
            outputs[0], c.torch_op(lhs, rhs),
            c.name + " of " + toString(dtype));
      }
    }
    {
      FusionExecutorCache fec(binaryFusion(logical_right_shift, dtype));
      auto outputs = fec.runFusionWithInputs({a, shifts});
      testValidate(fec.fusion(), outputs, {a, shifts}, __LINE__, __FILE__);
      // Independently of the reference: a non-negative value shifts as
      // the arithmetic shift does.
      const at::Tensor positive = a.abs();
      outputs = fec.runFusionWithInputs({positive, shifts.clamp(0, width - 2)});
      EXPECT_TRUE(at::equal(
          outputs[0],
          at::bitwise_right_shift(positive, shifts.clamp(0, width - 2))));
    }
    for (auto [op, torch_op] : std::vector<
             std::pair<UnaryBuilder, at::Tensor (*)(const at::Tensor&)>>{
             {bitwise_not, at::bitwise_not},
             {sign, at::sign},
             {signbit, at::signbit},
             {isnan, at::isnan},
             {isinf, at::isinf},
             {isfinite, at::isfinite},
             {floor, at::floor},
             {round, at::round}}) {
      FusionExecutorCache fec(unaryFusion(op, dtype));
      auto outputs = fec.runFusionWithInputs({a});
      expectSameAsTorch(outputs[0], torch_op(a), toString(dtype));
    }
  }
  const at::Tensor p = at::rand({64, 65}, cuda) > 0.5;
  const at::Tensor q = at::rand({64, 65}, cuda) > 0.5;
  for (const BinaryCase& c : integerOps()) {
    if (c.name.rfind("bitwise_", 0) != 0 ||
        c.name.find("shift") != std::string::npos) {
      continue;
    }
    FusionExecutorCache fec(binaryFusion(c.op, DataType::Bool));
    expectSameAsTorch(
        fec.runFusionWithInputs({p, q})[0], c.torch_op(p, q),
        c.name + " of bool");
  }
  FusionExecutorCache fec(unaryFusion(bitwise_not, DataType::Bool));
  expectSameAsTorch(
      fec.runFusionWithInputs({p})[0], at::bitwise_not(p),
      "bitwise_not of bool");
}

} // namespace fuser
