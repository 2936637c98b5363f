// TransformReplay: loop replay and the replay_allocation knob (doc/design.md
// §4).
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <tests/cpp/utils.h>
#include <transform_replay.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fuser {

using ::testing::HasSubstr;

class ReplayTest : public FuserIrTest {};

namespace {

// The seed: in = [i6], allocation [i6/2, 2] (a split off the loop path).
struct SeedFusion {
  std::unique_ptr<Fusion> fusion = std::make_unique<Fusion>();
  TensorView* in = nullptr;
  TensorView* out = nullptr;

  SeedFusion() {
    FusionGuard fg(fusion.get());
    in = makeContigConcreteTensor({6});
    out = set(in);
    fusion->addInput(in);
    fusion->addOutput(out);
    auto [outer, inner] = IterDomain::split(
        in->axis(0), IrBuilder::create<Val>(2, DataType::Index), true);
    in->setAllocationDomain({outer, inner}, true);
  }
};

// Checks that `id` is made by a Split of `in` by `factor`.
void expectSplitOf(IterDomain* id, IterDomain* in, int64_t factor, bool outer) {
  ASSERT_NE(id->definition(), nullptr) << id->toString();
  ASSERT_TRUE(id->definition()->isA<Split>()) << id->definition()->toString();
  auto* split = id->definition()->as<Split>();
  EXPECT_EQ(split->in(), in);
  EXPECT_EQ(split->factor()->value(), factor);
  EXPECT_TRUE(split->innerSplit());
  EXPECT_EQ(outer ? split->outer() : split->inner(), id);
}

template <typename F>
std::string userErrorOf(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no user error>";
}

} // namespace

TEST_F(ReplayTest, ReplayCasPWithAllocationOnSeed) {
  SeedFusion seed;
  FusionGuard fg(seed.fusion.get());
  auto [domain, pos] = TransformReplay::replayCasP(
      seed.out, seed.in, -1, TransformReplayOptions().replayAllocation());
  EXPECT_EQ(seed.out->domain(), domain);
  EXPECT_EQ(pos, 1);
  IterDomain* logical = seed.out->getLogicalDomain().at(0);
  const auto& alloc = seed.out->getAllocationDomain();
  ASSERT_EQ(alloc.size(), 2u);
  expectSplitOf(alloc[0], logical, 2, /*outer=*/true);
  expectSplitOf(alloc[1], logical, 2, /*outer=*/false);
  EXPECT_EQ(alloc[0]->extent()->value(), 3);
  EXPECT_EQ(alloc[1]->extent()->value(), 2);
  // The allocation split is the consumer's own, not the producer's.
  EXPECT_NE(alloc[0], seed.in->getAllocationDomain()[0]);
  EXPECT_EQ(seed.out->getContiguity(), (Contiguity{true, true}));
  // Loop untouched: still the one logical axis.
  ASSERT_EQ(seed.out->getLoopDomain().size(), 1u);
  EXPECT_EQ(seed.out->axis(0), logical);
}

TEST_F(ReplayTest, ReplayCasPWithoutAllocationOnSeed) {
  SeedFusion seed;
  FusionGuard fg(seed.fusion.get());
  TransformReplay::replayCasP(seed.out, seed.in, -1);
  EXPECT_FALSE(seed.out->hasAllocation());
  EXPECT_EQ(seed.out->getMaybeAllocationDomain(), seed.out->getLogicalDomain());
  ASSERT_EQ(seed.out->nDims(), 1);
  EXPECT_EQ(seed.out->axis(0), seed.out->getLogicalDomain()[0]);
  // The producer's own allocation is unchanged.
  EXPECT_EQ(seed.in->getAllocationDomain().size(), 2u);
}

TEST_F(ReplayTest, ReplayPasCWithAndWithoutAllocationOnSeed) {
  // The split allocation on the consumer, replayed back to the producer.
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({6});
  TensorView* mid = set(in);
  TensorView* out = set(mid);
  fusion->addInput(in);
  fusion->addOutput(out);
  auto [outer, inner] = IterDomain::split(
      out->axis(0), IrBuilder::create<Val>(2, DataType::Index), true);
  out->setAllocationDomain({outer, inner}, true);

  TransformReplay::replayPasC(mid, out, -1);
  EXPECT_FALSE(mid->hasAllocation());
  EXPECT_EQ(mid->nDims(), 1);

  TransformReplay::replayPasC(
      mid, out, -1, TransformReplayOptions().replayAllocation());
  const auto& alloc = mid->getAllocationDomain();
  ASSERT_EQ(alloc.size(), 2u);
  expectSplitOf(alloc[0], mid->getLogicalDomain()[0], 2, true);
  expectSplitOf(alloc[1], mid->getLogicalDomain()[0], 2, false);
  EXPECT_EQ(mid->nDims(), 1);
  EXPECT_EQ(mid->axis(0), mid->getLogicalDomain()[0]);
}

