// Host overhead of FusionExecutorCache::runFusionWithInputs on a cache hit,
// for a two-input add (DESIGN §6: the hit path is a performance feature).
// Prints the median microseconds per call over many calls, measured on the
// host only (launches are asynchronous; the device is synchronized only
// between batches so the queue never fills).
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

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>

using namespace fuser;

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
  cache.runFusionWithInputs({a, b}); // compile (miss)

  constexpr int kBatches = 50;
  constexpr int kCallsPerBatch = 200;
  std::vector<double> per_call_us;
  for (int batch = 0; batch < kBatches; ++batch) {
    c10::cuda::device_synchronize();
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCallsPerBatch; ++i) {
      cache.runFusionWithInputs({a, b});
    }
    auto stop = std::chrono::steady_clock::now();
    per_call_us.push_back(
        std::chrono::duration<double, std::micro>(stop - start).count() /
        kCallsPerBatch);
  }
  std::sort(per_call_us.begin(), per_call_us.end());
  const double median = per_call_us[per_call_us.size() / 2];
  std::cout << "host_overhead: two-input add, 1024 floats, cache hit: median "
            << median << " us per runFusionWithInputs (min "
            << per_call_us.front() << ", max " << per_call_us.back() << ", "
            << kBatches << " batches of " << kCallsPerBatch << " calls)\n";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--csv") == 0) {
      std::ofstream csv(argv[i + 1]);
      csv << "benchmark,median_us,min_us,max_us\n"
          << "host_overhead_add_cache_hit," << median << ","
          << per_call_us.front() << "," << per_call_us.back() << "\n";
    }
  }
  return 0;
}
