// Host overhead of FusionExecutorCache::runFusionWithInputs on a cache hit,
// for a two-input add of 1024 floats (doc/design.md §6: the hit path is a
// performance feature), and a profile of where its microseconds go: the
// same call below the cache (FusionKernelRuntime::run: no signature, no
// lookup) and below the runtime (the executor's launch), and the pieces a
// launch is made of (an output allocation, the device guard and stream,
// the eager at::add for comparison). Each figure is the median host time
// per call over many calls (launches are asynchronous; the device is
// synchronized only between batches so the queue never fills).
//
//   build/bench_host_overhead [--csv results.csv]
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/all_ops.h>
#include <runtime/fusion_executor_cache.h>
#include <tests/cpp/utils.h>

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

using namespace fuser;

namespace {

struct Measure {
  double median = 0;
  double min = 0;
  double max = 0;
};

// `calls_per_batch` small enough that the launches of a batch never wait
// for the device (three segments of grid reductions take longer on the
// device than on the host).
Measure perCallUs(
    const std::function<void()>& call, int calls_per_batch = 200) {
  const int kBatches = 50 * 200 / calls_per_batch;
  const int kCallsPerBatch = calls_per_batch;
  std::vector<double> per_call_us;
  for (int batch = 0; batch < kBatches; ++batch) {
    c10::cuda::device_synchronize();
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCallsPerBatch; ++i) {
      call();
    }
    auto stop = std::chrono::steady_clock::now();
    per_call_us.push_back(
        std::chrono::duration<double, std::micro>(stop - start).count() /
        kCallsPerBatch);
  }
  std::sort(per_call_us.begin(), per_call_us.end());
  return {
      per_call_us[per_call_us.size() / 2], per_call_us.front(),
      per_call_us.back()};
}

} // namespace

int main(int argc, char** argv) {
  if (!at::globalContext().hasCUDA()) {
    std::cout << "host_overhead: no CUDA device, nothing measured\n";
    return 0;
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
  FusionExecutorCache cache(std::move(fusion));
  auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  at::Tensor a = at::randn({1024}, options);
  at::Tensor b = at::randn({1024}, options);
  const std::vector<c10::IValue> inputs = {a, b};
  cache.runFusionWithInputs(inputs); // compile (miss)
  FusionKernelRuntime* runtime = cache.getMostRecentKernelRuntime();
  Executor* executor = runtime->executors().front();

  std::vector<std::pair<std::string, Measure>> rows;
  rows.emplace_back(
      "cache_hit", perCallUs([&] { cache.runFusionWithInputs(inputs); }));
  rows.emplace_back("runtime_run", perCallUs([&] { runtime->run(inputs); }));
  rows.emplace_back("executor_launch", perCallUs([&] {
                      executor->runWithSignature(inputs);
                    }));
  rows.emplace_back("output_allocation", perCallUs([&] {
                      at::empty_strided({1024}, {1}, options);
                    }));
  rows.emplace_back("guard_and_stream", perCallUs([&] {
                      c10::cuda::CUDAGuard guard(a.device().index());
                      c10::cuda::getCurrentCUDAStream(a.device().index());
                    }));
  rows.emplace_back("eager_add", perCallUs([&] { at::add(a, b); }));

  // A hit on a fusion of three segments (doc/segmentation.md): sums along
  // alternating axes of a 64 x 64 tensor, each scaling the next one's
  // input; the same pieces per segment.
  auto three = std::make_unique<Fusion>();
  {
    FusionGuard fg(three.get());
    TensorView* x = makeContigTensor(2);
    three->addInput(x);
    TensorView* y = mul(x, broadcast(sum(x, {1}), {false, true}));
    TensorView* z = mul(y, broadcast(sum(y, {0}), {true, false}));
    three->addOutput(sum(z, {1}));
  }
  FusionExecutorCache three_cache(std::move(three));
  const std::vector<c10::IValue> square = {at::randn({64, 64}, options)};
  three_cache.runFusionWithInputs(square);
  FusionKernelRuntime* three_runtime = three_cache.getMostRecentKernelRuntime();
  rows.emplace_back(
      "cache_hit_batches_of_20",
      perCallUs([&] { cache.runFusionWithInputs(inputs); }, 20));
  rows.emplace_back(
      "three_segments_cache_hit_batches_of_20",
      perCallUs([&] { three_cache.runFusionWithInputs(square); }, 20));
  rows.emplace_back(
      "three_segments_runtime_run_batches_of_20",
      perCallUs([&] { three_runtime->run(square); }, 20));
  std::cout << "host_overhead: three segments: ";
  for (size_t i = 0; i < three_runtime->segments().size(); ++i) {
    std::cout << (i ? " + " : "") << three_runtime->schedulerType(i);
  }
  std::cout << "\n";

  for (const auto& [name, m] : rows) {
    std::cout << "host_overhead: " << name << ": median " << m.median
              << " us per call (min " << m.min << ", max " << m.max << ")\n";
  }
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--csv") == 0) {
      std::ofstream csv(argv[i + 1]);
      csv << "benchmark,median_us,min_us,max_us\n";
      for (const auto& [name, m] : rows) {
        csv << name << "," << m.median << "," << m.min << "," << m.max << "\n";
      }
    }
  }
  return 0;
}
