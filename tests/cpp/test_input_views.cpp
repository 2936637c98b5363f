// Outputs that are views of the fusion's inputs (segmentation/input_views.h,
// doc/segmentation.md §8): which exprs form the segment of views, that it
// runs no kernel and returns ATen's views (aliases of the input, on the CPU
// too), and on the GPU through FusionExecutorCache: no kernel executor, the
// outputs sharing the input's storage, the values ATen's.
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/expr_eval_executor.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/fusion_kernel_runtime.h>
#include <runtime/kernel_executor.h>
#include <segmentation/input_views.h>
#include <tests/cpp/segmentation_harness.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace fuser {

class InputViewsTest : public FuserIrTest {};
class InputViewsGpuTest : public FuserTest {};

namespace {

constexpr int64_t kBatch = 2;
constexpr int64_t kSeq = 8;
constexpr int64_t kHeads = 4;
constexpr int64_t kHeadDim = 16;
constexpr int64_t kEmbed = kHeads * kHeadDim;

Val* index(int64_t v) {
  return IrBuilder::create<Val>(v, DataType::Index);
}

// q, k, v as [B, H, S, D] from qkv [B, S, 3E]: a slice of E columns each,
// its heads split off and moved before the sequence (a transformer's head
// split; examples/transformer_block.py).
std::unique_ptr<Fusion> headSplitFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* qkv = makeContigTensor(3);
  fusion->addInput(qkv);
  for (int64_t part = 0; part < 3; ++part) {
    TensorView* columns = slice(
        qkv, {{index(0), qkv->axis(0)->extent(), nullptr},
              {index(0), qkv->axis(1)->extent(), nullptr},
              {index(part * kEmbed), index((part + 1) * kEmbed), nullptr}});
    TensorView* heads = reshape(columns, {kBatch, kSeq, kHeads, kHeadDim});
    fusion->addOutput(permute(heads, {0, 2, 1, 3}));
  }
  return fusion;
}

at::Tensor headSplitInput(const at::TensorOptions& options) {
  return at::randn({kBatch, kSeq, 3 * kEmbed}, options);
}

std::vector<at::Tensor> atenHeadSplit(const at::Tensor& qkv) {
  std::vector<at::Tensor> heads;
  for (const at::Tensor& part : qkv.chunk(3, -1)) {
    heads.push_back(
        part.view({kBatch, kSeq, kHeads, kHeadDim}).permute({0, 2, 1, 3}));
  }
  return heads;
}

// permute(x) returned beside relu(x) + 1, and a transpose of x that the
// relu also reads.
std::unique_ptr<Fusion> viewBesideComputeFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addOutput(permute(x, {1, 0}));
  TensorView* read = transpose(x, 0, 1);
  fusion->addOutput(read);
  fusion->addOutput(add(relu(read), IrBuilder::create<Val>(1.0)));
  return fusion;
}

std::vector<Expr*> tensorExprs(Fusion* fusion) {
  std::vector<Expr*> exprs;
  for (Expr* expr : fusion->exprs()) {
    if (writesTensor(expr)) {
      exprs.push_back(expr);
    }
  }
  return exprs;
}

bool sharesStorage(const at::Tensor& a, const at::Tensor& b) {
  return a.storage().is_alias_of(b.storage());
}

} // namespace

TEST_F(InputViewsTest, ViewOpsAreTheAddressingOnes) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  TensorView* permuted = permute(x, {1, 0});
  TensorView* copied = set(x);
  TensorView* reshaped = reshape(x, {-1});
  TensorView* widened = broadcast(x, {true, false, false});
  TensorView* sliced = slice(
      x, {{index(1), x->axis(0)->extent(), nullptr},
          {index(0), x->axis(1)->extent(), nullptr}});
  TensorView* computed = relu(x);
  EXPECT_TRUE(isViewOp(permuted->definition()));
  EXPECT_FALSE(isViewOp(copied->definition())) << "a set is a copy";
  EXPECT_TRUE(isViewOp(reshaped->definition()));
  EXPECT_TRUE(isViewOp(widened->definition()));
  EXPECT_TRUE(isViewOp(sliced->definition()));
  EXPECT_FALSE(isViewOp(computed->definition()));
}

TEST_F(InputViewsTest, HeadSplitIsOneSegmentOfViews) {
  std::unique_ptr<Fusion> fusion = headSplitFusion();
  auto segmented =
      checkedSegments(fusion.get(), {headSplitInput(at::TensorOptions())});
  ASSERT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{SchedulerType::ExprEval}))
      << segmented->toString();
  EXPECT_EQ(segmented->groups()[0]->exprs().size(), 9u);
}