TEST_F(ReplayTest, LoopReplayMirrorsProducerUpToPosition) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  TensorView* out = relu(in);
  fusion->addInput(in);
  fusion->addOutput(out);
  TensorView* tv = in->cacheAfter();
  tv->merge(0)->split(0, 128);
  auto [domain, pos] = TransformReplay::replayCasP(out, tv, 1);
  EXPECT_EQ(pos, 1);
  // Axis 0 mirrors the producer's outer split; the rest follows.
  ASSERT_EQ(out->nDims(), 2);
  auto* split = out->axis(0)->definition();
  ASSERT_NE(split, nullptr);
  ASSERT_TRUE(split->isA<Split>());
  EXPECT_EQ(split->as<Split>()->factor()->value(), 128);
  EXPECT_TRUE(split->as<Split>()->in()->definition()->isA<Merge>());
  EXPECT_EQ(out->axis(1), split->as<Split>()->inner());
}

TEST_F(ReplayTest, SymbolicFactorAndMergeInAllocation) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  TensorView* out = set(in);
  fusion->addInput(in);
  fusion->addOutput(out);
  Val* factor = IrBuilder::create<Val>(DataType::Index);
  IterDomain* merged = IterDomain::merge(in->axis(0), in->axis(1));
  auto [outer, inner] = IterDomain::split(merged, factor, true);
  in->setAllocationDomain({outer, inner}, {true, false});

  TransformReplay::replayCasP(
      out, in, -1, TransformReplayOptions().replayAllocation());
  const auto& alloc = out->getAllocationDomain();
  ASSERT_EQ(alloc.size(), 2u);
  auto* split = alloc[0]->definition()->as<Split>();
  EXPECT_EQ(split->factor(), factor);
  auto* merge = split->in()->definition()->as<Merge>();
  EXPECT_EQ(merge->outer(), out->getLogicalDomain()[0]);
  EXPECT_EQ(merge->inner(), out->getLogicalDomain()[1]);
  EXPECT_EQ(out->getContiguity(), (Contiguity{true, false}));
  EXPECT_EQ(out->getLoopDomain(), out->getLogicalDomain());
}

TEST_F(ReplayTest, PermutationCarriedAsAllocationOrder) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(4); // NCHW logical
  TensorView* out = set(in);
  fusion->addInput(in);
  fusion->addOutput(out);
  const auto& l = in->getLogicalDomain();
  in->setAllocationDomain({l[0], l[2], l[3], l[1]}, {true, false, true, true});
  TransformReplay::replayCasP(
      out, in, -1, TransformReplayOptions().replayAllocation());
  const auto& ol = out->getLogicalDomain();
  EXPECT_EQ(
      out->getAllocationDomain(),
      (std::vector<IterDomain*>{ol[0], ol[2], ol[3], ol[1]}));
  EXPECT_EQ(out->getContiguity(), (Contiguity{true, false, true, true}));
  EXPECT_EQ(out->getLoopDomain(), ol);
}

TEST_F(ReplayTest, AllocationThroughReductionIsRejected) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({4, 6});
  TensorView* out = sum(in, {1});
  fusion->addInput(in);
  fusion->addOutput(out);
  const auto& l = in->getLogicalDomain();
  in->setAllocationDomain({l[1], l[0]}, true);
  std::string message = userErrorOf([&] {
    TransformReplay::replayCasP(
        out, in, -1, TransformReplayOptions().replayAllocation());
  });
  EXPECT_THAT(message, HasSubstr("Cannot replay the allocation domain"));
  EXPECT_THAT(message, HasSubstr(in->toString()));
  EXPECT_THAT(message, HasSubstr("reduction"));
  // Without the knob the loop replay goes through.
  EXPECT_NO_THROW(TransformReplay::replayCasP(out, in, -1));
}

TEST_F(ReplayTest, AllocationThroughReshapeIsRejected) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigConcreteTensor({4, 6});
  TensorView* out = reshape(in, {24});
  fusion->addInput(in);
  fusion->addOutput(out);
  const auto& l = in->getLogicalDomain();
  in->setAllocationDomain({l[1], l[0]}, true);
  std::string message = userErrorOf([&] {
    TransformReplay::replayCasP(
        out, in, -1, TransformReplayOptions().replayAllocation());
  });
  EXPECT_THAT(message, HasSubstr("Cannot replay the allocation domain"));
  EXPECT_THAT(message, HasSubstr(out->toString()));
  EXPECT_THAT(message, HasSubstr("reshape"));
}

TEST_F(ReplayTest, ReplayBetweenUnrelatedTensorsIsRejected) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(1);
  TensorView* b = makeContigTensor(1);
  fusion->addInput(a);
  fusion->addInput(b);
  TensorView* c = set(a);
  fusion->addOutput(c);
  std::string message =
      userErrorOf([&] { TransformReplay::replayCasP(c, b, -1); });
  EXPECT_THAT(message, HasSubstr("is not computed from"));
  EXPECT_THAT(message, HasSubstr(b->toString()));
}

TEST_F(ReplayTest, BroadcastMergeIsForwardedToProducer) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(1);
  TensorView* b = broadcast(in, {false, true});
  fusion->addInput(in);
  TensorView* out = set(b);
  fusion->addOutput(out);
  b->merge(0)->split(0, 4);
  // The producer of the broadcast has no second axis: the merge forwards.
  TensorView* cache = in->cacheAfter();
  TransformReplay::replayPasC(cache, b, -1);
  ASSERT_EQ(cache->nDims(), 2);
  auto* split = cache->axis(0)->definition()->as<Split>();
  EXPECT_EQ(split->in(), cache->getLogicalDomain()[0]);
  EXPECT_EQ(split->factor()->value(), 4);
}

} // namespace fuser
