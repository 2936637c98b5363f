// cacheAfter, cacheBefore, cacheFork and scheduler_utils::cacheInputs with
// and without replay_allocation (doc/design.md §4).
#include <codegen/codegen.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/nvrtc_compile.h>
#include <scheduler/utils.h>
#include <tests/cpp/utils.h>
#include <transform/inlining.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fuser {

using ::testing::HasSubstr;

class CachingTest : public FuserIrTest {};

namespace {

// NHWC: logical [N, C, H, W], allocation [N, H, W, C].
void setNhwc(TensorView* tv) {
  const auto& l = tv->getLogicalDomain();
  tv->setAllocationDomain({l[0], l[2], l[3], l[1]}, true);
}

std::vector<IterDomain*> nhwcOrder(TensorView* tv) {
  const auto& l = tv->getLogicalDomain();
  return {l[0], l[2], l[3], l[1]};
}

// Split + permute: logical [M, N], allocation [N, M/4, 4].
void setSplitPermute(TensorView* tv) {
  const auto& l = tv->getLogicalDomain();
  auto [outer, inner] =
      IterDomain::split(l[0], IrBuilder::create<Val>(4, DataType::Index), true);
  tv->setAllocationDomain({l[1], outer, inner}, {false, true, true});
}

void expectSplitPermuteOf(TensorView* tv) {
  const auto& l = tv->getLogicalDomain();
  const auto& alloc = tv->getAllocationDomain();
  ASSERT_EQ(alloc.size(), 3u);
  EXPECT_EQ(alloc[0], l[1]);
  auto* split = alloc[1]->definition();
  ASSERT_NE(split, nullptr);
  ASSERT_TRUE(split->isA<Split>());
  EXPECT_EQ(split->as<Split>()->in(), l[0]);
  EXPECT_EQ(split->as<Split>()->factor()->value(), 4);
  EXPECT_EQ(split->as<Split>()->inner(), alloc[2]);
  EXPECT_EQ(tv->getContiguity(), (Contiguity{false, true, true}));
  EXPECT_EQ(tv->getLoopDomain(), l);
}

struct TwoOpFusion {
  std::unique_ptr<Fusion> fusion = std::make_unique<Fusion>();
  TensorView* in = nullptr;
  TensorView* out = nullptr;
  explicit TwoOpFusion(int64_t rank) {
    FusionGuard fg(fusion.get());
    in = makeContigTensor(rank);
    out = relu(in);
    fusion->addInput(in);
    fusion->addOutput(out);
  }
};

} // namespace

TEST_F(CachingTest, CacheAfterSeedWithAndWithoutKnob) {
  for (bool knob : {false, true}) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* in = makeContigConcreteTensor({6});
    TensorView* out = set(in);
    fusion->addInput(in);
    fusion->addOutput(out);
    auto [outer, inner] = IterDomain::split(
        in->axis(0), IrBuilder::create<Val>(2, DataType::Index), true);
    in->setAllocationDomain({outer, inner}, true);

    TensorView* cache =
        in->cacheAfter(LoadStoreOpType::Set, CacheOp::Unspecified, knob);
    // The input keeps what the user gave it.
    EXPECT_EQ(
        in->getAllocationDomain(), (std::vector<IterDomain*>{outer, inner}));
    EXPECT_EQ(in->nDims(), 1);
    // The cache reads the input and feeds the output.
    ASSERT_TRUE(cache->definition()->isA<LoadStoreOp>());
    EXPECT_EQ(cache->definition()->input(0), in);
    EXPECT_EQ(out->definition()->input(0), cache);
    EXPECT_EQ(cache->nDims(), 1);
    if (!knob) {
      EXPECT_FALSE(cache->hasAllocation());
      continue;
    }
    const auto& alloc = cache->getAllocationDomain();
    ASSERT_EQ(alloc.size(), 2u);
    auto* split = alloc[0]->definition()->as<Split>();
    EXPECT_EQ(split->in(), cache->getLogicalDomain()[0]);
    EXPECT_EQ(split->factor()->value(), 2);
    EXPECT_EQ(cache->getContiguity(), (Contiguity{true, true}));
  }
}