// Only the permute returned alone is a view; the transpose the relu also
// reads is written by the kernel that computes the relu.
TEST_F(InputViewsTest, AViewAComputationReadsStaysInItsKernel) {
  std::unique_ptr<Fusion> fusion = viewBesideComputeFusion();
  const std::vector<Expr*> views =
      returnedInputViews(tensorExprs(fusion.get()));
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0]->output(0), fusion->outputs()[0]);
  auto segmented = checkedSegments(fusion.get(), {at::randn({16, 24})});
  ASSERT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{
          SchedulerType::PointWise, SchedulerType::ExprEval}))
      << segmented->toString();
  // (The segmented fusion is a copy: its own first output.)
  const std::vector<Expr*>& returned = segmented->groups()[1]->exprs();
  ASSERT_EQ(returned.size(), 1u);
  EXPECT_EQ(returned[0]->output(0), segmented->completeFusion()->outputs()[0]);
}

// An output the user laid out is written, even when it is a permute of an
// input.
TEST_F(InputViewsTest, AnOutputWithItsOwnLayoutIsWritten) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigTensor(2);
    fusion->addInput(x);
    TensorView* t = permute(x, {1, 0});
    t->setAllocationDomain({t->axis(1), t->axis(0)}, true);
    fusion->addOutput(t);
  }
  EXPECT_TRUE(returnedInputViews(tensorExprs(fusion.get())).empty());
  auto segmented = checkedSegments(fusion.get(), {at::randn({16, 24})});
  EXPECT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{SchedulerType::PointWise}));
}

// A copy (set) of an input is a copy, and the views before it are read by
// its kernel.
TEST_F(InputViewsTest, ASetOfAViewIsAKernel) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigTensor(2);
    fusion->addInput(x);
    fusion->addOutput(set(permute(x, {1, 0})));
  }
  EXPECT_TRUE(returnedInputViews(tensorExprs(fusion.get())).empty());
  auto segmented = checkedSegments(fusion.get(), {at::randn({16, 24})});
  EXPECT_EQ(
      schedulerTypes(*segmented),
      (std::vector<SchedulerType>{SchedulerType::PointWise}));
}

// The segment's executor returns ATen's views: on CPU tensors too, they
// share the input's storage.
TEST_F(InputViewsTest, ExecutorReturnsViewsOfTheInput) {
  std::unique_ptr<Fusion> fusion = headSplitFusion();
  const at::Tensor qkv = headSplitInput(at::TensorOptions());
  ExprEvalExecutor executor;
  executor.compile(fusion.get(), {qkv}, {});
  const std::vector<at::Tensor> outputs = executor.run({qkv});
  const std::vector<at::Tensor> expected = atenHeadSplit(qkv);
  ASSERT_EQ(outputs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(sharesStorage(outputs[i], qkv)) << "output " << i;
    EXPECT_EQ(outputs[i].strides(), expected[i].strides()) << "output " << i;
    EXPECT_EQ(outputs[i].storage_offset(), expected[i].storage_offset());
    EXPECT_TRUE(at::equal(outputs[i], expected[i])) << "output " << i;
  }
}

// The head split launches no kernel: its one segment is ATen's views,
// which share the input's storage, in both runs of the cache.
TEST_F(InputViewsGpuTest, HeadSplitRunsNoKernel) {
  FusionExecutorCache fec(headSplitFusion());
  const at::Tensor qkv = headSplitInput(at::TensorOptions().device(at::kCUDA));
  for (int run = 0; run < 2; ++run) {
    const std::vector<at::Tensor> outputs = fec.runFusionWithInputs({qkv});
    const std::vector<at::Tensor> expected = atenHeadSplit(qkv);
    ASSERT_EQ(outputs.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_TRUE(sharesStorage(outputs[i], qkv)) << "output " << i;
      EXPECT_EQ(outputs[i].strides(), expected[i].strides());
      EXPECT_TRUE(at::equal(outputs[i], expected[i])) << "output " << i;
    }
  }
  FusionKernelRuntime* runtime = fec.getMostRecentKernelRuntime();
  for (Executor* executor : runtime->executors()) {
    EXPECT_EQ(dynamic_cast<KernelExecutor*>(executor), nullptr);
  }
}

TEST_F(InputViewsGpuTest, ViewBesideComputeIsAnAliasAndAKernel) {
  FusionExecutorCache fec(viewBesideComputeFusion());
  const at::Tensor x =
      at::randn({16, 24}, at::TensorOptions().device(at::kCUDA));
  const std::vector<at::Tensor> outputs = fec.runFusionWithInputs({x});
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_TRUE(sharesStorage(outputs[0], x));
  EXPECT_TRUE(at::equal(outputs[0], x.t()));
  EXPECT_FALSE(sharesStorage(outputs[1], x)) << "the kernel writes it";
  EXPECT_TRUE(at::equal(outputs[1], x.t()));
  EXPECT_TRUE(at::allclose(outputs[2], at::relu(x.t()) + 1.0));
}

} // namespace fuser
