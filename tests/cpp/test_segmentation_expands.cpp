// Expands a scheduler cannot give loops to, and the kernels the segmenter
// writes them in instead (doc/ops.md "Expand"): an expand written beside an
// output no op joins it to, and a normalization's statistic expanded to the
// row's shape and read other than beside the row.
#include <device_lower/lower.h>
#include <ops/all_ops.h>
#include <scheduler/normalization_inner.h>
#include <scheduler/utils.h>
#include <tests/cpp/kernel_ir_interpreter.h>
#include <tests/cpp/segmentation_harness.h>
#include <transform/redundant_expands.h>

namespace fuser {

using ::testing::HasSubstr;

class ExpandSegmentationTest : public FuserIrTest {};
class ExpandSegmentationGpuTest : public FuserTest {};

namespace {

// w expanded to x's rows, written beside x + x (joined to it only through
// the extent the expand takes from x) or beside x + broadcast(w) (whose
// broadcast it expands). With `x_shape` the expand is given both of x's
// sizes, as the Python frontend's broadcast_in_dim(w, x.shape(), [1])
// gives them: w's axis then takes x's row length too.
std::unique_ptr<Fusion> expandBesideAnotherOutputFusion(
    bool joined, bool x_shape = false) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(1);
  fusion->addInput(x);
  fusion->addInput(w);
  TensorView* expanded = expand(
      broadcast(w, {true, false}), {x->getLogicalDomain()[0]->extent(),
                                    x_shape ? x->getLogicalDomain()[1]->extent()
                                            : IrBuilder::indexConst(-1)});
  fusion->addOutput(joined ? add(x, expanded) : add(x, x));
  // Laid out: the user asks for it written, by a kernel, not returned as
  // ATen's view of w (segmentation/input_views.h).
  expanded->setAllocationDomain(expanded->getLogicalDomain(), true);
  fusion->addOutput(expanded);
  return fusion;
}

// A softmax whose row maxima, expanded to the row's shape, are also
// written (`as` 0), summed along the row (1) or squared (2): the expand is
// not one an elementwise op with the row reads (bypassRedundantExpands
// leaves it).
std::unique_ptr<Fusion> expandedStatisticFusion(int use) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  auto along_rows = [&](TensorView* stat) {
    return expand(
        broadcast(stat, {false, true}),
        {IrBuilder::indexConst(-1), x->getLogicalDomain()[1]->extent()});
  };
  TensorView* row_max = along_rows(max(x, {1}));
  TensorView* e = exp(sub(x, row_max));
  fusion->addOutput(div(e, along_rows(sum(e, {1}))));
  fusion->addOutput(
      use == 0   ? row_max
      : use == 1 ? sum(row_max, {1})
                 : mul(row_max, row_max));
  return fusion;
}

// The kernel of `group` (w and the row count in, and x's row length where
// the expand was given it; w repeated over the rows out) on the kernel-IR
// interpreter: every element of the output written once, with w's element
// of its column.
void expectExpandKernelRepeatsW(
    const SegmentedGroup& group, int64_t rows, int64_t cols) {
  std::unique_ptr<Fusion> part = group.makeFusion();
  const size_t count = part->inputs().size();
  ASSERT_TRUE(count == 2 || count == 3) << group.toString();
  auto* w = part->inputs()[0]->as<TensorView>();
  Val* row_count = part->inputs()[1];
  std::vector<c10::IValue> inputs = {at::randn({cols}), c10::IValue(rows)};
  if (count == 3) {
    inputs.emplace_back(cols);
  }
  RuntimeInfo info = makeRuntimeInfo(part.get(), inputs, false);
  SchedulerChoice choice = chooseScheduler(part.get(), info);
  ASSERT_EQ(choice.scheduler->type(), SchedulerType::PointWise);
  choice.scheduler->schedule(
      part.get(), *choice.scheduler->computeHeuristics(part.get(), info));
  std::unique_ptr<LoweredKernel> kernel =
      GpuLower(part.get(), DataType::Int32).run();
  std::map<int64_t, kir_test::BufferLayout> layouts;
  layouts[w->name()] = kir_test::plainLayout({cols});
  ExpressionEvaluator ee;
  ee.bind(w->getLogicalDomain()[0]->extent(), ScalarValue(cols));
  ee.bind(row_count, ScalarValue(rows));
  if (count == 3) {
    ee.bind(part->inputs()[2], ScalarValue(cols));
  }
  const kir_test::BufferLayout out_layout =
      kir_test::plainOutputLayouts(*part, ee, layouts).at(0);
  kir_test::KernelInterpreter interpreter(*kernel, layouts);
  interpreter.bindScalar(row_count, rows);
  if (count == 3) {
    interpreter.bindScalar(part->inputs()[2], cols);
  }
  ASSERT_EQ(kir_test::runReportingErrors(interpreter), "");
  const int64_t out = part->outputs()[0]->name();
  int64_t bad = 0;
  for (const auto& [offset, coord] : out_layout.inverse()) {
    const auto k = static_cast<size_t>(offset);
    const auto& value = interpreter.storage(out)[k];
    bad += interpreter.writeCounts(out)[k] != 1 || !value.has_value() ||
           *value != kir_test::inputValue(w->name(), {coord[1]});
  }
  EXPECT_EQ(bad, 0);
}

} // namespace

