// The CPU half of a cache miss (scheduling, lowering, code generation and
// NVRTC) from several threads at once: every thread gets the kernel one
// thread alone gets, and the kernel cache's counters add up. No GPU needed.
#include <codegen/codegen.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/input_binding.h>
#include <runtime/nvrtc_compile.h>
#include <scheduler/registry.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

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

} // namespace fuser
