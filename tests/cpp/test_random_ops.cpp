// Random tensors (uniform, normal): the Philox generator of runtime/random.h
// against its published known answers, the distributions over 10^7
// samples, the ATen evaluation's reproducibility, kernels compiled with
// NVRTC (one block cache per uniform op), user errors, and on the GPU
// values that do not depend on the schedule and equal the host's.
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/aten_evaluator.h>
#include <runtime/aten_types.h>
#include <runtime/fusion_executor_cache.h>
#include <tests/cpp/utils.h>

// The device header, compiled here as host code.
#include <runtime/random.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace fuser {

using ::testing::HasSubstr;

class RandomOpTest : public FuserIrTest {};
class RandomOpGpuTest : public FuserTest {};

namespace {

// x + uniform(x's shape, low 0, high 1, seed, offset): x is a fusion input
// (2-D, symbolic sizes), seed and offset are Int inputs after it.
std::unique_ptr<Fusion> noisyCopy(RNGOpType type, bool transposed) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  Val* seed = IrBuilder::create<Val>(DataType::Int);
  Val* offset = IrBuilder::create<Val>(DataType::Int);
  fusion->addInput(x);
  fusion->addInput(seed);
  fusion->addInput(offset);
  if (transposed) {
    x->setAllocationDomain({x->axis(1), x->axis(0)}, true);
  }
  std::vector<Val*> shape;
  for (IterDomain* id : x->getLogicalDomain()) {
    shape.push_back(id->extent());
  }
  Val* zero = IrBuilder::create<Val>(0.0);
  Val* one = IrBuilder::create<Val>(1.0);
  TensorView* noise = type == RNGOpType::Uniform
                          ? uniform(shape, zero, one, seed, offset)
                          : normal(shape, zero, one, seed, offset);
  fusion->addOutput(add(x, noise));
  return fusion;
}

// Mean and variance of n draws.
std::pair<double, double> moments(
    int64_t n, const std::function<double(unsigned long long)>& draw) {
  double sum = 0;
  double sum_sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = draw(static_cast<unsigned long long>(i));
    sum += v;
    sum_sq += v * v;
  }
  const double mean = sum / static_cast<double>(n);
  return {mean, sum_sq / static_cast<double>(n) - mean * mean};
}

} // namespace

// Random123's known-answer vectors for Philox4x32-10.
TEST_F(RandomOpTest, PhiloxGivesThePublishedKnownAnswers) {
  FuserPhiloxBlock zero = fuserPhilox4x32(FuserPhiloxBlock{{0, 0, 0, 0}}, 0, 0);
  EXPECT_EQ(zero.word[0], 0x6627e8d5u);
  EXPECT_EQ(zero.word[1], 0xe169c58du);
  EXPECT_EQ(zero.word[2], 0xbc57ac4cu);
  EXPECT_EQ(zero.word[3], 0x9b00dbd8u);
  const unsigned int f = 0xffffffffu;
  FuserPhiloxBlock ones = fuserPhilox4x32(FuserPhiloxBlock{{f, f, f, f}}, f, f);
  EXPECT_EQ(ones.word[0], 0x408f276du);
  EXPECT_EQ(ones.word[1], 0x41c83b0eu);
  EXPECT_EQ(ones.word[2], 0xa20bc7c6u);
  EXPECT_EQ(ones.word[3], 0x6d5451fdu);
}

// 10^7 draws: the mean and variance of U[0, 1) (1/2, 1/12) and of N(0, 1)
// within 5 standard errors, and every uniform in range.
TEST_F(RandomOpTest, DistributionsHaveTheirMoments) {
  const int64_t n = 10'000'000;
  const double root_n = std::sqrt(static_cast<double>(n));
  bool in_range = true;
  auto [u_mean, u_var] = moments(n, [&](unsigned long long i) {
    const float u = fuserUniformFloat(2026, 12, i, 0.0f, 1.0f);
    in_range = in_range && u >= 0.0f && u < 1.0f;
    return static_cast<double>(u);
  });
  EXPECT_TRUE(in_range);
  EXPECT_NEAR(u_mean, 0.5, 5 * std::sqrt(1.0 / 12) / root_n);
  // The sample variance's standard error: sqrt(Var((U - 1/2)^2) / n), with
  // Var((U - 1/2)^2) = 1/80 - 1/144 = 1/180 (times 4^4 for U[-2, 2)).
  EXPECT_NEAR(u_var, 1.0 / 12, 5 * std::sqrt(1.0 / 180) / root_n);
  auto [d_mean, d_var] = moments(n, [](unsigned long long i) {
    return fuserUniformDouble(7, 0, i, -2.0, 2.0);
  });
  EXPECT_NEAR(d_mean, 0.0, 5 * std::sqrt(16.0 / 12) / root_n);
  EXPECT_NEAR(d_var, 16.0 / 12, 5 * 16 * std::sqrt(1.0 / 180) / root_n);
  auto [n_mean, n_var] = moments(n, [](unsigned long long i) {
    return fuserNormalDouble(1, 4, i, 0.0, 1.0);
  });
  EXPECT_NEAR(n_mean, 0.0, 5.0 / root_n);
  EXPECT_NEAR(n_var, 1.0, 5 * std::sqrt(2.0) / root_n);
}