// One pointwise kernel took both outputs and failed to lower ("no path
// from the loops", or a register buffer of w sized by a symbolic extent):
// no loop of the other output reached the expanded axis. The pointwise
// scheduler now declines an expand whose expanded axis maps to no axis of
// another output, and each output is a kernel of its own; the expand's
// group takes x's row count as a scalar input (it does not read x), and
// x's row length where the expand was given it (from Python, that group
// failed on the GPU: "Cannot evaluate i2").
TEST_F(ExpandSegmentationTest, ExpandBesideAnotherOutputIsItsOwnKernel) {
  for (const auto [joined, x_shape] : std::vector<std::pair<bool, bool>>{
           {false, false}, {true, false}, {false, true}, {true, true}}) {
    SCOPED_TRACE(
        std::string(joined ? "joined" : "apart") +
        (x_shape ? ", x's sizes" : ""));
    std::unique_ptr<Fusion> fusion =
        expandBesideAnotherOutputFusion(joined, x_shape);
    // As the runtime sees it: the add reads the broadcast, not the expand.
    Fusion bypassed(*fusion);
    bypassRedundantExpands(&bypassed);
    std::string reason;
    EXPECT_FALSE(
        scheduler_utils::expandsShareLoopsWithOutputs(&bypassed, &reason));
    EXPECT_THAT(reason, HasSubstr("shares no loop with output"));
    auto segmented = checkedSegments(
        fusion.get(), {at::randn({64, 1000}), at::randn({1000})});
    EXPECT_EQ(
        schedulerTypes(*segmented),
        (std::vector<SchedulerType>{
            SchedulerType::PointWise, SchedulerType::PointWise}));
    Val* rows = segmented->completeFusion()
                    ->inputs()[0]
                    ->as<TensorView>()
                    ->axis(0)
                    ->extent();
    const auto& groups = segmented->groups();
    auto expand_group =
        std::find_if(groups.begin(), groups.end(), [&](auto* g) {
          const auto& ins = g->inputs();
          return std::find(ins.begin(), ins.end(), rows) != ins.end();
        });
    ASSERT_NE(expand_group, groups.end());
    expectExpandKernelRepeatsW(**expand_group, 64, 1000);
  }
  // Alone, the expand is the pointwise kernel's output.
  auto alone = std::make_unique<Fusion>();
  {
    FusionGuard fg(alone.get());
    TensorView* w = makeContigTensor(1);
    alone->addInput(w);
    alone->addOutput(expand(
        broadcast(w, {true, false}),
        {IrBuilder::indexConst(64), IrBuilder::indexConst(-1)}));
  }
  std::string reason;
  EXPECT_TRUE(
      scheduler_utils::expandsShareLoopsWithOutputs(alone.get(), &reason));
}

// The persistent kernel failed to lower such an expand (its expanded axis
// maps exactly to no axis of the row: the vectorization check and the
// indexer found no path from the row's loops). The persistent schedulers
// decline an expand along reduced axes; the softmax is one kernel, which
// writes the maxima as [rows, 1] (RowStatisticWrittenBeforeTheRow), and the
// expand with its use another. Returned as it is (use 0), the expand is
// ATen's view of the maxima, no kernel (segmentation/input_views.h).
TEST_F(ExpandSegmentationTest, ExpandedStatisticIsWrittenByAKernelOfItsOwn) {
  const std::vector<SchedulerType> after = {
      SchedulerType::ExprEval, SchedulerType::Reduction,
      SchedulerType::PointWise};
  for (int use = 0; use < 3; ++use) {
    std::unique_ptr<Fusion> fusion = expandedStatisticFusion(use);
    auto segmented = checkedSegments(fusion.get(), {at::randn({64, 1000})});
    EXPECT_EQ(
        schedulerTypes(*segmented),
        (std::vector<SchedulerType>{
            SchedulerType::InnerPersistent, after[use]}))
        << use;
    Fusion bypassed(*fusion);
    bypassRedundantExpands(&bypassed);
    std::string reason;
    EXPECT_FALSE(
        InnerPersistentScheduler().canScheduleCompileTime(&bypassed, &reason));
    EXPECT_THAT(reason, HasSubstr("which a reduction reduces"));
  }
}

TEST_F(ExpandSegmentationGpuTest, ExpandBesideAnotherOutputIsItsOwnKernel) {
  for (const auto [joined, x_shape] : std::vector<std::pair<bool, bool>>{
           {false, false}, {true, false}, {false, true}, {true, true}}) {
    FusionExecutorCache fec(expandBesideAnotherOutputFusion(joined, x_shape));
    EXPECT_EQ(
        runOnGpu(fec, {cudaRandn({64, 1000}), cudaRandn({1000})}, __LINE__),
        (std::vector<SchedulerType>{
            SchedulerType::PointWise, SchedulerType::PointWise}));
  }
}

TEST_F(ExpandSegmentationGpuTest, ExpandedStatisticIsWrittenByAKernelOfItsOwn) {
  for (int use = 0; use < 3; ++use) {
    FusionExecutorCache fec(expandedStatisticFusion(use));
    EXPECT_EQ(runOnGpu(fec, {cudaRandn({256, 1000})}, __LINE__).size(), 2u)
        << use;
  }
}

} // namespace fuser
