// 8-bit float tensors (float8_e4m3fn, float8_e5m2): the device conversions
// of runtime/float8.h against ATen's on the host, casts in kernels
// compiled with NVRTC and evaluated through ATen, arithmetic on them as a
// user error (as in PyTorch), and on the GPU casts bit-equal to ATen's.
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <ops/type_promotion.h>
#include <runtime/aten_evaluator.h>
#include <runtime/aten_types.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/off_device_compile.h>
#include <tests/cpp/utils.h>

// The device header, compiled here as host code.
#include <runtime/float8.h>

#include <ATen/ATen.h>
#include <c10/util/Float8_e4m3fn.h>
#include <c10/util/Float8_e5m2.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fuser {

using ::testing::HasSubstr;

class Float8Test : public FuserIrTest {};
class Float8GpuTest : public FuserTest {};

namespace {

float floatOfBits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof(x));
  return x;
}

// Floats that exercise every rounding case: every sign, exponent and top
// 7 mantissa bits with 8 patterns of the low 16 bits (exact, just above
// and below a tie, ties), and every midpoint between two 8-bit values of
// both types with its neighbours.
std::vector<float> roundingProbes() {
  std::vector<float> probes;
  for (uint32_t high = 0; high < (1u << 16); ++high) {
    for (uint32_t low :
         {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu, 0x1234u,
          0xabcdu}) {
      probes.push_back(floatOfBits((high << 16) | low));
    }
  }
  for (int bits = 0; bits < 255; ++bits) {
    for (const auto& [a, b] :
         {std::pair<float, float>{
              static_cast<float>(c10::Float8_e4m3fn(
                  static_cast<uint8_t>(bits), c10::Float8_e4m3fn::from_bits())),
              static_cast<float>(c10::Float8_e4m3fn(
                  static_cast<uint8_t>(bits + 1),
                  c10::Float8_e4m3fn::from_bits()))},
          std::pair<float, float>{
              static_cast<float>(c10::Float8_e5m2(
                  static_cast<uint8_t>(bits), c10::Float8_e5m2::from_bits())),
              static_cast<float>(c10::Float8_e5m2(
                  static_cast<uint8_t>(bits + 1),
                  c10::Float8_e5m2::from_bits()))}}) {
      if (std::isfinite(a) && std::isfinite(b)) {
        const auto mid = static_cast<float>((double(a) + double(b)) / 2);
        probes.push_back(mid);
        probes.push_back(std::nextafter(mid, 0.0f));
        probes.push_back(std::nextafter(mid, INFINITY));
      }
    }
  }
  return probes;
}

// A cast of a float input to `dtype` and back, and of a bf16 input to
// `dtype`.
std::unique_ptr<Fusion> castFusion(DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeSymbolicTensor(2, DataType::Float);
  TensorView* y = makeSymbolicTensor(2, DataType::BFloat16);
  fusion->addInput(x);
  fusion->addInput(y);
  TensorView* x8 = castOp(dtype, x);
  fusion->addOutput(x8);
  fusion->addOutput(castOp(DataType::Float, x8));
  fusion->addOutput(castOp(dtype, y));
  return fusion;
}

// An 8-bit input cast to float and scaled, and to the other 8-bit type.
std::unique_ptr<Fusion> scaleFusion(DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeSymbolicTensor(2, dtype);
  fusion->addInput(x);
  fusion->addOutput(
      mul(castOp(DataType::Float, x), IrBuilder::create<Val>(2.0)));
  fusion->addOutput(castOp(
      dtype == DataType::Float8_e4m3fn ? DataType::Float8_e5m2
                                       : DataType::Float8_e4m3fn,
      x));
  return fusion;
}

