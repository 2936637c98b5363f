// segmentation/preseg_passes.h: the one ordered list of the rewrites before
// segmentation, and its runner.
#include <segmentation/preseg_passes.h>

#include <ir/builder.h>
#include <ops/all_ops.h>
#include <tests/cpp/utils.h>

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
          "resizesToInputs", "forwardPointwiseChainsFromInputs"}));
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

} // namespace fuser
