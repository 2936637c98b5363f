// Binding inputs and allocating outputs (doc/design.md §6): checking tensors
// against their TensorViews, binding extents, inferring allocation sizes
// and strides, and laying out outputs. Host logic only: CPU tensors stand in
// for CUDA ones (the device check is optional).

#include <expr/evaluator.h>
#include <fusion.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>
#include <layout/device_counts.h>
#include <ops/all_ops.h>
#include <runtime/aten_types.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/input_binding.h>
#include <runtime/kernel_executor.h>
#include <runtime/off_device_compile.h>
#include <runtime/tensor_layout.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>

#include <memory>
#include <vector>

namespace fuser {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class RuntimeBindingTest : public FuserIrTest {};

namespace {

using Sizes = std::vector<int64_t>;

Val* indexConstant(int64_t value) {
  return IrBuilder::create<Val>(value, DataType::Index);
}

// The allocation sizes and strides binding derives for input `position`,
// validated and bound as the executor does.
struct AllocationSizesAndStrides {
  Sizes sizes;
  Sizes strides;
};

AllocationSizesAndStrides inferAllocationSizesAndStrides(
    TensorView* tv, const at::Tensor& tensor, ExpressionEvaluator& ee,
    int64_t position) {
  TensorLayout layout = inputLayout(tv, tensor, ee, position);
  return {layout.allocation_sizes, layout.allocation_strides};
}

AllocationSizesAndStrides bindAndInfer(
    TensorView* tv, const at::Tensor& tensor, ExpressionEvaluator& ee,
    int64_t position = 0) {
  validateInputTensor(tv, tensor, position, /*require_cuda=*/false);
  bindInputExtents(tv, tensor, ee, position);
  return inferAllocationSizesAndStrides(tv, tensor, ee, position);
}

at::Tensor allocateOutput(
    TensorView* tv, ExpressionEvaluator& ee, const at::TensorOptions& options) {
  return allocateTensor(
      denseLayout(tv, ee), options.dtype(toAtenType(tv->dtype())));
}

} // namespace

// The seed case of doc/design.md §1: [i6] allocated as [i6/2, 2].
TEST_F(RuntimeBindingTest, SeedSplitInput) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({6});
  fusion->addInput(in);
  fusion->addOutput(set(in));
  auto [outer, inner] = IterDomain::split(in->axis(0), indexConstant(2), true);
  in->setAllocationDomain({outer, inner}, true);

  ExpressionEvaluator ee;
  auto layout = bindAndInfer(in, at::arange(6, at::kFloat), ee);
  EXPECT_EQ(layout.sizes, (Sizes{3, 2}));
  EXPECT_EQ(layout.strides, (Sizes{2, 1}));

  // Every other element of a buffer: the inner ID, marked contiguous, has
  // stride 2.
  at::Tensor strided = at::arange(12, at::kFloat).slice(0, 0, 12, 2);
  EXPECT_THAT(
      [&] { inferAllocationSizesAndStrides(in, strided, ee, 0); },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("Input 0"), HasSubstr("sizes [6] and strides [2]"),
          HasSubstr("allocation domain is " + idsToString({outer, inner})),
          HasSubstr("contiguity [t t]"),
          HasSubstr("its stride must be 1 (it is the innermost ID)"),
          HasSubstr(".contiguous()"), HasSubstr("strides [1]"))));
  // The executor checks the outputs it allocates with the same code.
  EXPECT_THAT(
      [&] { inferAllocationSizesAndStrides(in, strided, ee, -1); },
      ThrowsMessage<UserError>(HasSubstr("An output (")));
}

TEST_F(RuntimeBindingTest, NonContiguousSplitAcceptsStrides) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeConcreteTensor({6});
  fusion->addInput(in);
  fusion->addOutput(set(in));
  auto [outer, inner] = IterDomain::split(in->axis(0), indexConstant(2), true);
  in->setAllocationDomain({outer, inner}, false);

  ExpressionEvaluator ee;
  at::Tensor strided = at::arange(12, at::kFloat).slice(0, 0, 12, 2);
  auto layout = bindAndInfer(in, strided, ee);
  EXPECT_EQ(layout.sizes, (Sizes{3, 2}));
  EXPECT_EQ(layout.strides, (Sizes{4, 2}));
}

