// int8, uint8 and int16 tensors: promotion as torch.promote_types, wrapping
// arithmetic, reductions that accumulate in int64, kernels compiled with
// NVRTC, and on the GPU results equal to ATen's.
#include <expr/evaluator.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <ops/type_promotion.h>
#include <runtime/aten_evaluator.h>
#include <runtime/aten_types.h>
#include <runtime/fusion_executor_cache.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fuser {

using ::testing::HasSubstr;

class NarrowIntegerTest : public FuserIrTest {};
class NarrowIntegerGpuTest : public FuserTest {};

namespace {

const std::vector<DataType>& everyTensorType() {
  static const std::vector<DataType> types = {
      DataType::Bool,  DataType::Int8,  DataType::UInt8, DataType::Int16,
      DataType::Int32, DataType::Int,   DataType::Half,  DataType::BFloat16,
      DataType::Float, DataType::Double};
  return types;
}

// a + b, max(a, 3), a & b, a cast to float, and the sum and max over axis 1.
std::unique_ptr<Fusion> mixedFusion(DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeSymbolicTensor(2, dtype);
  TensorView* b = makeSymbolicTensor(2, dtype);
  fusion->addInput(a);
  fusion->addInput(b);
  fusion->addOutput(add(a, b));
  fusion->addOutput(maximum(a, IrBuilder::create<Val>(int64_t{3})));
  fusion->addOutput(bitwise_and(a, b));
  fusion->addOutput(castOp(DataType::Float, a));
  return fusion;
}

std::unique_ptr<Fusion> reductionFusion(DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeSymbolicTensor(2, dtype);
  fusion->addInput(a);
  fusion->addOutput(sum(a, {1}));
  fusion->addOutput(max(a, {1}));
  return fusion;
}

at::Tensor narrowInputs(at::ScalarType type, at::IntArrayRef shape) {
  const int64_t low = type == at::kByte ? 0 : -128;
  const int64_t high = type == at::kByte ? 256 : 128;
  return at::randint(low, high, shape).to(type);
}

} // namespace

TEST_F(NarrowIntegerTest, PromotionMatchesTorchForEveryPair) {
  for (DataType a : everyTensorType()) {
    for (DataType b : everyTensorType()) {
      EXPECT_EQ(
          toAtenType(promoteTypes(a, b)),
          at::promote_types(toAtenType(a), toAtenType(b)))
          << toString(a) << " with " << toString(b);
    }
  }
}

TEST_F(NarrowIntegerTest, ScalarsKeepTheTensorsType) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* i8 = makeContigTensor(1, DataType::Int8);
  TensorView* u8 = makeContigTensor(1, DataType::UInt8);
  // torch: int8 tensor + python int stays int8; + python float is float32.
  EXPECT_EQ(
      add(i8, IrBuilder::create<Val>(int64_t{2}))->dtype(), DataType::Int8);
  EXPECT_EQ(add(u8, IrBuilder::create<Val>(2.5))->dtype(), DataType::Float);
  EXPECT_EQ(add(i8, u8)->dtype(), DataType::Int16);
  EXPECT_EQ(div(i8, i8)->dtype(), DataType::Float);
  // Sums of integers accumulate in int64.
  EXPECT_EQ(sum(i8, {0})->dtype(), DataType::Int);
  EXPECT_EQ(max(u8, {0})->dtype(), DataType::UInt8);
}

TEST_F(NarrowIntegerTest, AtenTypesRoundTrip) {
  for (DataType dtype : {DataType::Int8, DataType::UInt8, DataType::Int16}) {
    EXPECT_EQ(fromAtenType(toAtenType(dtype)), dtype);
  }
  EXPECT_EQ(dataTypeSize(DataType::Int8), 1);
  EXPECT_EQ(dataTypeSize(DataType::Int16), 2);
  EXPECT_THAT(
      [] { fromAtenType(at::kComplexHalf); },
      ::testing::ThrowsMessage<UserError>(
          HasSubstr("bool, int8, uint8, int16, int32")));
}

