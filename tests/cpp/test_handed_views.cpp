// Views an ATen segment hands to later segments (runtime/handed_views.h,
// doc/segmentation.md §9): the heads sliced from a fused QKV product reach
// the kernels that read them as ATen's views, through their strides, with
// no copy between the segments.
#include <codegen/codegen.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <layout/vectorization.h>
#include <ops/all_ops.h>
#include <runtime/expr_eval_executor.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/handed_views.h>
#include <runtime/input_binding.h>
#include <runtime/nvrtc_compile.h>
#include <runtime/segment_scheduling.h>
#include <scheduler/registry.h>
#include <segmentation/segmented_fusion.h>
#include <tests/cpp/segmentation_harness.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace fuser {

class HandedViewsTest : public FuserIrTest {};
class HandedViewsGpuTest : public FuserTest {};

namespace {

Val* idx(int64_t v) {
  return IrBuilder::create<Val>(v, DataType::Index);
}

// Inputs x [.., .., ..] and w [.., ..] (bf16) of `fusion`, projected:
// linear(x, w), ATen's product.
TensorView* projectedInput(Fusion& fusion) {
  TensorView* x = makeContigTensor(3, DataType::BFloat16);
  TensorView* w = makeContigTensor(2, DataType::BFloat16);
  fusion.addInput(x);
  fusion.addInput(w);
  return linear(x, w);
}

// bf16(2 * float(t)): a kernel's work on t.
TensorView* doubled(TensorView* t) {
  return castOp(
      DataType::BFloat16,
      mul(castOp(DataType::Float, t), IrBuilder::create<Val>(2.0)));
}

// x [2, 8, 64] projected by w [192, 64]; each of `heads` slices of 64
// columns from `start` + 64 * part is split into heads of 16, doubled
// and returned (a kernel per head tensor reads the slice).
std::unique_ptr<Fusion> slicedHeadsFusion(int64_t heads, int64_t start = 0) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* qkv = projectedInput(*fusion);
  for (int64_t part = 0; part < heads; ++part) {
    TensorView* y = slice(
        qkv, {{nullptr, nullptr, nullptr},
              {nullptr, nullptr, nullptr},
              {idx(start + 64 * part), idx(start + 64 * (part + 1))}});
    fusion->addOutput(doubled(reshape(y, std::vector<int64_t>{2, 8, 4, 16})));
  }
  return fusion;
}

std::vector<c10::IValue> slicedHeadsInputs(at::Device device) {
  const auto bf16 = at::TensorOptions().device(device).dtype(at::kBFloat16);
  return {at::randn({2, 8, 64}, bf16), at::randn({192, 64}, bf16)};
}

// A cache miss's segmentation on the CPU, kept with what it refers to.
struct Cut {
  Cut(const Fusion* fusion, std::vector<c10::IValue> run_inputs)
      : segmented(fusion),
        inputs(std::move(run_inputs)),
        info(makeRuntimeInfo(
            segmented.completeFusion(), inputs, /*require_cuda=*/false)),
        scheduling(segmentForInputs(segmented, inputs, info)) {}

  // The groups that read an intermediate.
  std::vector<SegmentedGroup*> readers() const {
    std::vector<SegmentedGroup*> result;
    for (SegmentedGroup* group : segmented.groups()) {
      for (Val* in : group->inputs()) {
        if (segmented.isIntermediate(in)) {
          result.push_back(group);
          break;
        }
      }
    }
    return result;
  }

  SegmentedFusion segmented;
  std::vector<c10::IValue> inputs;
  RuntimeInfo info;
  std::unique_ptr<InputSegmentScheduling> scheduling;
};

// The tensor inputs of `group` that another group computes.
std::vector<TensorView*> intermediatesRead(
    const Cut& cut, const SegmentedGroup& group) {
  std::vector<TensorView*> result;
  for (Val* in : group.inputs()) {
    if (cut.segmented.isIntermediate(in)) {
      result.push_back(in->as<TensorView>());
    }
  }
  return result;
}

} // namespace

