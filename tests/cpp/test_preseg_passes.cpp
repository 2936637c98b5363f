// segmentation/preseg_passes.h: the one ordered list of the rewrites before
// segmentation, and its runner.
#include <segmentation/preseg_passes.h>

#include <ir/all_nodes.h>
#include <ir/builder.h>
#include <ops/all_ops.h>
#include <scheduler/utils.h>
#include <tests/cpp/utils.h>
#include <transform/shared_factories.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fuser {

using PreSegmentationPassesTest = FuserIrTest;

// The stages run in this order on the runtime's path, so the list holds
// them in it: a reader of the list sees the order passes run in.
TEST_F(PreSegmentationPassesTest, ListIsInRunOrder) {
  std::vector<std::string> names;
  int previous = -1;
  for (const PreSegmentationPass& pass : preSegmentationPasses()) {
    names.emplace_back(pass.name);
    const int stage = static_cast<int>(pass.stage);
    EXPECT_GE(stage, previous) << pass.name;
    previous = stage;
  }
  EXPECT_EQ(
      names,
      (std::vector<std::string>{
          "propagateShardings", "insertReshardings", "bypassRedundantExpands",
          "copySharedFactories", "resizesToInputs",
          "forwardPointwiseChainsFromInputs", "mergeDuplicateExprs"}));
}

// Before and after the BeforeCut stage: the add that joins the expanded
// axis with x's reads the broadcast. Asked for another stage, the runner
// leaves the expand alone.
TEST_F(PreSegmentationPassesTest, RunsOnlyTheStageAsked) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(1);
  fusion.addInput(x);
  fusion.addInput(w);
  TensorView* row = broadcast(w, {true, false});
  TensorView* wide = expand(
      row, {x->getLogicalDomain()[0]->extent(), IrBuilder::indexConst(-1)});
  TensorView* out = add(x, wide);
  fusion.addOutput(out);
  const size_t exprs_before = fusion.exprs().size();

  EXPECT_EQ(
      runPreSegmentationPasses(&fusion, PreSegmentationStage::SeveralKernels),
      0);
  EXPECT_EQ(fusion.exprs().size(), exprs_before);
  EXPECT_EQ(out->definition()->input(1), wide);

  EXPECT_EQ(
      runPreSegmentationPasses(&fusion, PreSegmentationStage::BeforeCut), 1);
  EXPECT_EQ(out->definition()->input(1), row);
  EXPECT_EQ(fusion.exprs().size(), exprs_before - 1);
}

// Before and after copySharedFactories: a causal mask's iota, read as rows
// and as columns, is one IotaOp before (its axis joins the mask's two) and
// one per reader after; a self-mapped tensor no more.
TEST_F(PreSegmentationPassesTest, EachReaderOfAnIotaGetsItsOwn) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* index = iota(IrBuilder::create<Val>(int64_t(8), DataType::Index));
  TensorView* rows = broadcast(index, {false, true});
  TensorView* columns = broadcast(index, {true, false});
  fusion.addOutput(ge(rows, columns));
  auto iotas = [&]() {
    int64_t count = 0;
    for (Expr* expr : fusion.exprs()) {
      count += expr->isA<IotaOp>();
    }
    return count;
  };
  ASSERT_EQ(iotas(), 1);
  EXPECT_NE(scheduler_utils::selfMappedTensor(&fusion), "");

  EXPECT_EQ(copySharedFactories(&fusion), 1);
  EXPECT_EQ(iotas(), 2);
  EXPECT_EQ(rows->definition()->input(0), index);
  EXPECT_NE(columns->definition()->input(0), index);
  EXPECT_EQ(scheduler_utils::selfMappedTensor(&fusion), "");
}

} // namespace fuser
