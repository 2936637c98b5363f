// Indexing ops (select, index_select, gather, scatter): their ATen
// evaluation against torch's over several layouts and edge cases (negative
// and empty indices, duplicate scatter indices), out-of-range indices as
// user errors, the axes they map for the ID graph, their segment, and on the
// GPU a fusion around each.
#include <fusion.h>
#include <id_model/logical_domain_map.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/aten_evaluator.h>
#include <runtime/aten_types.h>
#include <runtime/fusion_executor_cache.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

namespace fuser {

using ::testing::HasSubstr;

class IndexOpTest : public FuserIrTest {};
class IndexOpGpuTest : public FuserTest {};

namespace {

// The layouts a 2-D input is tested in.
std::vector<at::Tensor> layoutsOf(int64_t rows, int64_t cols) {
  return {
      at::randn({rows, cols}), at::randn({cols, rows}).t(),
      at::randn({rows, 2 * cols}).slice(1, 0, 2 * cols, 2)};
}

// A fusion of x (any strides) and an index tensor of `index_rank` with
// `make` building the output; evaluated through ATen.
at::Tensor evaluate(
    const at::Tensor& x, const at::Tensor& index, int64_t index_rank,
    const std::function<TensorView*(TensorView*, TensorView*)>& make,
    std::unique_ptr<Fusion>* keep = nullptr) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeSymbolicTensor(2);
  TensorView* idx = makeSymbolicTensor(index_rank, DataType::Int);
  fusion->addInput(in);
  fusion->addInput(idx);
  fusion->addOutput(make(in, idx));
  at::Tensor out = evaluateFusionWithATen(fusion.get(), {x, index})[0];
  if (keep != nullptr) {
    *keep = std::move(fusion);
  }
  return out;
}

} // namespace

TEST_F(IndexOpTest, AtenEvaluationEqualsTorchsForEveryLayout) {
  for (const at::Tensor& x : layoutsOf(6, 9)) {
    // index_select, with repeats and an empty index.
    const at::Tensor rows = at::tensor({4, 0, 4, 5}, at::kLong);
    EXPECT_TRUE(at::equal(
        evaluate(
            x, rows, 1,
            [](TensorView* in, TensorView* i) {
              return indexSelect(in, 0, i);
            }),
        at::index_select(x, 0, rows)));
    const at::Tensor none = at::empty({0}, at::kLong);
    EXPECT_EQ(
        evaluate(
            x, none, 1,
            [](TensorView* in, TensorView* i) {
              return indexSelect(in, -1, i);
            })
            .sizes(),
        (std::vector<int64_t>{6, 0}));
    // gather along columns with an index narrower than the input.
    const at::Tensor cols = at::randint(0, 9, {6, 4}, at::kLong);
    EXPECT_TRUE(at::equal(
        evaluate(
            x, cols, 2,
            [](TensorView* in, TensorView* i) { return gather(in, 1, i); }),
        at::gather(x, 1, cols)));
    // scatter with duplicate indices: as torch's on the same device.
    const at::Tensor dup = at::zeros({2, 9}, at::kLong);
    const at::Tensor src = at::randn({2, 9});
    auto fusion = std::make_unique<Fusion>();
    {
      FusionGuard fg(fusion.get());
      TensorView* in = makeSymbolicTensor(2);
      TensorView* idx = makeSymbolicTensor(2, DataType::Int);
      TensorView* s = makeSymbolicTensor(2);
      fusion->addInput(in);
      fusion->addInput(idx);
      fusion->addInput(s);
      fusion->addOutput(scatter(in, 0, idx, s));
    }
    EXPECT_TRUE(at::equal(
        evaluateFusionWithATen(fusion.get(), {x, dup, src})[0],
        x.scatter(0, dup, src)));
  }
  // select, negative index from the end.
  const at::Tensor x = at::randn({5, 7});
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* in = makeSymbolicTensor(2);
  Val* i = IrBuilder::create<Val>(DataType::Int);
  fusion.addInput(in);
  fusion.addInput(i);
  fusion.addOutput(select(in, 1, i));
  EXPECT_TRUE(at::equal(
      evaluateFusionWithATen(&fusion, {x, int64_t{-2}})[0], x.select(1, -2)));
}

// A 0-dim index (Thunder's take samples have them) picks one entry and
// keeps the axis with size 1, as torch.index_select does.
TEST_F(IndexOpTest, ZeroDimIndexKeepsTheAxisWithSizeOne) {
  for (int64_t dim : {0, 2}) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigTensor(3);
    TensorView* index = makeContigTensor(0, DataType::Int);
    fusion->addInput(x);
    fusion->addInput(index);
    fusion->addOutput(indexSelect(x, dim, index));
    const at::Tensor tx = at::randn({4, 2, 3});
    const at::Tensor ti = at::scalar_tensor(1, at::kLong);
    const at::Tensor out = evaluateFusionWithATen(fusion.get(), {tx, ti})[0];
    EXPECT_TRUE(at::equal(out, at::index_select(tx, dim, ti))) << dim;
  }
}