// Allocation [M/4, 4, N] of a symbolic [M, N].
TEST_F(RuntimeBindingTest, SymbolicSplitBindsExtents) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  fusion->addInput(in);
  fusion->addOutput(set(in));
  IterDomain* m = in->axis(0);
  IterDomain* n = in->axis(1);
  auto [outer, inner] = IterDomain::split(m, indexConstant(4), true);
  in->setAllocationDomain({outer, inner, n}, true);

  ExpressionEvaluator ee;
  auto layout = bindAndInfer(in, at::empty({8, 3}), ee);
  EXPECT_EQ(ee.evaluate(m->extent()), 8);
  EXPECT_EQ(ee.evaluate(n->extent()), 3);
  EXPECT_EQ(ee.evaluate(outer->extent()), 2);
  EXPECT_EQ(layout.sizes, (Sizes{2, 4, 3}));
  EXPECT_EQ(layout.strides, (Sizes{12, 3, 1}));

  ExpressionEvaluator ee2;
  EXPECT_THAT(
      [&] {
        bindAndInfer(in, at::empty({6, 3}), ee2, 2);
      },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("Input 2"), HasSubstr("sizes [6, 3] and strides [3, 1]"),
          HasSubstr(idsToString({outer, inner, n})),
          HasSubstr("does not divide it"),
          HasSubstr("pass a size divisible by 4 (e.g. 8)"))));
}

// NHWC: logical [N, C, H, W], allocation [N, H, W, C].
TEST_F(RuntimeBindingTest, ChannelsLastInput) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* other = makeContigTensor(1);
  TensorView* in = makeContigTensor(4);
  fusion->addInput(other);
  fusion->addInput(in);
  fusion->addOutput(set(in));
  const auto& l = in->getLogicalDomain();
  in->setAllocationDomain({l[0], l[2], l[3], l[1]}, true);

  ExpressionEvaluator ee;
  at::Tensor nhwc =
      at::empty({2, 3, 4, 5}).contiguous(at::MemoryFormat::ChannelsLast);
  auto layout = bindAndInfer(in, nhwc, ee, 1);
  EXPECT_EQ(layout.sizes, (Sizes{2, 4, 5, 3}));
  EXPECT_EQ(layout.strides, (Sizes{60, 15, 3, 1}));

  at::Tensor nchw = at::empty({2, 3, 4, 5});
  EXPECT_THAT(
      [&] { bindAndInfer(in, nchw, ee, 1); },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("Input 1"),
          HasSubstr("sizes [2, 3, 4, 5] and strides [60, 20, 5, 1]"),
          HasSubstr("contiguity [t t t t]"),
          HasSubstr("but the tensor's stride is 20"),
          HasSubstr("strides [60, 1, 15, 3]"),
          HasSubstr(".contiguous(memory_format=torch.channels_last)"),
          HasSubstr(".contiguous(at::MemoryFormat::ChannelsLast)"))));
}

// A permutation other than channels-last gets the permute recipe.
TEST_F(RuntimeBindingTest, TransposedInputFix) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  fusion->addInput(in);
  fusion->addOutput(set(in));
  const auto& l = in->getLogicalDomain();
  in->setAllocationDomain({l[1], l[0]}, true);

  ExpressionEvaluator ee;
  auto layout = bindAndInfer(in, at::empty({3, 4}).t(), ee);
  EXPECT_EQ(layout.sizes, (Sizes{3, 4}));
  EXPECT_EQ(layout.strides, (Sizes{4, 1}));

  EXPECT_THAT(
      [&] {
        bindAndInfer(in, at::empty({4, 3}), ee);
      },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("strides [1, 4]"),
          HasSubstr("t.permute([1, 0]).contiguous().permute([1, 0])"))));
}