// The host evaluator wraps as the kernels' C++ conversions do.
TEST_F(NarrowIntegerTest, ScalarCastsWrap) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  ExpressionEvaluator ee;
  Val* big = IrBuilder::create<Val>(int64_t{300});
  EXPECT_EQ(ee.evaluate(castOp(DataType::Int8, big))->asInt(), 44);
  EXPECT_EQ(ee.evaluate(castOp(DataType::UInt8, big))->asInt(), 44);
  EXPECT_EQ(
      ee.evaluate(
            castOp(DataType::Int16, IrBuilder::create<Val>(int64_t{40000})))
          ->asInt(),
      40000 - 65536);
  EXPECT_EQ(
      ee.evaluate(castOp(DataType::UInt8, IrBuilder::create<Val>(int64_t{-1})))
          ->asInt(),
      255);
}

// The ATen reference: int8 wraps, sums accumulate in int64, max starts at
// the type's lowest value.
TEST_F(NarrowIntegerTest, ReferenceWrapsAndAccumulatesInInt64) {
  auto fusion = mixedFusion(DataType::Int8);
  const at::Tensor a = at::full({2, 3}, 127, at::kChar);
  const at::Tensor b = at::ones({2, 3}, at::kChar);
  auto outputs = evaluateFusionWithATen(fusion.get(), {a, b});
  EXPECT_TRUE(at::equal(outputs[0], at::full({2, 3}, -128, at::kChar)));
  EXPECT_EQ(outputs[1].scalar_type(), at::kChar);
  auto reduced = reductionFusion(DataType::Int8);
  const at::Tensor c = at::full({2, 300}, -128, at::kChar);
  outputs = evaluateFusionWithATen(reduced.get(), {c});
  EXPECT_TRUE(at::equal(outputs[0], at::full({2}, -128 * 300, at::kLong)));
  EXPECT_TRUE(at::equal(outputs[1], at::full({2}, -128, at::kChar)));
}

TEST_F(NarrowIntegerTest, KernelsCompile) {
  for (DataType dtype : {DataType::Int8, DataType::UInt8, DataType::Int16}) {
    SCOPED_TRACE(toString(dtype));
    const at::Tensor x = narrowInputs(toAtenType(dtype), {16, 300});
    for (const auto& fusion : {mixedFusion(dtype), reductionFusion(dtype)}) {
      std::vector<c10::IValue> inputs(fusion->inputs().size(), x);
      CompiledSchedule s;
      EXPECT_NO_THROW(s = scheduleAndCompile(*fusion, inputs));
      EXPECT_NE(s.type, SchedulerType::ExprEval);
    }
  }
}

TEST_F(NarrowIntegerGpuTest, MatchATen) {
  for (DataType dtype : {DataType::Int8, DataType::UInt8, DataType::Int16}) {
    SCOPED_TRACE(toString(dtype));
    const at::Tensor a =
        narrowInputs(toAtenType(dtype), {257, 130}).to(at::kCUDA);
    const at::Tensor b =
        narrowInputs(toAtenType(dtype), {257, 130}).to(at::kCUDA);
    FusionExecutorCache mixed(mixedFusion(dtype));
    std::vector<at::Tensor> outputs = mixed.runFusionWithInputs({a, b});
    testValidate(mixed.fusion(), outputs, {a, b}, __LINE__, __FILE__);
    EXPECT_TRUE(at::equal(outputs[0], a + b)); // wraps as torch does
    FusionExecutorCache reduced(reductionFusion(dtype));
    const at::Tensor t = a.t().contiguous().t(); // a transposed layout
    outputs = reduced.runFusionWithInputs({t});
    testValidate(reduced.fusion(), outputs, {t}, __LINE__, __FILE__);
    EXPECT_TRUE(at::equal(outputs[0], t.sum(1)));
  }
}

} // namespace fuser
