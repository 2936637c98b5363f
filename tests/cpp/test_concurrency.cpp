// Several threads at once. On the CPU (and under ThreadSanitizer,
// tools/tsan_test.sh): the CPU half of a cache miss (scheduling, lowering,
// code generation and NVRTC), where every thread gets the kernel one thread
// alone gets and the kernel cache's counters add up, and one
// FusionExecutorCache's lookups and miss handling. On a GPU: one
// FusionExecutorCache run from 8 threads, each on its own stream, with
// hits and misses mixed, every result checked.
#include <codegen/codegen.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/fusion_executor_cache.h>
#include <runtime/input_binding.h>
#include <runtime/nvrtc_compile.h>
#include <scheduler/registry.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace fuser {

namespace {

struct Named {
  std::unique_ptr<Fusion> fusion;
  std::vector<c10::IValue> inputs;
};

// A pointwise, a reduction and a matmul fusion with CPU inputs.
std::vector<Named> fusions() {
  std::vector<Named> list;
  {
    Named n;
    n.fusion = std::make_unique<Fusion>();
    FusionGuard fg(n.fusion.get());
    TensorView* a = makeContigTensor(2);
    TensorView* b = makeContigTensor(2, DataType::Half);
    n.fusion->addInput(a);
    n.fusion->addInput(b);
    n.fusion->addOutput(relu(add(a, cast(b, DataType::Float))));
    n.inputs = {at::randn({256, 96}), at::randn({256, 96}).to(at::kHalf)};
    list.push_back(std::move(n));
  }
  {
    Named n;
    n.fusion = std::make_unique<Fusion>();
    FusionGuard fg(n.fusion.get());
    TensorView* a = makeContigTensor(2);
    n.fusion->addInput(a);
    n.fusion->addOutput(sum(a, {1}));
    n.inputs = {at::randn({64, 4096})};
    list.push_back(std::move(n));
  }
  {
    Named n;
    n.fusion = std::make_unique<Fusion>();
    FusionGuard fg(n.fusion.get());
    TensorView* a = makeContigTensor(2, DataType::BFloat16);
    TensorView* b = makeContigTensor(2, DataType::BFloat16);
    n.fusion->addInput(a);
    n.fusion->addInput(b);
    n.fusion->addOutput(matmul(a, b));
    n.inputs = {
        at::randn({512, 256}).to(at::kBFloat16),
        at::randn({256, 384}).to(at::kBFloat16)};
    list.push_back(std::move(n));
  }
  return list;
}

// The kernel a cache miss makes of `named` (scheduled on a copy).
std::string missKernel(const Named& named) {
  Fusion copy(*named.fusion);
  RuntimeInfo info =
      makeRuntimeInfo(&copy, named.inputs, /*require_cuda=*/false);
  SchedulerChoice choice = chooseScheduler(&copy, info);
  auto params = choice.scheduler->computeHeuristics(&copy, info);
  choice.scheduler->schedule(&copy, *params);
  const std::string source = generateCudaKernel(&copy, DataType::Int32);
  CompiledModule module = compileToCubin(source, "fuser_kernel", 90, true);
  return module.cubin.empty() ? std::string() : source;
}

} // namespace

class ConcurrencyTest : public FuserIrTest {};
class ConcurrencyGpuTest : public FuserTest {};