TEST_F(RuntimeBindingTest, MergedAllocation) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  fusion->addInput(in);
  fusion->addOutput(set(in));
  IterDomain* merged = IterDomain::merge(in->axis(0), in->axis(1));
  in->setAllocationDomain({merged}, true);

  ExpressionEvaluator ee;
  auto layout = bindAndInfer(in, at::empty({3, 4}), ee);
  EXPECT_EQ(layout.sizes, (Sizes{12}));
  EXPECT_EQ(layout.strides, (Sizes{1}));

  // Column-major: the outer axis has stride 1, not 1 * 4.
  at::Tensor column_major = at::empty({4, 3}).t();
  EXPECT_THAT(
      [&] { bindAndInfer(in, column_major, ee); },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("sizes [3, 4] and strides [1, 3]"), HasSubstr("merges"),
          HasSubstr("needs the outer stride to be 12"),
          HasSubstr(".contiguous()"))));
}

// Size-1 axes do not constrain strides, and are reported as contiguous.
TEST_F(RuntimeBindingTest, SizeOneAxisAcceptsAnyStride) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(3);
  fusion->addInput(in);
  fusion->addOutput(set(in));

  ExpressionEvaluator ee;
  at::Tensor t = at::empty_strided({4, 1, 5}, {5, 100, 1});
  auto layout = bindAndInfer(in, t, ee);
  EXPECT_EQ(layout.sizes, (Sizes{4, 1, 5}));
  EXPECT_EQ(layout.strides, (Sizes{5, 5, 1}));
}

TEST_F(RuntimeBindingTest, RankDtypeAndDeviceChecks) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  fusion->addInput(in);
  fusion->addOutput(set(in));

  EXPECT_THAT(
      [&] {
        validateInputTensor(in, at::empty({2, 3, 4}), 0, false);
      },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("Input 0"), HasSubstr("sizes [2, 3, 4]"),
          HasSubstr("rank 3 but the fusion input has rank 2"))));
  EXPECT_THAT(
      [&] {
        validateInputTensor(in, at::empty({2, 3}, at::kHalf), 0, false);
      },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("dtype is Half but the input is declared"),
          HasSubstr(".to(Float)"))));
  EXPECT_THAT(
      [&] {
        validateInputTensor(in, at::empty({2, 3}), 0, true);
      },
      ThrowsMessage<UserError>(
          AllOf(HasSubstr("the tensor is on cpu"), HasSubstr(".cuda()"))));
  EXPECT_NO_THROW(validateInputTensor(in, at::empty({2, 3}), 0, false));
}

// Inputs whose elements or offsets pass 2^30 (outputs are about as
// large) make the kernel index in 64 bits; smaller ones in 32.
TEST_F(RuntimeBindingTest, LargeInputsIndexIn64Bits) {
  EXPECT_TRUE(fitsInt32Indexing({at::empty({1024, 1024})}));
  // 2^31 elements, one in memory (stride 0): still 2^31 logical indices.
  at::Tensor expanded = at::zeros({1}).expand({1 << 16, 1 << 15});
  EXPECT_FALSE(fitsInt32Indexing({at::empty({4}), expanded}));
  // Two elements 2^30 apart (bytes: the storage is not touched).
  at::Tensor storage = at::empty({(int64_t{1} << 30) + 2}, at::kByte);
  at::Tensor far = storage.as_strided({2}, {int64_t{1} << 30});
  EXPECT_FALSE(fitsInt32Indexing({far}));
}

TEST_F(RuntimeBindingTest, ConstantExtentMismatch) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({4, 3});
  fusion->addInput(in);
  fusion->addOutput(set(in));

  ExpressionEvaluator ee;
  EXPECT_NO_THROW(bindInputExtents(in, at::empty({4, 3}), ee, 0));
  EXPECT_THAT(
      [&] {
        bindInputExtents(in, at::empty({4, 5}), ee, 0);
      },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("axis 1"), HasSubstr("declared with the constant extent 3"),
          HasSubstr("the tensor gives 5"))));
  // A broadcast axis needs size 1.
  TensorView* broadcast_in = makeContigConcreteTensor({1, 3});
  EXPECT_THAT(
      [&] {
        bindInputExtents(broadcast_in, at::empty({2, 3}), ee, 0);
      },
      ThrowsMessage<UserError>(HasSubstr("is a broadcast axis")));
}

