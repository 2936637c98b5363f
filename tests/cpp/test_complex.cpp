// Complex tensors (doc/ops.md "Complex numbers"): the types their ops and
// promotions give, the user errors of ops that do not take them, their
// ATen evaluation, kernels of complex arithmetic compiled with NVRTC, and
// on the GPU results equal to ATen's over several layouts.
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/aten_evaluator.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/fusion_kernel_runtime.h>
#include <runtime/input_binding.h>
#include <runtime/off_device_compile.h>
#include <scheduler/registry.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

namespace fuser {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class ComplexTest : public FuserIrTest {};
class ComplexGpuTest : public FuserTest {};

namespace {

// Inputs a, b (complex64, 2-D) and x (float, 2-D); outputs
// (a * b - conj(a)) / (b + x), |a|, real(a) + imag(b), a == b, and a cast
// to complex128 plus x: every complex op, with a real operand promoted.
std::unique_ptr<Fusion> complexArithmetic(
    DataType complex_type = DataType::ComplexFloat) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2, complex_type);
  TensorView* b = makeContigTensor(2, complex_type);
  TensorView* x = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addInput(b);
  fusion->addInput(x);
  fusion->addOutput(div(sub(mul(a, b), conj(a)), add(b, x)));
  fusion->addOutput(abs(a));
  fusion->addOutput(add(real(a), imag(b)));
  fusion->addOutput(eq(a, b));
  fusion->addOutput(add(castOp(DataType::ComplexDouble, a), x));
  return fusion;
}

at::Tensor complexRandn(at::IntArrayRef sizes, at::TensorOptions options) {
  return at::randn(sizes, options.dtype(at::kComplexFloat));
}

} // namespace

TEST_F(ComplexTest, OpsAndPromotionGiveTorchsTypes) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* a = makeContigTensor(2, DataType::ComplexFloat);
  TensorView* x = makeContigTensor(2);
  TensorView* d = makeContigTensor(2, DataType::Double);
  TensorView* i = makeContigTensor(2, DataType::Int);
  TensorView* h = makeContigTensor(2, DataType::BFloat16);
  fusion.addInput(a);
  EXPECT_EQ(add(a, x)->dtype(), DataType::ComplexFloat);
  EXPECT_EQ(add(a, d)->dtype(), DataType::ComplexDouble);
  EXPECT_EQ(mul(a, i)->dtype(), DataType::ComplexFloat);
  EXPECT_EQ(sub(h, a)->dtype(), DataType::ComplexFloat);
  EXPECT_EQ(div(a, i)->dtype(), DataType::ComplexFloat);
  EXPECT_EQ(
      mul(a, IrBuilder::create<Val>(2.0))->dtype(), DataType::ComplexFloat);
  EXPECT_EQ(add(d, IrBuilder::create<Val>(2.0))->dtype(), DataType::Double);
  EXPECT_EQ(abs(a)->dtype(), DataType::Float);
  EXPECT_EQ(real(a)->dtype(), DataType::Float);
  EXPECT_EQ(
      imag(castOp(DataType::ComplexDouble, a))->dtype(), DataType::Double);
  EXPECT_EQ(conj(a)->dtype(), DataType::ComplexFloat);
  EXPECT_EQ(eq(a, x)->dtype(), DataType::Bool);
  EXPECT_EQ(neg(a)->dtype(), DataType::ComplexFloat);
  EXPECT_EQ(castOp(DataType::Float, a)->dtype(), DataType::Float);
  EXPECT_EQ(
      promoteTypes(DataType::ComplexFloat, DataType::Double),
      DataType::ComplexDouble);
  EXPECT_EQ(dataTypeSize(DataType::ComplexFloat), 8);
  EXPECT_EQ(dataTypeSize(DataType::ComplexDouble), 16);
  // Of a real tensor, real and conj are its values (a copy).
  TensorView* rx = real(x);
  EXPECT_EQ(rx->dtype(), DataType::Float);
  EXPECT_TRUE(rx->definition()->isA<LoadStoreOp>());
}