// Floats over the whole range of both types, with NaN, infinities, zeros
// and values past the largest finite ones.
at::Tensor wideFloats(std::vector<int64_t> sizes) {
  at::Tensor t = at::randn(sizes) * at::exp2(at::randint(-20, 18, sizes));
  auto flat = t.view({-1});
  const float specials[] = {NAN,    -NAN,   INFINITY, -INFINITY, 0.0f,    -0.0f,
                            448.0f, 464.0f, 470.0f,   57344.0f,  61440.0f};
  for (int64_t i = 0; i < 11 && i < flat.numel(); ++i) {
    flat[i] = specials[i];
  }
  return t;
}

at::Tensor bits(const at::Tensor& t) {
  return t.view(at::kByte);
}

} // namespace

TEST_F(Float8Test, DeviceConversionsEqualATens) {
  for (float x : roundingProbes()) {
    ASSERT_EQ(fuserFloatToE4m3fn(x).bits, c10::Float8_e4m3fn(x).x)
        << x << " (bits " << std::hex << fuserFloatBits(x) << ")";
    ASSERT_EQ(fuserFloatToE5m2(x).bits, c10::Float8_e5m2(x).x)
        << x << " (bits " << std::hex << fuserFloatBits(x) << ")";
  }
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<uint8_t>(b);
    const float e4m3 = fuserE4m3fnToFloat({byte});
    const auto e4m3_aten = static_cast<float>(
        c10::Float8_e4m3fn(byte, c10::Float8_e4m3fn::from_bits()));
    const float e5m2 = fuserE5m2ToFloat({byte});
    const auto e5m2_aten = static_cast<float>(
        c10::Float8_e5m2(byte, c10::Float8_e5m2::from_bits()));
    if (std::isnan(e4m3_aten)) {
      EXPECT_TRUE(std::isnan(e4m3)) << b;
    } else {
      EXPECT_EQ(fuserFloatBits(e4m3), fuserFloatBits(e4m3_aten)) << b;
    }
    if (std::isnan(e5m2_aten)) {
      EXPECT_TRUE(std::isnan(e5m2)) << b;
    } else {
      EXPECT_EQ(fuserFloatBits(e5m2), fuserFloatBits(e5m2_aten)) << b;
    }
  }
}

TEST_F(Float8Test, TypesMapToATens) {
  EXPECT_EQ(toAtenType(DataType::Float8_e4m3fn), at::kFloat8_e4m3fn);
  EXPECT_EQ(toAtenType(DataType::Float8_e5m2), at::kFloat8_e5m2);
  EXPECT_EQ(fromAtenType(at::kFloat8_e4m3fn), DataType::Float8_e4m3fn);
  EXPECT_EQ(fromAtenType(at::kFloat8_e5m2), DataType::Float8_e5m2);
  EXPECT_EQ(dataTypeSize(DataType::Float8_e5m2), 1);
  EXPECT_TRUE(isFloatingPointType(DataType::Float8_e4m3fn));
}

// Evaluated through ATen on the CPU (the ExprEval path): the casts give
// ATen's bits.
TEST_F(Float8Test, CastsEvaluateThroughATen) {
  const at::Tensor x = wideFloats({7, 33});
  const at::Tensor y = at::randn({7, 33}).to(at::kBFloat16) * 1000;
  for (DataType dtype : {DataType::Float8_e4m3fn, DataType::Float8_e5m2}) {
    SCOPED_TRACE(toString(dtype));
    auto fusion = castFusion(dtype);
    std::vector<at::Tensor> outputs =
        evaluateFusionWithATen(fusion.get(), {x, y});
    const at::ScalarType type = toAtenType(dtype);
    EXPECT_TRUE(at::equal(bits(outputs[0]), bits(x.to(type))));
    EXPECT_TRUE(at::equal(bits(outputs[2]), bits(y.to(type))));
  }
}