TEST_F(IndexOpTest, OutOfRangeIndicesAreUserErrors) {
  const at::Tensor x = at::randn({4, 3});
  std::unique_ptr<Fusion> fusion;
  auto make = [](TensorView* in, TensorView* i) {
    return indexSelect(in, 0, i);
  };
  EXPECT_THAT(
      [&] {
        evaluate(x, at::tensor({1, 4}, at::kLong), 1, make);
      },
      ::testing::ThrowsMessage<std::exception>(HasSubstr(
          "index_select: the index holds 4, out of range for axis 0 of size "
          "4 (indices must lie in [0, 4)).")));
  EXPECT_THAT(
      [&] { evaluate(x, at::tensor({-1}, at::kLong), 1, make); },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("the index holds -1, out of range")));
  // The same fusion runs with valid indices afterwards.
  evaluate(x, at::tensor({3}, at::kLong), 1, make, &fusion);
  EXPECT_TRUE(at::equal(
      evaluateFusionWithATen(
          fusion.get(), {x, at::tensor({2, 1}, at::kLong)})[0],
      at::index_select(x, 0, at::tensor({2, 1}, at::kLong))));

  Fusion selecting;
  FusionGuard fg(&selecting);
  TensorView* in = makeSymbolicTensor(2);
  Val* i = IrBuilder::create<Val>(DataType::Int);
  selecting.addInput(in);
  selecting.addInput(i);
  selecting.addOutput(select(in, 0, i));
  EXPECT_THAT(
      [&] {
        evaluateFusionWithATen(&selecting, {x, int64_t{-5}});
      },
      ::testing::ThrowsMessage<std::exception>(HasSubstr(
          "select: index -5 is out of range for axis 0 of size 4 (expected "
          "-4 <= index < 4).")));
}

TEST_F(IndexOpTest, BadOperandsAreUserErrors) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* float_index = makeContigTensor(1);
  TensorView* index2d = makeContigTensor(2, DataType::Int);
  fusion.addInput(x);
  EXPECT_THAT(
      [&] { indexSelect(x, 0, float_index); },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("is a float tensor; indices are integers.")));
  EXPECT_THAT(
      [&] { indexSelect(x, 0, index2d); },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("index_select: the index must have rank 1")));
  EXPECT_THAT(
      [&] { gather(x, 2, index2d); },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr(": dim 2 is out of range for a tensor of rank 2")));
  EXPECT_THAT(
      [&] { scatter(x, 0, index2d, index2d); },
      ::testing::ThrowsMessage<std::exception>(HasSubstr(
          "scatter: the source must have the tensor's rank and type")));
}

// The ID graph joins only the axes an op does not index through: an
// index_select's selected axis has the index's extent, not the input's.
TEST_F(IndexOpTest, OnlyAxesNotIndexedThroughAreMapped) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(3);
  TensorView* rows = makeContigTensor(1, DataType::Int);
  TensorView* where = makeContigTensor(3, DataType::Int);
  fusion.addInput(x);
  fusion.addInput(rows);
  fusion.addInput(where);
  TensorView* picked = indexSelect(x, 1, rows);
  TensorView* gathered = gather(x, 2, where);
  TensorView* one = select(x, 0, IrBuilder::create<Val>(int64_t{1}));
  fusion.addOutput(picked);
  fusion.addOutput(gathered);
  fusion.addOutput(one);
  auto mapped = [](TensorView* producer, TensorView* consumer) {
    return PairwiseLogicalDomainMap(producer, consumer)
        .mapProducerToConsumer()
        .size();
  };
  EXPECT_EQ(mapped(x, picked), 2u);
  EXPECT_EQ(mapped(rows, picked), 1u);
  EXPECT_EQ(
      PairwiseLogicalDomainMap(rows, picked)
          .mapProducerToConsumer()
          .at(rows->axis(0)),
      picked->axis(1));
  EXPECT_EQ(mapped(x, gathered), 0u);
  EXPECT_EQ(mapped(where, gathered), 3u);
  EXPECT_EQ(mapped(x, one), 2u);
  EXPECT_EQ(
      PairwiseLogicalDomainMap(x, one).mapProducerToConsumer().at(x->axis(2)),
      one->axis(1));
}

TEST_F(IndexOpGpuTest, IndexingInsideAFusionEqualsTorchs) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeSymbolicTensor(2);
  TensorView* rows = makeContigTensor(1, DataType::Int);
  TensorView* cols = makeContigTensor(2, DataType::Int);
  fusion->addInput(x);
  fusion->addInput(rows);
  fusion->addInput(cols);
  TensorView* y = mul(x, IrBuilder::create<Val>(2.0));
  fusion->addOutput(add(indexSelect(y, 0, rows), IrBuilder::create<Val>(1.0)));
  fusion->addOutput(gather(y, 1, cols));
  fusion->addOutput(select(y, 1, IrBuilder::create<Val>(int64_t{-1})));
  FusionExecutorCache fec(std::move(fusion));
  const at::Tensor in = at::randn({200, 300}, at::kCUDA).t();
  // (ATen's C++ randint makes floats unless told otherwise.)
  const auto indices = at::TensorOptions().dtype(at::kLong).device(at::kCUDA);
  const at::Tensor r = at::randint(0, 300, {50}, indices);
  const at::Tensor c = at::randint(0, 200, {300, 7}, indices);
  std::vector<at::Tensor> out = fec.runFusionWithInputs({in, r, c});
  EXPECT_TRUE(at::equal(out[0], at::index_select(in * 2, 0, r) + 1));
  EXPECT_TRUE(at::equal(out[1], at::gather(in * 2, 1, c)));
  EXPECT_TRUE(at::equal(out[2], (in * 2).select(1, -1)));
  // Out of range on the device: a user error, and the cache (and the CUDA
  // context) stay usable.
  EXPECT_THAT(
      [&] {
        fec.runFusionWithInputs({in, r + 300, c});
      },
      ::testing::ThrowsMessage<std::exception>(
          HasSubstr("index_select: the index holds")));
  out = fec.runFusionWithInputs({in, r, c});
  EXPECT_TRUE(at::equal(out[1], at::gather(in * 2, 1, c)));
}

} // namespace fuser