TEST_F(CachingTest, ShardedInputKeepsDIDxThroughCacheAfter) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2); // [M, N]
  TensorView* out = add(in, in);
  fusion->addInput(in);
  fusion->addOutput(out);
  // allocation [DIDx{2}, M/2, N]: an outer split, DIDx only in allocation.
  const auto& l = in->getLogicalDomain();
  auto [did, local] = IterDomain::split(
      l[0], IrBuilder::create<Val>(2, DataType::Index), /*inner_split=*/false);
  did->parallelize(ParallelType::DIDx);
  in->setAllocationDomain({did, local, l[1]}, true);
  EXPECT_EQ(in->getLoopDomain(), l); // loop untouched

  TensorView* cache =
      in->cacheAfter(LoadStoreOpType::Set, CacheOp::Unspecified, true);
  const auto& alloc = cache->getAllocationDomain();
  ASSERT_EQ(alloc.size(), 3u);
  EXPECT_EQ(alloc[0]->getParallelType(), ParallelType::DIDx);
  EXPECT_EQ(alloc[1]->getParallelType(), ParallelType::Serial);
  auto* split = alloc[0]->definition()->as<Split>();
  EXPECT_FALSE(split->innerSplit());
  EXPECT_EQ(split->factor()->value(), 2);
  EXPECT_EQ(split->in(), cache->getLogicalDomain()[0]);
  EXPECT_EQ(alloc[2], cache->getLogicalDomain()[1]);
  EXPECT_EQ(cache->getLoopDomain(), cache->getLogicalDomain());

  // Without the knob nothing is carried.
  TensorView* plain = in->cacheAfter();
  EXPECT_FALSE(plain->hasAllocation());
  for (IterDomain* id : plain->getLoopDomain()) {
    EXPECT_EQ(id->getParallelType(), ParallelType::Serial);
  }
}

TEST_F(CachingTest, NhwcCacheAfter) {
  for (bool knob : {false, true}) {
    TwoOpFusion f(4);
    FusionGuard fg(f.fusion.get());
    setNhwc(f.in);
    TensorView* cache =
        f.in->cacheAfter(LoadStoreOpType::Set, CacheOp::Unspecified, knob);
    EXPECT_EQ(f.in->getAllocationDomain(), nhwcOrder(f.in));
    if (knob) {
      EXPECT_EQ(cache->getAllocationDomain(), nhwcOrder(cache));
      EXPECT_EQ(cache->getContiguity(), (Contiguity{true, true, true, true}));
    } else {
      EXPECT_FALSE(cache->hasAllocation());
    }
    EXPECT_EQ(cache->getLoopDomain(), cache->getLogicalDomain());
  }
}

TEST_F(CachingTest, NhwcCacheBeforeKeepsOutputLayout) {
  for (bool knob : {false, true}) {
    TwoOpFusion f(4);
    FusionGuard fg(f.fusion.get());
    setNhwc(f.out);
    TensorView* cache = f.out->cacheBefore(LoadStoreOpType::Set, knob);
    // The output keeps its layout either way and now copies the cache.
    EXPECT_TRUE(f.fusion->isOutput(f.out));
    EXPECT_EQ(f.out->getAllocationDomain(), nhwcOrder(f.out));
    ASSERT_TRUE(f.out->definition()->isA<LoadStoreOp>());
    EXPECT_EQ(f.out->definition()->input(0), cache);
    ASSERT_TRUE(cache->definition()->isA<UnaryOp>());
    EXPECT_EQ(cache->definition()->input(0), f.in);
    if (knob) {
      EXPECT_EQ(cache->getAllocationDomain(), nhwcOrder(cache));
    } else {
      EXPECT_FALSE(cache->hasAllocation());
    }
  }
}