TEST_F(RandomOpTest, SameSeedAndOffsetGiveTheSameValues) {
  std::unique_ptr<Fusion> fusion = noisyCopy(RNGOpType::Uniform, false);
  const at::Tensor x = at::zeros({37, 53});
  auto run = [&](int64_t seed, int64_t offset) {
    return evaluateFusionWithATen(fusion.get(), {x, seed, offset})[0];
  };
  const at::Tensor a = run(5, 0);
  EXPECT_TRUE(at::equal(a, run(5, 0)));
  EXPECT_FALSE(at::equal(a, run(5, 4)));
  EXPECT_FALSE(at::equal(a, run(6, 0)));
  EXPECT_GE(a.min().item<float>(), 0.0f);
  EXPECT_LT(a.max().item<float>(), 1.0f);
  // Element (i, j) is draw number i * 53 + j.
  EXPECT_EQ(
      a[2][3].item<float>(), fuserUniformFloat(5, 0, 2 * 53 + 3, 0.0f, 1.0f));
}

TEST_F(RandomOpTest, RandomOpsAreFusedIntoOnePointwiseKernel) {
  for (RNGOpType type : {RNGOpType::Uniform, RNGOpType::Normal}) {
    for (bool transposed : {false, true}) {
      std::unique_ptr<Fusion> fusion = noisyCopy(type, transposed);
      const at::Tensor x =
          transposed ? at::randn({96, 64}).t() : at::randn({64, 96});
      const CompiledSchedule s =
          scheduleAndCompile(*fusion, {x, int64_t{1}, int64_t{0}});
      EXPECT_EQ(s.type, SchedulerType::PointWise);
      EXPECT_THAT(
          s.code, HasSubstr(
                      type == RNGOpType::Uniform ? "fuserUniformFloat("
                                                 : "fuserNormalDouble("))
          << s.code;
    }
  }
}

namespace {

// Draw `i` through the caches (float in [-1, 3), double in [0, 1)) gives
// the values of a fresh block.
void expectCachedDrawsFresh(
    FuserPhiloxCache& floats, FuserPhiloxCache& doubles, unsigned long long i) {
  EXPECT_EQ(
      fuserUniformFloat(floats, 9, 4, i, -1.0f, 3.0f),
      fuserUniformFloat(9, 4, i, -1.0f, 3.0f))
      << i;
  EXPECT_EQ(
      fuserUniformDouble(doubles, 9, 4, i, 0.0, 1.0),
      fuserUniformDouble(9, 4, i, 0.0, 1.0))
      << i;
}

} // namespace

// The per-op cache of the kernels gives the values of a fresh block per
// draw, whatever order the draws come in: in runs of one block, reversed,
// strided and repeated.
TEST_F(RandomOpTest, CachedDrawsEqualFreshOnes) {
  std::vector<unsigned long long> order;
  for (unsigned long long i = 0; i < 64; ++i) {
    order.push_back(i);
  }
  for (unsigned long long i = 64; i-- > 0;) {
    order.push_back(i);
  }
  for (unsigned long long i = 0; i < 200; i += 7) {
    order.push_back(i);
    order.push_back(i);
  }
  FuserPhiloxCache floats;
  FuserPhiloxCache doubles;
  for (unsigned long long i : order) {
    expectCachedDrawsFresh(floats, doubles, i);
  }
}

// Draws of an unrolled loop by lane (base a multiple of the block's
// lanes) give the values of fresh blocks, and leave the op's cache true
// for a checked draw that follows them in the same kernel.
TEST_F(RandomOpTest, DrawsByLaneEqualFreshOnes) {
  for (unsigned long long base : {0ull, 8ull, 1ull << 33}) {
    FuserPhiloxCache floats;
    FuserPhiloxCache doubles;
    for (unsigned long long lane = 0; lane < 8; ++lane) {
      EXPECT_EQ(
          fuserUniformFloatOfLane(floats, 9, 4, base, lane, -1.0f, 3.0f),
          fuserUniformFloat(9, 4, base + lane, -1.0f, 3.0f))
          << base << " + " << lane;
      EXPECT_EQ(
          fuserUniformDoubleOfLane(doubles, 9, 4, base, lane, 0.0, 1.0),
          fuserUniformDouble(9, 4, base + lane, 0.0, 1.0))
          << base << " + " << lane;
    }
    for (unsigned long long i : {base + 5, base + 7, base + 1}) {
      expectCachedDrawsFresh(floats, doubles, i);
    }
  }
}