TEST_F(ConcurrencyTest, CacheMissesFromEightThreads) {
  const std::vector<Named> list = fusions();
  std::vector<std::string> serial;
  for (const Named& named : list) {
    serial.push_back(missKernel(named));
    ASSERT_FALSE(serial.back().empty());
  }
  clearKernelCache();
  constexpr int kThreads = 8;
  constexpr int kRounds = 3;
  std::vector<std::vector<std::string>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t]() {
      try {
        for (int round = 0; round < kRounds; ++round) {
          for (size_t f = 0; f < list.size(); ++f) {
            // Each thread starts at another fusion, so that misses of
            // different kernels overlap as well as of the same one.
            got[t].push_back(missKernel(list[(f + t) % list.size()]));
          }
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(errors[t].empty()) << "thread " << t << ": " << errors[t];
    ASSERT_EQ(got[t].size(), kRounds * list.size());
    for (size_t i = 0; i < got[t].size(); ++i) {
      EXPECT_EQ(got[t][i], serial[(i % list.size() + t) % list.size()])
          << "thread " << t << ", call " << i;
    }
  }
  const KernelCacheStats stats = kernelCacheStats();
  EXPECT_EQ(
      stats.memory_hits + stats.disk_hits + stats.misses,
      kThreads * kRounds * static_cast<int64_t>(list.size()));
  // Misses of one kernel can overlap (they compile outside the lock), but
  // never more than once per thread.
  EXPECT_GE(stats.misses, static_cast<int64_t>(list.size()));
  EXPECT_LE(stats.misses, kThreads * static_cast<int64_t>(list.size()));
}

// One cache from 8 threads with CPU tensors: every call computes its
// signature, looks it up, misses and is refused before anything is cached
// (the runtime copies the fusion and binds the inputs first). Under
// ThreadSanitizer this checks the cache's own locking and thread-local
// state; launches need a GPU (the test below).
TEST_F(ConcurrencyTest, CacheLookupsFromEightThreads) {
  std::vector<Named> list = fusions();
  FusionExecutorCache fec(std::move(list[0].fusion));
  const std::vector<c10::IValue> inputs = list[0].inputs;
  constexpr int kThreads = 8;
  std::atomic<int> refused{0};
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t]() {
      for (int round = 0; round < 20; ++round) {
        try {
          fec.runFusionWithInputs(inputs);
          errors[t] = "a CPU tensor was accepted";
        } catch (const UserError& e) {
          if (std::string(e.what()).find("CUDA") == std::string::npos) {
            errors[t] = e.what();
          }
          ++refused;
        }
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(errors[t].empty()) << "thread " << t << ": " << errors[t];
  }
  EXPECT_EQ(refused.load(), kThreads * 20);
  EXPECT_EQ(fec.numRuntimes(), 0u);
}

namespace {

// A grid reduction (few long rows: blocks combine partial sums through a
// work buffer and semaphores) feeding a segment that reduces the other way.
std::unique_ptr<Fusion> gridThenOtherAxisFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  TensorView* rows = sum(x, {1});
  fusion->addOutput(rows);
  fusion->addOutput(sum(mul(x, broadcast(rows, {false, true})), {0}));
  return fusion;
}

} // namespace

// One FusionExecutorCache from 8 threads, each on a stream of its own:
// signatures appear while others run (each thread walks the sizes from
// another start), every result matches ATen computed on the same stream,
// and the threads all finish (no deadlock).
TEST_F(ConcurrencyGpuTest, OneCacheFromEightThreadsOnTheirOwnStreams) {
  FusionExecutorCache fec(gridThenOtherAxisFusion());
  const std::vector<std::vector<int64_t>> shapes = {
      {4, 1 << 18}, {8, 100000}, {3, 70000}, {16, 1 << 16}};
  constexpr int kThreads = 8;
  constexpr int kRounds = 12;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t]() {
      try {
        c10::cuda::CUDAStreamGuard stream_guard(
            c10::cuda::getStreamFromPool(false, 0));
        const auto options = at::TensorOptions().device(at::kCUDA);
        for (int round = 0; round < kRounds; ++round) {
          const auto& shape = shapes[static_cast<size_t>(round + t) % 4];
          at::Tensor x = at::randn(shape, options);
          std::vector<at::Tensor> out = fec.runFusionWithInputs({x});
          at::Tensor rows = x.sum(1);
          at::Tensor cols = (x * rows.unsqueeze(1)).sum(0);
          const double tolerance = 1e-3 * std::sqrt(double(shape[1]));
          if (!at::allclose(out[0], rows, 1e-4, tolerance) ||
              !at::allclose(out[1], cols, 1e-3, 10 * tolerance)) {
            errors[t] = "wrong result in round " + std::to_string(round);
            return;
          }
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(errors[t].empty()) << "thread " << t << ": " << errors[t];
  }
  EXPECT_EQ(fec.numRuntimes(), shapes.size());
}

} // namespace fuser