// A symbolic extent shared by two inputs must get the same size from both.
TEST_F(RuntimeBindingTest, SharedExtentMustAgree) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(1);
  fusion->addInput(a);
  auto* domain = IrBuilder::create<TensorDomain>(
      std::vector<IterDomain*>{IrBuilder::create<IterDomain>(
          fusion->zeroVal(), a->axis(0)->extent())},
      Contiguity{true});
  auto* b = IrBuilder::create<TensorView>(domain, DataType::Float);
  fusion->addInput(b);
  fusion->addOutput(add(a, b));

  ExpressionEvaluator ee;
  bindInputExtents(a, at::empty({7}), ee, 0);
  EXPECT_THAT(
      [&] { bindInputExtents(b, at::empty({8}), ee, 1); },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("Input 1"), HasSubstr("bound by an earlier input to 7"),
          HasSubstr("the tensor gives 8"))));
}

// The sharded input of doc/design.md §1: logical [M, N], allocation
// [DIDx{2}, M/2, N]; each rank passes its [M/2, N] shard.
TEST_F(RuntimeBindingTest, ShardedInputBindsGlobalExtent) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  fusion->addInput(in);
  TensorView* out = set(in);
  fusion->addOutput(out);
  IterDomain* m = in->axis(0);
  IterDomain* n = in->axis(1);
  auto [did, local] = IterDomain::split(m, indexConstant(2), false);
  did->parallelize(ParallelType::DIDx);
  in->setAllocationDomain({did, local, n}, true);

  ExpressionEvaluator ee;
  auto layout = bindAndInfer(in, at::empty({3, 5}), ee);
  EXPECT_EQ(ee.evaluate(m->extent()), 6);
  EXPECT_EQ(ee.evaluate(n->extent()), 5);
  EXPECT_EQ(ee.evaluate(local->extent()), 3);
  EXPECT_EQ(layout.sizes, (Sizes{1, 3, 5}));
  EXPECT_EQ(layout.strides, (Sizes{15, 5, 1}));

  const DeviceCounts devices(in, ee);
  EXPECT_EQ(devices.of(m), 2);
  EXPECT_EQ(devices.of(n), 1);
  const TensorLayout dense = denseLayout(in, ee);
  EXPECT_EQ(dense.sizes, (Sizes{3, 5}));
  EXPECT_EQ(dense.global_sizes, (Sizes{6, 5}));
  EXPECT_EQ(dense.allocation_sizes, (Sizes{1, 3, 5}));

  // An output sharded the same way is allocated as the local shard.
  auto [out_did, out_local] =
      IterDomain::split(out->axis(0), indexConstant(2), false);
  out_did->parallelize(ParallelType::DIDx);
  out->setAllocationDomain({out_did, out_local, out->axis(1)}, true);
  at::Tensor allocated = allocateOutput(out, ee, at::TensorOptions());
  EXPECT_EQ(allocated.sizes().vec(), (Sizes{3, 5}));
  EXPECT_EQ(allocated.strides().vec(), (Sizes{5, 1}));
}

TEST_F(RuntimeBindingTest, BindFusionInputsWithScalars) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(1);
  Val* alpha = IrBuilder::create<Val>(DataType::Double);
  Val* count = IrBuilder::create<Val>(DataType::Int);
  fusion->addInput(in);
  fusion->addInput(alpha);
  fusion->addInput(count);
  fusion->addOutput(mul(in, alpha));

  ExpressionEvaluator ee;
  bindFusionInputs(
      fusion.get(), {at::empty({5}), 2.5, int64_t(3)}, ee,
      /*require_cuda=*/false);
  EXPECT_EQ(ee.evaluate(in->axis(0)->extent()), 5);
  EXPECT_EQ(ee.evaluate(alpha), 2.5);
  EXPECT_EQ(ee.evaluate(count), 3);

  // Values take the kind of the declared type: an int given for a Double
  // input reads as a double, a 0-dim tensor as its value.
  ExpressionEvaluator converted;
  bindFusionInputs(
      fusion.get(), {at::empty({5}), int64_t(2), at::scalar_tensor(4.0)},
      converted, /*require_cuda=*/false);
  ASSERT_TRUE(converted.evaluate(alpha).has_value());
  EXPECT_TRUE(converted.evaluate(alpha)->isDouble());
  EXPECT_EQ(converted.evaluate(alpha), 2.0);
  ASSERT_TRUE(converted.evaluate(count).has_value());
  EXPECT_TRUE(converted.evaluate(count)->isInt());
  EXPECT_EQ(converted.evaluate(count), 4);

  EXPECT_THAT(
      [&] { bindFusionInputs(fusion.get(), {at::empty({5})}, ee, false); },
      ThrowsMessage<UserError>(HasSubstr("has 3 inputs but 1 values")));
  EXPECT_THAT(
      [&] {
        bindFusionInputs(
            fusion.get(), {2.0, 2.5, int64_t(3)}, ee, /*require_cuda=*/false);
      },
      ThrowsMessage<UserError>(HasSubstr("is a tensor")));
}