// Each head tensor is ATen's view of the product: [2, 8, 4, 16] with the
// product's row stride (192) between tokens. The plan gives it an
// allocation that says so (contiguous but along the tokens), and the
// kernel that reads it is compiled against a stand-in of those strides.
TEST_F(HandedViewsTest, SlicedHeadsOfAnAtenProductAreHandedOnAsViews) {
  std::unique_ptr<Fusion> fusion = slicedHeadsFusion(2);
  Cut cut(fusion.get(), slicedHeadsInputs(at::kCPU));
  const std::vector<SegmentedGroup*> readers = cut.readers();
  ASSERT_EQ(readers.size(), 2u) << cut.segmented.toString();
  for (SegmentedGroup* reader : readers) {
    const std::vector<TensorView*> views = intermediatesRead(cut, *reader);
    ASSERT_EQ(views.size(), 1u);
    TensorView* view = views[0];
    const HandedView* handed = cut.scheduling->handedView(view);
    ASSERT_NE(handed, nullptr) << view->toString();
    EXPECT_EQ(handed->layout.sizes, (std::vector<int64_t>{2, 8, 4, 16}));
    EXPECT_EQ(handed->layout.strides, (std::vector<int64_t>{1536, 192, 16, 1}));
    EXPECT_EQ(handed->alignment, 16);
    EXPECT_EQ(view->getMaybeAllocationDomain(), view->getLogicalDomain());
    EXPECT_EQ(view->getContiguity(), (Contiguity{true, false, true, true}));

    GroupInputs part_inputs = cut.scheduling->groupInputs(*reader);
    const at::Tensor stand_in = part_inputs.values.at(0).toTensor();
    EXPECT_EQ(stand_in.strides().vec(), handed->layout.strides);
    std::unique_ptr<Fusion> part = reader->makeFusion();
    RuntimeInfo info = makeRuntimeInfo(
        part.get(), part_inputs.values, false, part_inputs.layouts);
    Scheduler& scheduler =
        segmentScheduler(part.get(), info, cut.scheduling->chosenFor(*reader));
    ASSERT_EQ(scheduler.type(), SchedulerType::PointWise);
    auto params = scheduler.computeHeuristics(part.get(), info);
    // The heads of 16 along a row are read in vectors of 8 despite the
    // stride between tokens.
    EXPECT_THAT(params->toString(), ::testing::HasSubstr("vectorize 8"));
    scheduler.schedule(part.get(), *params);
    const std::string code = generateCudaKernel(part.get());
    // The token axis is addressed through the view's stride, a kernel
    // parameter (the dense stand-in's would have been folded away).
    const std::string param =
        "T" + std::to_string(part->inputs().at(0)->name());
    EXPECT_THAT(code, ::testing::HasSubstr(param + ".alloc_stride["));
    compileToCubin(code, "fuser_kernel", 90, true);
  }
}

// A slice that starts one element in: its pointer is 2-byte aligned, and
// the stand-in the kernels are compiled against is too.
TEST_F(HandedViewsTest, AViewAtAnOddOffsetKeepsItsAlignment) {
  std::unique_ptr<Fusion> fusion = slicedHeadsFusion(1, /*start=*/1);
  Cut cut(fusion.get(), slicedHeadsInputs(at::kCPU));
  const std::vector<SegmentedGroup*> readers = cut.readers();
  ASSERT_EQ(readers.size(), 1u) << cut.segmented.toString();
  TensorView* view = intermediatesRead(cut, *readers[0]).at(0);
  const HandedView* handed = cut.scheduling->handedView(view);
  ASSERT_NE(handed, nullptr);
  EXPECT_EQ(handed->alignment, 2);
  const at::Tensor stand_in =
      allocateHandedView(*handed, at::TensorOptions().dtype(at::kBFloat16));
  EXPECT_EQ(pointerAlignment(stand_in.data_ptr()), 2);
  EXPECT_EQ(stand_in.strides().vec(), handed->layout.strides);
  EXPECT_TRUE(matchesHandedView(stand_in, *handed));
  // A dense copy has other strides; an aligned view of the same strides
  // is read correctly by the kernel compiled for the misaligned one.
  EXPECT_FALSE(matchesHandedView(stand_in.contiguous(), *handed));
  HandedView aligned = *handed;
  aligned.alignment = 16;
  EXPECT_FALSE(matchesHandedView(stand_in, aligned));
  EXPECT_TRUE(matchesHandedView(
      allocateHandedView(aligned, at::TensorOptions().dtype(at::kBFloat16)),
      *handed));
}

// The product a kernel reads whole is a fresh dense tensor: nothing to
// hand on differently, and its layout stays the dense one.
TEST_F(HandedViewsTest, DenseOutputsOfAtenSegmentsAreNotPlanned) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    fusion->addOutput(doubled(projectedInput(*fusion)));
  }
  Cut cut(fusion.get(), slicedHeadsInputs(at::kCPU));
  const std::vector<SegmentedGroup*> readers = cut.readers();
  ASSERT_EQ(readers.size(), 1u) << cut.segmented.toString();
  TensorView* product = intermediatesRead(cut, *readers[0]).at(0);
  EXPECT_EQ(cut.scheduling->handedView(product), nullptr);
  EXPECT_EQ(
      product->getContiguity(),
      TensorDomain::getContiguityFilledWith(product->getLogicalDomain(), true));
}