// Each uniform op of a kernel keeps its own block cache (two dropouts of
// one fusion draw from two offsets); a normal takes a block per element
// and keeps none. The dropout kernel stays in registers (the cache's words
// are picked by selects, not an indexed load).
TEST_F(RandomOpTest, EachUniformOpKeepsItsOwnBlockCache) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2, DataType::BFloat16);
  Val* seed = IrBuilder::create<Val>(DataType::Int);
  Val* offset = IrBuilder::create<Val>(DataType::Int);
  fusion->addInput(x);
  fusion->addInput(seed);
  fusion->addInput(offset);
  std::vector<Val*> shape;
  for (IterDomain* id : x->getLogicalDomain()) {
    shape.push_back(id->extent());
  }
  Val* zero = IrBuilder::create<Val>(0.0);
  Val* one = IrBuilder::create<Val>(1.0);
  TensorView* xf = castOp(DataType::Float, x);
  auto dropout = [&](TensorView* t, Val* at) {
    TensorView* u = uniform(shape, zero, one, seed, at);
    TensorView* keep = lt(u, IrBuilder::create<Val>(0.9));
    return where(keep, mul(t, IrBuilder::create<Val>(1.0 / 0.9)), zero);
  };
  TensorView* twice = dropout(
      dropout(xf, offset),
      add(offset, IrBuilder::create<Val>(int64_t{4}, DataType::Int)));
  TensorView* noisy =
      add(twice, normal(shape, zero, one, seed, offset, DataType::Float));
  fusion->addOutput(castOp(DataType::BFloat16, noisy));
  const CompiledSchedule s = scheduleAndCompile(
      *fusion,
      {at::randn({64, 1024}).to(at::kBFloat16), int64_t{1}, int64_t{0}});
  ASSERT_EQ(s.type, SchedulerType::PointWise);
  EXPECT_THAT(s.code, HasSubstr("FuserPhiloxCache fuser_rng0;"));
  EXPECT_THAT(s.code, HasSubstr("FuserPhiloxCache fuser_rng1;"));
  EXPECT_THAT(s.code, ::testing::Not(HasSubstr("fuser_rng2")));
  EXPECT_THAT(s.code, HasSubstr("fuserUniformFloat(fuser_rng0, "));
  EXPECT_THAT(s.code, HasSubstr("fuserUniformFloat(fuser_rng1, "));
  EXPECT_THAT(s.code, ::testing::ContainsRegex("fuserNormalDouble\\([^f]"));
  const KernelInspection inspection = inspectForSm90a(s.code);
  FUSER_SKIP_WITHOUT_PTXAS_REPORT(inspection);
  EXPECT_TRUE(keepsEverythingInRegisters(inspection));
}

// Dropout as frontends write it: the random tensor has the constant shape
// of the input it masks, whose sizes are symbolic. The kernel takes the
// constants for the input's joined sizes (binding checks them), so an
// element's linear index is the loop's index: no division or remainder by
// a run-time size per element.
TEST_F(RandomOpTest, AConstantShapeFoldsTheElementIndex) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2, DataType::BFloat16);
  fusion->addInput(x);
  Val* zero = IrBuilder::create<Val>(0.0);
  TensorView* u = uniform(
      {IrBuilder::indexConst(256), IrBuilder::indexConst(1024)}, zero,
      IrBuilder::create<Val>(1.0), IrBuilder::create<Val>(int64_t{3}),
      IrBuilder::create<Val>(int64_t{0}));
  TensorView* kept = where(
      lt(u, IrBuilder::create<Val>(0.9)), castOp(DataType::Float, x), zero);
  fusion->addOutput(castOp(DataType::BFloat16, kept));
  const CompiledSchedule s =
      scheduleAndCompile(*fusion, {at::randn({256, 1024}).to(at::kBFloat16)});
  ASSERT_EQ(s.type, SchedulerType::PointWise);
  const std::string kernel = s.code.substr(s.code.find("// ---- kernel"));
  EXPECT_THAT(kernel, ::testing::Not(HasSubstr("logical_size"))) << kernel;
  // The vectorized loop's index is the lane of a base of whole blocks, so
  // the kernel draws one block per four lanes with no check at run time.
  EXPECT_THAT(
      kernel,
      ::testing::ContainsRegex(
          "fuserUniformFloatOfLane\\(fuser_rng0, .*\\* 8\\), i[0-9]+, "))
      << kernel;
  EXPECT_THAT(kernel, ::testing::Not(HasSubstr("fuserUniformFloat(")));
}