// doc/design.md §6: [i/2, 2] gives a plain contiguous tensor.
TEST_F(RuntimeBindingTest, OutputWithSplitAllocation) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(1);
  fusion->addInput(in);
  TensorView* out = set(in);
  fusion->addOutput(out);
  auto [outer, inner] = IterDomain::split(out->axis(0), indexConstant(2), true);
  out->setAllocationDomain({outer, inner}, true);

  ExpressionEvaluator ee;
  ee.bind(in->axis(0)->extent(), 6);
  EXPECT_EQ(denseLayout(out, ee).sizes, (Sizes{6}));
  at::Tensor allocated = allocateOutput(out, ee, at::TensorOptions());
  EXPECT_EQ(allocated.sizes().vec(), (Sizes{6}));
  EXPECT_EQ(allocated.strides().vec(), (Sizes{1}));
  EXPECT_TRUE(allocated.is_contiguous());
  EXPECT_EQ(allocated.scalar_type(), at::kFloat);

  // A split that does not divide pads the buffer; the view keeps the
  // logical size.
  ExpressionEvaluator odd;
  odd.bind(in->axis(0)->extent(), 5);
  at::Tensor padded = allocateOutput(out, odd, at::TensorOptions());
  EXPECT_EQ(padded.sizes().vec(), (Sizes{5}));
  EXPECT_EQ(padded.strides().vec(), (Sizes{1}));
  EXPECT_GE(padded.storage().nbytes(), 6 * sizeof(float));
}

// A permuted allocation gives permuted strides, also through a split.
TEST_F(RuntimeBindingTest, OutputWithPermutedAllocation) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2, DataType::Half);
  fusion->addInput(in);
  TensorView* transposed_out = set(in);
  TensorView* split_out = set(in);
  fusion->addOutput(transposed_out);
  fusion->addOutput(split_out);
  {
    const auto& l = transposed_out->getLogicalDomain();
    transposed_out->setAllocationDomain({l[1], l[0]}, true);
  }
  {
    const auto& l = split_out->getLogicalDomain();
    auto [outer, inner] = IterDomain::split(l[0], indexConstant(2), true);
    split_out->setAllocationDomain({l[1], outer, inner}, true);
  }

  ExpressionEvaluator ee;
  ee.bind(in->axis(0)->extent(), 4);
  ee.bind(in->axis(1)->extent(), 3);
  for (TensorView* out : {transposed_out, split_out}) {
    at::Tensor allocated = allocateOutput(out, ee, at::TensorOptions());
    EXPECT_EQ(allocated.sizes().vec(), (Sizes{4, 3})) << out->toString();
    EXPECT_EQ(allocated.strides().vec(), (Sizes{1, 4})) << out->toString();
    EXPECT_EQ(allocated.scalar_type(), at::kHalf);
  }
}

// Reductions leave the shape; broadcasts are size 1.
TEST_F(RuntimeBindingTest, OutputOfReductionAndBroadcast) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  fusion->addInput(in);
  TensorView* reduced = sum(in, {1});
  TensorView* kept = sum(in, {1}, /*keep_dim=*/true);
  fusion->addOutput(reduced);
  fusion->addOutput(kept);

  ExpressionEvaluator ee;
  ee.bind(in->axis(0)->extent(), 4);
  ee.bind(in->axis(1)->extent(), 3);
  EXPECT_EQ(denseLayout(reduced, ee).sizes, (Sizes{4}));
  at::Tensor allocated = allocateOutput(kept, ee, at::TensorOptions());
  EXPECT_EQ(allocated.sizes().vec(), (Sizes{4, 1}));
  EXPECT_EQ(allocated.strides().vec(), at::empty({4, 1}).strides().vec());
}

class RuntimeBindingGpuTest : public FuserTest {};