// The pointwise scheduler takes the casts and the kernels compile.
TEST_F(Float8Test, KernelsCompile) {
  for (DataType dtype : {DataType::Float8_e4m3fn, DataType::Float8_e5m2}) {
    SCOPED_TRACE(toString(dtype));
    const at::Tensor x = at::randn({64, 256});
    const at::Tensor y = x.to(at::kBFloat16);
    const at::Tensor x8 = x.to(toAtenType(dtype));
    std::vector<std::pair<std::unique_ptr<Fusion>, std::vector<c10::IValue>>>
        cases;
    cases.emplace_back(castFusion(dtype), std::vector<c10::IValue>{x, y});
    cases.emplace_back(scaleFusion(dtype), std::vector<c10::IValue>{x8});
    // (The casts of x and of y share no axis: a kernel each.)
    for (const auto& [fusion, inputs] : cases) {
      for (const auto& segment : compileOffDevice(fusion.get(), inputs)) {
        EXPECT_EQ(segment.scheduler, SchedulerType::PointWise);
        EXPECT_EQ(segment.error, "");
        EXPECT_THAT(segment.code, HasSubstr("castTo<fuser_float8_"));
      }
    }
  }
}

TEST_F(Float8Test, ArithmeticIsAUserError) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* a = makeSymbolicTensor(2, DataType::Float8_e4m3fn);
  TensorView* f = makeSymbolicTensor(2, DataType::Float);
  fusion.addInput(a);
  fusion.addInput(f);
  auto expect_error = [](const std::function<void()>& op,
                         const std::string& what) {
    try {
      op();
      ADD_FAILURE() << what << " did not throw";
    } catch (const std::exception& e) {
      EXPECT_THAT(e.what(), HasSubstr("float8_e4m3fn")) << what;
      EXPECT_THAT(e.what(), HasSubstr("Cast it first")) << what;
    }
  };
  expect_error([&] { add(a, a); }, "add");
  expect_error([&] { add(a, f); }, "add with float");
  expect_error([&] { neg(a); }, "neg");
  expect_error([&] { sum(a, {0}); }, "sum");
  expect_error(
      [&] { where(gt(f, IrBuilder::create<Val>(0.0)), a, a); }, "where");
  EXPECT_THROW(
      promoteTypes(DataType::Float8_e4m3fn, DataType::Float), UserError);
  // Casts and data movement stay valid, and the fusion usable.
  fusion.addOutput(castOp(DataType::Float, permute(a, {1, 0})));
  EXPECT_EQ(fusion.outputs().size(), 1u);
}

TEST_F(Float8GpuTest, CastsEqualATens) {
  const at::Tensor x = wideFloats({301, 257}).to(at::kCUDA);
  const at::Tensor y =
      (at::randn({301, 257}) * 1000).to(at::kBFloat16).to(at::kCUDA);
  for (DataType dtype : {DataType::Float8_e4m3fn, DataType::Float8_e5m2}) {
    SCOPED_TRACE(toString(dtype));
    const at::ScalarType type = toAtenType(dtype);
    FusionExecutorCache casts(castFusion(dtype));
    std::vector<at::Tensor> outputs = casts.runFusionWithInputs({x, y});
    EXPECT_TRUE(at::equal(bits(outputs[0]), bits(x.to(type))));
    EXPECT_TRUE(at::equal(bits(outputs[2]), bits(y.to(type))));
    EXPECT_TRUE(at::allclose(
        outputs[1], x.to(type).to(at::kFloat), 0, 0, /*equal_nan=*/true));
    // An 8-bit input in a transposed layout.
    const at::Tensor x8 = x.to(type).t().contiguous().t();
    FusionExecutorCache scale(scaleFusion(dtype));
    outputs = scale.runFusionWithInputs({x8});
    EXPECT_TRUE(at::allclose(
        outputs[0], x8.to(at::kFloat) * 2, 0, 0, /*equal_nan=*/true));
    const at::ScalarType other =
        type == at::kFloat8_e4m3fn ? at::kFloat8_e5m2 : at::kFloat8_e4m3fn;
    EXPECT_TRUE(at::equal(bits(outputs[1]), bits(x8.to(other))));
  }
}

} // namespace fuser