TEST_F(ComplexTest, OpsThatTakeNoComplexValuesAreUserErrors) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* a = makeContigTensor(2, DataType::ComplexFloat);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(a);
  fusion.addInput(x);
  EXPECT_THAT(
      [&] { erf(a); },
      ThrowsMessage<UserError>(HasSubstr(
          "is of type complex64, and erf does not take complex values")));
  EXPECT_THAT(
      [&] { lt(a, x); },
      ThrowsMessage<UserError>(HasSubstr("Python fd.ops.real, fd.ops.imag")));
  EXPECT_THAT(
      [&] { sum(a, {0}); }, ThrowsMessage<UserError>(HasSubstr(
                                "reduction does not take complex values")));
  EXPECT_THAT(
      [&] { cumsum(a, 1); },
      ThrowsMessage<UserError>(HasSubstr("does not take complex values")));
  EXPECT_THAT(
      [&] { imag(x); }, ThrowsMessage<UserError>(HasSubstr(
                            "imag takes complex tensors only, as torch.imag")));
  // The fusion is intact after the errors.
  fusion.addOutput(add(a, x));
  EXPECT_EQ(fusion.outputs().size(), 1u);
}

// The functions torch defines on complex values that the kernels do not
// compute (exp, log, sqrt, the trigonometric ones, pow, ...) are the
// ATen's: the kernel schedulers decline them, the ExprEval scheduler runs
// them, between kernels of the arithmetic around them.
TEST_F(ComplexTest, FunctionsOnlyATenComputesRunThroughExprEval) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2, DataType::ComplexFloat);
  fusion->addInput(a);
  TensorView* e = exp(a);
  EXPECT_EQ(e->dtype(), DataType::ComplexFloat);
  EXPECT_EQ(isnan(a)->dtype(), DataType::Bool);
  fusion->addOutput(pow(sqrt(e), a));
  const at::Tensor ta = complexRandn({4, 6}, at::TensorOptions());
  RuntimeInfo info = makeRuntimeInfo(fusion.get(), {ta}, false);
  SchedulerChoice choice = chooseScheduler(fusion.get(), info);
  EXPECT_EQ(choice.scheduler->type(), SchedulerType::ExprEval);
  EXPECT_THAT(
      choice.rejections,
      ::testing::Contains(HasSubstr("PointWise (compile time): it has a")));
  const auto out = evaluateFusionWithATen(fusion.get(), {ta});
  EXPECT_TRUE(at::allclose(out[0], at::pow(at::sqrt(at::exp(ta)), ta)));
}

// A complex constant: printed, compiled into the kernel at the operand's
// precision (makeComplex<float>), promoting a float tensor to complex64
// (a Python complex stands for complex64 among tensors, as in torch), and
// evaluated by ATen.
TEST_F(ComplexTest, ComplexConstantsAreKernelLiterals) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2, DataType::ComplexFloat);
  TensorView* x = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addInput(x);
  Val* c = IrBuilder::create<Val>(
      std::complex<double>(1.5, -2.0), DataType::ComplexDouble);
  EXPECT_EQ(c->toString(), "complex(1.5, -2)");
  TensorView* scaled = mul(a, c);
  TensorView* shifted = add(x, c);
  EXPECT_EQ(scaled->dtype(), DataType::ComplexFloat);
  EXPECT_EQ(shifted->dtype(), DataType::ComplexFloat);
  fusion->addOutput(scaled);
  fusion->addOutput(shifted);
  const at::Tensor ta = complexRandn({4, 6}, at::TensorOptions());
  const at::Tensor tx = at::randn({4, 6});
  // a * c and x + c share no axis: a kernel each.
  const auto segments = compileOffDevice(fusion.get(), {ta, tx});
  ASSERT_EQ(segments.size(), 2u);
  std::string code;
  for (const auto& segment : segments) {
    EXPECT_EQ(segment.scheduler, SchedulerType::PointWise);
    EXPECT_EQ(segment.error, "");
    code += segment.code;
  }
  EXPECT_THAT(code, HasSubstr("makeComplex<float>(1.5f, -2.0f)"));
  const auto out = evaluateFusionWithATen(fusion.get(), {ta, tx});
  const c10::complex<double> cc(1.5, -2.0);
  EXPECT_TRUE(at::allclose(out[0], ta * cc));
  EXPECT_TRUE(at::allclose(out[1], tx + cc));
  EXPECT_EQ(out[1].scalar_type(), at::kComplexFloat);
}