TEST_F(RuntimeBindingGpuTest, CudaInputsAndOutputs) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(4);
  fusion->addInput(in);
  TensorView* out = set(in);
  fusion->addOutput(out);
  const auto& l = in->getLogicalDomain();
  in->setAllocationDomain({l[0], l[2], l[3], l[1]}, true);
  const auto& o = out->getLogicalDomain();
  out->setAllocationDomain({o[0], o[2], o[3], o[1]}, true);

  at::Tensor nhwc = at::empty({2, 3, 4, 5}, at::kCUDA)
                        .contiguous(at::MemoryFormat::ChannelsLast);
  ExpressionEvaluator ee;
  bindFusionInputs(fusion.get(), {nhwc}, ee, /*require_cuda=*/true);
  auto layout = inferAllocationSizesAndStrides(in, nhwc, ee, 0);
  EXPECT_EQ(layout.strides, (Sizes{60, 15, 3, 1}));
  at::Tensor allocated =
      allocateOutput(out, ee, at::TensorOptions().device(at::kCUDA));
  EXPECT_TRUE(allocated.is_cuda());
  EXPECT_EQ(allocated.strides(), nhwc.strides());
  EXPECT_TRUE(allocated.is_contiguous(at::MemoryFormat::ChannelsLast));
}

} // namespace fuser

namespace fuser {

// x [4, 8] times a weight of 6 broadcast over the rows: the fusion joins
// the weight's axis with x's second, so their sizes must agree (a kernel
// would read 6 weights for 8 columns).
TEST_F(RuntimeBindingTest, JoinedAxesOfDifferentSizesAreAUserError) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(1);
  fusion.addInput(x);
  fusion.addInput(w);
  fusion.addOutput(mul(x, broadcast(w, {true, false})));
  std::vector<c10::IValue> bad = {at::randn({4, 8}), at::randn({6})};
  ExpressionEvaluator ee;
  bindFusionInputs(&fusion, bad, ee, /*require_cuda=*/false);
  EXPECT_THAT(
      [&] { checkJoinedInputExtents(&fusion, ee); },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("Input 1 (T1"), HasSubstr("has size 6 along axis 0"),
          HasSubstr("input 0 (T0"), HasSubstr("has size 8 along axis 1"))));
  std::vector<c10::IValue> good = {at::randn({4, 8}), at::randn({8})};
  ExpressionEvaluator ee_good;
  bindFusionInputs(&fusion, good, ee_good, /*require_cuda=*/false);
  EXPECT_NO_THROW(checkJoinedInputExtents(&fusion, ee_good));
}

// x plus uniform noise of the constant shape [4, 8]: the fusion joins the
// noise's constant axes with x's, so x must have those sizes (the kernels
// take the constants for x's joined sizes).
TEST_F(RuntimeBindingTest, AConstantSizeJoinedToAnInputIsChecked) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  Val* zero = IrBuilder::create<Val>(0.0);
  Val* one = IrBuilder::create<Val>(1.0);
  TensorView* noise = uniform(
      {IrBuilder::indexConst(4), IrBuilder::indexConst(8)}, zero, one,
      IrBuilder::create<Val>(int64_t{1}), IrBuilder::create<Val>(int64_t{0}));
  fusion.addOutput(add(x, noise));
  ExpressionEvaluator ee;
  bindFusionInputs(&fusion, {at::randn({4, 6})}, ee, /*require_cuda=*/false);
  EXPECT_THAT(
      [&] { checkJoinedInputExtents(&fusion, ee); },
      ThrowsMessage<UserError>(AllOf(
          HasSubstr("The tensor T1"),
          HasSubstr("of constant sizes has size 8 along axis 1"),
          HasSubstr("input 0 (T0"), HasSubstr("has size 6 along axis 1"))));
  ExpressionEvaluator ee_good;
  bindFusionInputs(&fusion, {at::randn({4, 8})}, ee_good, false);
  EXPECT_NO_THROW(checkJoinedInputExtents(&fusion, ee_good));
}

} // namespace fuser

