// HeuristicParams::sameAs and hash (scheduler/registry.h): the parameters
// the same scheduler computes for the same fusion and sizes are the same,
// with the same hash; another shape that changes a field, another
// scheduler's parameters, or one field changed by hand are not.
#include <ops/all_ops.h>
#include <runtime/input_binding.h>
#include <scheduler/matmul.h>
#include <scheduler/no_op.h>
#include <scheduler/normalization_inner.h>
#include <scheduler/pointwise.h>
#include <scheduler/reduction.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace fuser {

using HeuristicParamsTest = FuserIrTest;

namespace {

// The heuristics the first scheduler that takes `fusion` computes for
// float inputs of `sizes` (never read: the sizes are all it needs).
std::unique_ptr<HeuristicParams> heuristicsFor(
    Fusion* fusion, const std::vector<std::vector<int64_t>>& sizes) {
  std::vector<c10::IValue> inputs;
  for (const auto& s : sizes) {
    inputs.emplace_back(at::empty(s, at::kFloat));
  }
  RuntimeInfo info = makeRuntimeInfo(fusion, inputs, /*require_cuda=*/false);
  SchedulerChoice choice = chooseScheduler(fusion, info);
  return choice.scheduler->computeHeuristics(fusion, info);
}

std::unique_ptr<Fusion> rowSum() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  fusion->addInput(in);
  fusion->addOutput(sum(in, {1}));
  return fusion;
}

std::unique_ptr<Fusion> softmaxRows() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  fusion->addInput(in);
  fusion->addOutput(softmax(in, 1));
  return fusion;
}

} // namespace

TEST_F(HeuristicParamsTest, SameFusionAndSizesGiveTheSameParameters) {
  for (auto make : {rowSum, softmaxRows}) {
    std::unique_ptr<Fusion> fusion = make();
    auto a = heuristicsFor(fusion.get(), {{8192, 1024}});
    auto b = heuristicsFor(fusion.get(), {{8192, 1024}});
    EXPECT_TRUE(a->sameAs(*b)) << a->toString();
    EXPECT_EQ(a->hash(), b->hash());
  }
}

TEST_F(HeuristicParamsTest, AnotherShapeOrSchedulerDiffers) {
  std::unique_ptr<Fusion> sum_fusion = rowSum();
  auto wide = heuristicsFor(sum_fusion.get(), {{8192, 1024}});
  auto narrow = heuristicsFor(sum_fusion.get(), {{8192, 3}});
  ASSERT_NE(wide->toString(), narrow->toString());
  EXPECT_FALSE(wide->sameAs(*narrow));
  EXPECT_NE(wide->hash(), narrow->hash());

  std::unique_ptr<Fusion> softmax_fusion = softmaxRows();
  auto persistent = heuristicsFor(softmax_fusion.get(), {{8192, 1024}});
  EXPECT_FALSE(wide->sameAs(*persistent));
  EXPECT_FALSE(persistent->sameAs(*wide));
  EXPECT_FALSE(NoOpParams().sameAs(*wide));
  EXPECT_TRUE(NoOpParams().sameAs(NoOpParams()));
}

// Each kind of field counts: a scalar, a vector, a flag, a nested
// struct's field.
TEST_F(HeuristicParamsTest, EveryFieldKindCounts) {
  PointwiseParams base;
  base.loop_order = {1, 0};
  base.vectorize_input = {true, false};
  base.output_layouts = {{0, {1, 0}}};
  auto changed = [&](auto change) {
    PointwiseParams other = base;
    change(other);
    return !base.sameAs(other) && base.hash() != other.hash();
  };
  EXPECT_TRUE(base.sameAs(PointwiseParams(base)));
  EXPECT_TRUE(changed([](PointwiseParams& p) { p.vectorize = 8; }));
  EXPECT_TRUE(changed([](PointwiseParams& p) { p.loop_order = {0, 1}; }));
  EXPECT_TRUE(changed([](PointwiseParams& p) {
    p.vectorize_input = {true, true};
  }));
  EXPECT_TRUE(changed([](PointwiseParams& p) { p.rows_on_grid_y = true; }));
  EXPECT_TRUE(changed([](PointwiseParams& p) {
    p.output_layouts[0].second = {0, 1};
  }));

  MatmulParams tiles;
  MatmulParams cluster = tiles;
  cluster.tile.cluster = 2;
  EXPECT_FALSE(tiles.sameAs(cluster));
  EXPECT_NE(tiles.hash(), cluster.hash());
}

} // namespace fuser