TEST_F(ComplexTest, AtenEvaluationEqualsTorch) {
  std::unique_ptr<Fusion> fusion = complexArithmetic();
  const at::Tensor a = complexRandn({4, 6}, at::TensorOptions());
  const at::Tensor b = complexRandn({4, 6}, at::TensorOptions());
  const at::Tensor x = at::randn({4, 6});
  const auto out = evaluateFusionWithATen(fusion.get(), {a, b, x});
  EXPECT_TRUE(at::allclose(out[0], (a * b - a.conj()) / (b + x)));
  EXPECT_TRUE(at::allclose(out[1], a.abs()));
  EXPECT_TRUE(at::allclose(out[2], at::real(a) + at::imag(b)));
  EXPECT_TRUE(at::equal(out[3], a == b));
  EXPECT_TRUE(at::allclose(out[4], a.to(at::kComplexDouble) + x));
}

// One pointwise kernel, the complex values read and written in vectors of
// two (16 bytes), compiled with NVRTC.
TEST_F(ComplexTest, ArithmeticIsOnePointwiseKernel) {
  std::unique_ptr<Fusion> fusion = complexArithmetic();
  const CompiledSchedule s = scheduleAndCompile(
      *fusion, {complexRandn({64, 96}, {}), complexRandn({64, 96}, {}),
                at::randn({64, 96})});
  EXPECT_EQ(s.type, SchedulerType::PointWise);
  EXPECT_THAT(s.code, HasSubstr("fuser_complex<float>"));
  EXPECT_THAT(s.code, HasSubstr("fuserConj("));
  EXPECT_THAT(s.code, HasSubstr("fuserComplexAbs("));
  EXPECT_THAT(s.code, HasSubstr("fuserComplexCast<double>("));
  EXPECT_THAT(s.code, HasSubstr("fuserToComplex(castTo<float>("));
  // Complex128 (16 bytes) leaves one element per access for all; without
  // it, two complex64 values are one 16-byte access.
  auto narrow = std::make_unique<Fusion>();
  {
    FusionGuard fg(narrow.get());
    TensorView* a = makeContigTensor(2, DataType::ComplexFloat);
    TensorView* b = makeContigTensor(2, DataType::ComplexFloat);
    narrow->addInput(a);
    narrow->addInput(b);
    narrow->addOutput(add(mul(a, b), conj(a)));
  }
  const CompiledSchedule n = scheduleAndCompile(
      *narrow, {complexRandn({64, 96}, {}), complexRandn({64, 96}, {})});
  EXPECT_THAT(n.code, HasSubstr("fuser_complex<float>, 2>("));
  // A kernel without complex values does not include the header.
  auto plain = std::make_unique<Fusion>();
  {
    FusionGuard fg(plain.get());
    TensorView* x = makeContigTensor(1);
    plain->addInput(x);
    plain->addOutput(neg(x));
  }
  const CompiledSchedule p = scheduleAndCompile(*plain, {at::randn({64})});
  EXPECT_THAT(p.code, ::testing::Not(HasSubstr("fuser_complex")));
}