// Inputs a user may pass that look odd but are valid, and one that is
// not: each runs through FusionExecutorCache and matches ATen, or is a
// user error that leaves the cache usable.
namespace fuser {

class HostileInputGpuTest : public FuserTest {};

namespace {

// Inputs a and b of rank 2; outputs a itself and a * b.
std::unique_ptr<Fusion> inputReturnedBesideAProduct() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addInput(b);
  fusion->addOutput(a);
  fusion->addOutput(mul(a, b));
  return fusion;
}

} // namespace

// An output that is an input is that very tensor; the same tensor may be
// passed as two inputs.
TEST_F(HostileInputGpuTest, InputsThatAliasOutputsAndEachOther) {
  FusionExecutorCache fec(inputReturnedBesideAProduct());
  at::Tensor x = cudaRandn({33, 65});
  std::vector<at::Tensor> out = fec.runFusionWithInputs({x, x});
  EXPECT_TRUE(out[0].is_same(x));
  EXPECT_TRUE(at::equal(out[1], x * x));
}

// Regression: the one segment of a fusion that also returns an input
// listed that input among its outputs, and lowering refuses an output
// that is an input, so the segment ran with ATen. The runtime returns
// such an output from the input's slot; the kernel writes only the rest.
TEST_F(RuntimeBindingTest, AnInputReturnedAsOutputLeavesTheKernelAlone) {
  std::unique_ptr<Fusion> fusion = inputReturnedBesideAProduct();
  const at::Tensor x = at::randn({33, 65});
  const std::vector<OffDeviceSegment> segments =
      compileOffDevice(fusion.get(), {x, x});
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_EQ(segments[0].scheduler, SchedulerType::PointWise);
  EXPECT_EQ(segments[0].error, "");
  EXPECT_THAT(
      segments[0].code,
      ::testing::HasSubstr("Tensor<float, 2, 2> T0, Tensor<float, 2, 2> T1, "
                           "Tensor<float, 2, 2> T2)"));
}

// A view whose elements overlap in memory (as_strided with stride 1 along
// both axes) is read correctly; only the output must not overlap.
TEST_F(HostileInputGpuTest, SelfOverlappingInputStrides) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* a = makeSymbolicTensor(2);
    fusion->addInput(a);
    fusion->addOutput(relu(a));
  }
  FusionExecutorCache fec(std::move(fusion));
  at::Tensor base = cudaRandn({200});
  at::Tensor overlapping = base.as_strided({64, 64}, {1, 1});
  std::vector<at::Tensor> out = fec.runFusionWithInputs({overlapping});
  EXPECT_TRUE(at::equal(out[0], at::relu(overlapping)));
}

// An input no expr reads is bound and checked like any other, and ignored.
TEST_F(HostileInputGpuTest, InputNeverUsed) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* a = makeContigTensor(2);
    TensorView* unused = makeContigTensor(3);
    fusion->addInput(a);
    fusion->addInput(unused);
    fusion->addOutput(neg(a));
  }
  FusionExecutorCache fec(std::move(fusion));
  at::Tensor x = cudaRandn({16, 8});
  std::vector<at::Tensor> out =
      fec.runFusionWithInputs({x, cudaRandn({2, 3, 4})});
  EXPECT_TRUE(at::equal(out[0], -x));
  EXPECT_THAT(
      [&] {
        fec.runFusionWithInputs({x, cudaRandn({2, 3})});
      },
      ThrowsMessage<UserError>(HasSubstr("rank")));
}

// A tensor on another GPU than the others is refused by name.
TEST_F(HostileInputGpuTest, TensorOnAnotherGpu) {
  if (at::getNumGPUs() < 2) {
    GTEST_SKIP() << "needs two GPUs (this machine has one)";
  }
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* a = makeContigTensor(1);
    TensorView* b = makeContigTensor(1);
    fusion->addInput(a);
    fusion->addInput(b);
    fusion->addOutput(add(a, b));
  }
  FusionExecutorCache fec(std::move(fusion));
  at::Tensor x = cudaRandn({8});
  at::Tensor y = x.to(at::Device(at::kCUDA, 1));
  EXPECT_THAT(
      [&] {
        fec.runFusionWithInputs({x, y});
      },
      ThrowsMessage<UserError>(HasSubstr("device")));
  EXPECT_TRUE(at::equal(fec.runFusionWithInputs({x, x})[0], x + x));
}

} // namespace fuser
