// Register tensors read across threads are refused at lowering
// (device_lower/analysis/thread_mapping.h). The matmul bias bug had this
// shape: a bias [N] cached in registers on 4 threads of its own while its
// consumer ran on 128 (doc/matmul.md §2).
#include <codegen/codegen.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <tests/cpp/utils.h>
#include <transform/inlining.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fuser {

class ThreadMappingTest : public FuserIrTest {};

namespace {

// bias [N] -> register cache -> broadcast [1, N] -> + x [M, N], the
// output on 128 threads; the cache is put on `cache_threads` threads of
// its own (outside its inline position) when that is not 0.
std::string lowerBiasAdd(int64_t cache_threads) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* bias = makeContigConcreteTensor({256});
  TensorView* x = makeContigConcreteTensor({64, 256});
  fusion.addInput(bias);
  fusion.addInput(x);
  TensorView* cache = set(bias);
  TensorView* out = add(broadcast(cache, {true, false}), x);
  fusion.addOutput(out);
  for (TensorView* tv : fusion.allTvs()) {
    if (tv->isFusionInput() || tv == cache) {
      continue;
    }
    tv->merge(0);
    tv->split(0, 128);
    tv->axis(0)->parallelize(ParallelType::BIDx);
    tv->axis(1)->parallelize(ParallelType::TIDx);
  }
  if (cache_threads > 0) {
    cache->split(0, cache_threads);
    cache->axis(1)->parallelize(ParallelType::TIDx);
  }
  inlineMost(&fusion);
  return generateCudaKernel(&fusion);
}

} // namespace

TEST_F(ThreadMappingTest, RegistersReadByOtherThreadsAreRefused) {
  EXPECT_THAT(
      [&]() { lowerBiasAdd(4); },
      ::testing::ThrowsMessage<UserError>(::testing::HasSubstr(
          "a thread would read registers that another thread computed")));
  EXPECT_THAT(
      [&]() { lowerBiasAdd(4); },
      ::testing::ThrowsMessage<UserError>(
          ::testing::HasSubstr("is computed on threadIdx.x over iTIDx15{4}")));
}

TEST_F(ThreadMappingTest, InlinedRegisterCachesAreFine) {
  // Inlined into its consumer: each thread computes what it reads.
  EXPECT_NO_THROW(lowerBiasAdd(0));
}

} // namespace fuser