TEST_F(ComplexGpuTest, ComplexArithmeticEqualsTorch) {
  const auto options = at::TensorOptions().device(at::kCUDA);
  const at::Tensor a = complexRandn({130, 250}, options);
  const at::Tensor x = at::randn({130, 250}, options);
  // b: contiguous, a transposed view, and rows split in the allocation.
  const at::Tensor b_contiguous = complexRandn({130, 250}, options);
  const at::Tensor b_transposed = complexRandn({250, 130}, options).t();
  for (int layout = 0; layout < 3; ++layout) {
    auto fusion = std::make_unique<Fusion>();
    at::Tensor b = layout == 1 ? b_transposed : b_contiguous;
    {
      FusionGuard fg(fusion.get());
      TensorView* ta = makeContigTensor(2, DataType::ComplexFloat);
      TensorView* tb = layout == 1
                           ? makeSymbolicTensor(2, DataType::ComplexFloat)
                           : makeContigTensor(2, DataType::ComplexFloat);
      TensorView* tx = makeContigTensor(2);
      fusion->addInput(ta);
      fusion->addInput(tb);
      fusion->addInput(tx);
      if (layout == 2) {
        auto [outer, inner] =
            IterDomain::split(tb->axis(0), IrBuilder::indexConst(10), true);
        tb->setAllocationDomain({outer, inner, tb->axis(1)}, true);
      }
      fusion->addOutput(div(sub(mul(ta, tb), conj(ta)), add(tb, tx)));
      fusion->addOutput(abs(tb));
      fusion->addOutput(add(real(ta), imag(tb)));
      fusion->addOutput(ne(ta, tb));
      fusion->addOutput(add(castOp(DataType::ComplexDouble, tb), tx));
    }
    Fusion* raw = fusion.get();
    FusionExecutorCache fec(std::move(fusion));
    const auto out = fec.runFusionWithInputs({a, b, x});
    testValidate(raw, out, {a, b, x}, __LINE__, __FILE__);
    EXPECT_EQ(
        fec.getMostRecentKernelRuntime()
            ->fusionSegments()
            ->groups()[0]
            ->schedulerType(),
        SchedulerType::PointWise);
  }
}

TEST_F(ComplexGpuTest, FunctionsOnlyATenComputesRunBetweenKernels) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2, DataType::ComplexFloat);
  TensorView* x = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addInput(x);
  fusion->addOutput(mul(exp(add(a, x)), x));
  FusionExecutorCache fec(std::move(fusion));
  const auto options = at::TensorOptions().device(at::kCUDA);
  const at::Tensor ta = complexRandn({130, 250}, options);
  const at::Tensor tx = at::randn({130, 250}, options);
  const auto out = fec.runFusionWithInputs({ta, tx});
  EXPECT_TRUE(at::allclose(out[0], at::exp(ta + tx) * tx, 1e-5, 1e-5));
  std::vector<SchedulerType> types;
  for (SegmentedGroup* group :
       fec.getMostRecentKernelRuntime()->fusionSegments()->groups()) {
    types.push_back(group->schedulerType());
  }
  EXPECT_THAT(types, ::testing::Contains(SchedulerType::ExprEval));
  EXPECT_THAT(types, ::testing::Contains(SchedulerType::PointWise));
}

// Smith's division keeps quotients whose naive form would overflow.
TEST_F(ComplexGpuTest, DivisionOfLargeValuesIsFinite) {
  const auto options = at::TensorOptions().device(at::kCUDA);
  const at::Tensor a = at::full(
      {8}, c10::complex<float>(3e30f, -2e30f),
      options.dtype(at::kComplexFloat));
  const at::Tensor b = at::full(
      {8}, c10::complex<float>(1e30f, 4e30f), options.dtype(at::kComplexFloat));
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* ta = makeContigTensor(1, DataType::ComplexFloat);
    TensorView* tb = makeContigTensor(1, DataType::ComplexFloat);
    fusion->addInput(ta);
    fusion->addInput(tb);
    fusion->addOutput(div(ta, tb));
  }
  FusionExecutorCache fec(std::move(fusion));
  const auto out = fec.runFusionWithInputs({a, b});
  EXPECT_TRUE(at::allclose(out[0], a / b));
  EXPECT_TRUE(at::isfinite(at::view_as_real(out[0])).all().item<bool>());
}

} // namespace fuser