TEST_F(CachingTest, NhwcCacheFork) {
  for (bool knob : {false, true}) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* in = makeContigTensor(4);
    TensorView* mid = relu(in);
    TensorView* out2 = neg(mid);
    fusion->addInput(in);
    fusion->addOutput(mid);
    fusion->addOutput(out2);
    setNhwc(mid);
    TensorView* forked = mid->cacheFork(knob);
    // The fork is the output now, with the user's layout.
    EXPECT_TRUE(fusion->isOutput(forked));
    EXPECT_FALSE(fusion->isOutput(mid));
    EXPECT_EQ(forked->definition()->input(0), mid);
    EXPECT_EQ(forked->getAllocationDomain(), nhwcOrder(forked));
    EXPECT_EQ(forked->getMemoryType(), MemoryType::Global);
    EXPECT_EQ(mid->getMemoryType(), MemoryType::Local);
    // The intermediate keeps the layout only with the knob.
    if (knob) {
      EXPECT_EQ(mid->getAllocationDomain(), nhwcOrder(mid));
    } else {
      EXPECT_FALSE(mid->hasAllocation());
    }
    EXPECT_EQ(out2->definition()->input(0), mid);
  }
}

TEST_F(CachingTest, SplitPermuteThroughAllCaches) {
  for (bool knob : {false, true}) {
    {
      TwoOpFusion f(2);
      FusionGuard fg(f.fusion.get());
      setSplitPermute(f.in);
      TensorView* cache =
          f.in->cacheAfter(LoadStoreOpType::Set, CacheOp::Unspecified, knob);
      expectSplitPermuteOf(f.in);
      if (knob) {
        expectSplitPermuteOf(cache);
      } else {
        EXPECT_FALSE(cache->hasAllocation());
      }
    }
    {
      TwoOpFusion f(2);
      FusionGuard fg(f.fusion.get());
      setSplitPermute(f.out);
      TensorView* cache = f.out->cacheBefore(LoadStoreOpType::Set, knob);
      expectSplitPermuteOf(f.out);
      if (knob) {
        expectSplitPermuteOf(cache);
      } else {
        EXPECT_FALSE(cache->hasAllocation());
      }
    }
    {
      auto fusion = std::make_unique<Fusion>();
      FusionGuard fg(fusion.get());
      TensorView* in = makeContigTensor(2);
      TensorView* mid = relu(in);
      fusion->addInput(in);
      fusion->addOutput(mid);
      fusion->addOutput(neg(mid));
      setSplitPermute(mid);
      TensorView* forked = mid->cacheFork(knob);
      expectSplitPermuteOf(forked);
      if (knob) {
        expectSplitPermuteOf(mid);
      } else {
        EXPECT_FALSE(mid->hasAllocation());
      }
    }
  }
}

TEST_F(CachingTest, CacheInputsWithAndWithoutKnob) {
  for (bool knob : {false, true}) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard fg(fusion.get());
    TensorView* a = makeContigTensor(4);
    TensorView* b = makeContigTensor(4);
    TensorView* unused = makeContigTensor(1);
    fusion->addInput(a);
    fusion->addInput(b);
    fusion->addInput(unused);
    fusion->addOutput(add(a, b));
    setNhwc(a);
    auto caches = scheduler_utils::cacheInputs(fusion.get(), true, knob);
    ASSERT_EQ(caches.size(), 2u); // the unused input is skipped
    EXPECT_EQ(caches[0]->definition()->input(0), a);
    EXPECT_EQ(caches[1]->definition()->input(0), b);
    EXPECT_EQ(
        caches[0]->definition()->as<LoadStoreOp>()->cacheOp(),
        CacheOp::AllLevels);
    if (knob) {
      EXPECT_EQ(caches[0]->getAllocationDomain(), nhwcOrder(caches[0]));
    } else {
      EXPECT_FALSE(caches[0]->hasAllocation());
    }
    EXPECT_FALSE(caches[1]->hasAllocation());
    EXPECT_EQ(a->getAllocationDomain(), nhwcOrder(a));
  }
}