// A head tensor the fusion also returns keeps the layout the user gets
// (ATen's view, or a dense one where it has a layout of its own): it is
// not re-laid out for its readers.
TEST_F(HandedViewsTest, ReturnedViewsAreNotPlanned) {
  std::unique_ptr<Fusion> fusion = slicedHeadsFusion(1);
  {
    FusionGuard fg(fusion.get());
    Expr* cast_out = fusion->outputs()[0]->definition();
    Val* mul_out = cast_out->input(0);
    Val* view = mul_out->definition()->input(0)->definition()->input(0);
    fusion->addOutput(view);
  }
  Cut cut(fusion.get(), slicedHeadsInputs(at::kCPU));
  ASSERT_FALSE(cut.readers().empty()) << cut.segmented.toString();
  for (SegmentedGroup* reader : cut.readers()) {
    for (TensorView* in : intermediatesRead(cut, *reader)) {
      EXPECT_EQ(cut.scheduling->handedView(in), nullptr) << in->toString();
    }
  }
}

// A product of a reshaped slice of another product: the Matmul scheduler
// took the second product while segmenting (its operand had no layout
// yet) and failed once the layout was fixed (the bulk copy engine's tiles
// do not follow a reshape's root), so the runtime fell back to ATen with
// a warning. It now declines reshaped operands from the start: both
// products and the views between them are one ATen segment.
TEST_F(HandedViewsTest, AProductOfAReshapedViewStaysWithAten) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* product = projectedInput(*fusion);
    TensorView* w2 = makeContigTensor(2, DataType::BFloat16);
    fusion->addInput(w2);
    TensorView* part = slice(
        product, {{nullptr, nullptr, nullptr},
                  {nullptr, nullptr, nullptr},
                  {idx(0), idx(256)}});
    fusion->addOutput(
        matmul(reshape(part, std::vector<int64_t>{512, 256}), w2));
  }
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16);
  auto segmented = checkedSegments(
      fusion.get(), {at::randn({2, 256, 64}, bf16), at::randn({264, 64}, bf16),
                     at::randn({256, 128}, bf16)});
  EXPECT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{SchedulerType::ExprEval}))
      << segmented->toString();
}

// ---- On the GPU, against ATen.

// Two head tensors through the runtime: the values match ATen and the
// ATen segment copies nothing (before the plan it laid out each head
// tensor densely, one copy kernel per head tensor and run).
TEST_F(HandedViewsGpuTest, SlicedHeadsRunWithoutLayoutCopies) {
  FusionExecutorCache fec(slicedHeadsFusion(2));
  const std::vector<c10::IValue> inputs = slicedHeadsInputs(at::kCUDA);
  fec.runFusionWithInputs(inputs); // compiles
  const int64_t copies = exprEvalLayoutCopyCount();
  EXPECT_EQ(
      runOnGpu(fec, inputs, __LINE__),
      (std::vector<SchedulerType>{
          SchedulerType::ExprEval, SchedulerType::PointWise,
          SchedulerType::PointWise}));
  EXPECT_EQ(exprEvalLayoutCopyCount(), copies);
}

// The odd-offset slice: the kernel is compiled for a 2-byte aligned
// pointer, and the run hands ATen's view to it.
TEST_F(HandedViewsGpuTest, AViewAtAnOddOffsetRunsWithoutACopy) {
  FusionExecutorCache fec(slicedHeadsFusion(1, /*start=*/1));
  const std::vector<c10::IValue> inputs = slicedHeadsInputs(at::kCUDA);
  fec.runFusionWithInputs(inputs);
  const int64_t copies = exprEvalLayoutCopyCount();
  runOnGpu(fec, inputs, __LINE__);
  EXPECT_EQ(exprEvalLayoutCopyCount(), copies);
}

// Where ATen's result does not match the planned view (here a pointer
// less aligned than planned: a slice one float into a fresh product), the
// executor copies it into a tensor of the planned strides and alignment.
TEST_F(HandedViewsGpuTest, AViewThatDoesNotMatchIsCopiedAsPlanned) {
  Fusion fusion;
  {
    FusionGuard fg(&fusion);
    TensorView* x = makeContigTensor(2);
    fusion.addInput(x);
    fusion.addOutput(slice(
        mul(x, IrBuilder::create<Val>(2.0)),
        {{nullptr, nullptr, nullptr}, {idx(1), idx(9), nullptr}}));
  }
  HandedView planned;
  planned.layout.sizes = {4, 8};
  planned.layout.strides = {10, 1};
  planned.alignment = 16;
  ExprEvalExecutor executor;
  const at::Tensor x =
      at::randn({4, 10}, at::TensorOptions().device(at::kCUDA));
  executor.compile(&fusion, {x});
  executor.handOn(0, planned);
  const int64_t copies = exprEvalLayoutCopyCount();
  const at::Tensor out = executor.run({x}).at(0);
  EXPECT_EQ(exprEvalLayoutCopyCount(), copies + 1);
  EXPECT_EQ(out.strides().vec(), planned.layout.strides);
  EXPECT_EQ(pointerAlignment(out.data_ptr()), 16);
  EXPECT_TRUE(at::equal(out, (x * 2.0).slice(1, 1, 9)));
}

} // namespace fuser