// A double block serves two lanes, so a vectorized double loop draws by
// lane too; a loop of odd trip count (an odd extent, not vectorized)
// keeps the checked cache: its lanes need not start a block.
TEST_F(RandomOpTest, DrawsByLaneNeedWholeBlocksOfLanes) {
  for (const auto& [dtype, extent, by_lane] :
       {std::tuple{DataType::Double, int64_t{2048}, true},
        std::tuple{DataType::Float, int64_t{1023}, false}}) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigTensor(1, dtype);
    fusion->addInput(x);
    TensorView* u = uniform(
        {IrBuilder::indexConst(extent)}, IrBuilder::create<Val>(0.0),
        IrBuilder::create<Val>(1.0), IrBuilder::create<Val>(int64_t{3}),
        IrBuilder::create<Val>(int64_t{0}), dtype);
    fusion->addOutput(add(u, x));
    const CompiledSchedule s = scheduleAndCompile(
        *fusion,
        {at::randn({extent}, at::TensorOptions().dtype(toAtenType(dtype)))});
    ASSERT_EQ(s.type, SchedulerType::PointWise);
    const std::string kernel = s.code.substr(s.code.find("// ---- kernel"));
    const std::string name =
        dtype == DataType::Double ? "fuserUniformDouble" : "fuserUniformFloat";
    EXPECT_THAT(
        kernel, HasSubstr(name + (by_lane ? "OfLane(" : "(") + "fuser_rng0, "))
        << kernel;
  }
}

TEST_F(RandomOpTest, BadArgumentsAreUserErrors) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  Val* n = IrBuilder::create<Val>(int64_t{8}, DataType::Index);
  Val* zero = IrBuilder::create<Val>(0.0);
  Val* seed = IrBuilder::create<Val>(int64_t{1});
  EXPECT_THAT(
      [&] { uniform({n}, zero, zero, seed, seed, DataType::Int); },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("uniform: dtype must be a floating-point type")));
  EXPECT_THAT(
      [&] { normal({n}, zero, zero, zero, seed); },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("normal: the seed must be an integer scalar")));
  fusion.addOutput(uniform({n}, zero, zero, seed, seed));
  EXPECT_EQ(fusion.outputs().size(), 1u);
}

// The same seed and offset give bitwise the same noise whatever the
// schedule (a transposed input changes the loop order and vectorization),
// and the host's values.
TEST_F(RandomOpGpuTest, ValuesDoNotDependOnTheSchedule) {
  for (RNGOpType type : {RNGOpType::Uniform, RNGOpType::Normal}) {
    const at::Tensor zeros = at::zeros({301, 517}, at::kCUDA);
    FusionExecutorCache rows(noisyCopy(type, false));
    FusionExecutorCache columns(noisyCopy(type, true));
    const at::Tensor a =
        rows.runFusionWithInputs({zeros, int64_t{11}, int64_t{8}})[0];
    const at::Tensor b = columns.runFusionWithInputs(
        {zeros.t().contiguous().t(), int64_t{11}, int64_t{8}})[0];
    EXPECT_TRUE(at::equal(a, b));
    const at::Tensor host = evaluateFusionWithATen(
        rows.fusion(), {zeros.cpu(), int64_t{11}, int64_t{8}})[0];
    if (type == RNGOpType::Uniform) {
      EXPECT_TRUE(at::equal(a.cpu(), host));
    } else {
      EXPECT_TRUE(at::allclose(a.cpu(), host, 1e-6, 1e-6));
    }
  }
}

TEST_F(RandomOpGpuTest, TenMillionDrawsHaveTheirMoments) {
  const at::Tensor zeros = at::zeros({10'000, 1'000}, at::kCUDA);
  FusionExecutorCache fec(noisyCopy(RNGOpType::Normal, false));
  const at::Tensor z =
      fec.runFusionWithInputs({zeros, int64_t{3}, int64_t{0}})[0].to(
          at::kDouble);
  EXPECT_NEAR(z.mean().item<double>(), 0.0, 5.0 / std::sqrt(1e7));
  EXPECT_NEAR(z.var().item<double>(), 1.0, 5 * std::sqrt(2.0 / 1e7));
}

} // namespace fuser