TEST_F(CachingTest, CacheAndForkOutputs) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  TensorView* mid = relu(in);
  TensorView* out = neg(mid);
  fusion->addInput(in);
  fusion->addOutput(mid);
  fusion->addOutput(out);
  auto cached = scheduler_utils::cacheAndForkOutputs(fusion.get(), false);
  ASSERT_EQ(cached.size(), 2u);
  // mid was also used: forked, the fork is the output.
  EXPECT_EQ(cached[0].first, mid);
  EXPECT_TRUE(fusion->isOutput(cached[0].second));
  EXPECT_EQ(cached[0].second->definition()->input(0), mid);
  // out: a cache computes it, out copies.
  EXPECT_EQ(cached[1].second, out);
  EXPECT_EQ(out->definition()->input(0), cached[1].first);
  EXPECT_TRUE(cached[1].first->definition()->isA<UnaryOp>());
}

TEST_F(CachingTest, CacheErrorsNameTheTensor) {
  TwoOpFusion f(2);
  FusionGuard fg(f.fusion.get());
  try {
    f.in->cacheBefore();
    FAIL() << "cacheBefore of an input must be rejected";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cacheBefore of " + f.in->toString()));
  }
  try {
    f.out->cacheAfter();
    FAIL() << "cacheAfter of an unused tensor must be rejected";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("has no uses"));
  }
  try {
    f.out->cacheFork();
    FAIL() << "cacheFork of an output without uses must be rejected";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cacheFork of " + f.out->toString()));
  }
  // The fusion is still usable.
  EXPECT_NO_THROW(f.in->cacheAfter());
}

TEST_F(CachingTest, CacheBeforeReductionWithKnobIsRejected) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  TensorView* out = sum(in, {1});
  fusion->addInput(in);
  fusion->addOutput(out);
  try {
    out->cacheBefore(LoadStoreOpType::Set, true);
    FAIL() << "replay_allocation through a reduction must be rejected";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Cannot replay the allocation domain"));
    EXPECT_THAT(e.what(), HasSubstr("reduction"));
  }
}

TEST_F(CachingTest, CacheBeforeReductionWithoutKnob) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(2);
  TensorView* out = sum(in, {1});
  fusion->addInput(in);
  fusion->addOutput(out);
  TensorView* cache = out->cacheBefore();
  EXPECT_TRUE(cache->definition()->isA<ReductionOp>());
  EXPECT_TRUE(cache->hasReduction());
  EXPECT_FALSE(out->hasReduction());
  EXPECT_EQ(out->getLogicalDomain().size(), 1u);
  EXPECT_TRUE(out->definition()->isA<LoadStoreOp>());
}

// The cache op of a load from global memory selects its PTX cache policy
// (codegen/memory.cpp, runtime/helpers.h); the default is a plain copy.
TEST_F(CachingTest, CacheOpSelectsTheGlobalLoadPolicy) {
  const std::vector<std::pair<CacheOp, std::string>> policies = {
      {CacheOp::Unspecified, "= T0[("},
      {CacheOp::AllLevels, "= T0[("},
      {CacheOp::Streaming, "streamingLoad<float, 1>(&T2[0], &T0["},
      {CacheOp::Global, "l2OnlyLoad<float, 1>(&T2[0], &T0["}};
  for (const auto& [cache_op, expected] : policies) {
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* in = makeContigTensor(1);
    fusion.addInput(in);
    TensorView* out = neg(in);
    fusion.addOutput(out);
    TensorView* cache = in->cacheAfter(LoadStoreOpType::Set, cache_op);
    for (TensorView* tv : {cache, out}) {
      tv->split(0, 128);
      tv->axis(1)->parallelize(ParallelType::TIDx);
    }
    inlineMost(fusion.allTvs());
    const std::string code = generateCudaKernel(&fusion, DataType::Int32);
    EXPECT_THAT(code, HasSubstr(expected)) << toString(cache_op) << code;
    EXPECT_NO_THROW(compileToCubin(code, "fuser_kernel", 90, true));
  }
}

} // namespace fuser
