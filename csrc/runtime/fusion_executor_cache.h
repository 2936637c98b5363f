// FusionExecutorCache: runs a fusion on at::Tensors, compiling on the first
// call for each input signature and reusing the compiled runtime afterwards
// (doc/design.md §6). The signature is the device plus each input's dtype,
// sizes, strides and pointer-alignment class, and each scalar's kind (and
// value, for an integer or boolean scalar that extents depend on). A hit
// checks nothing the signature fixes: it looks the runtime up and runs it.
// One cache may be used from several threads at once (each on its own
// stream, say): lookups and insertions take a lock, a miss compiles
// outside it (two threads missing one signature both compile and one
// runtime is kept), and runs share nothing but what the executors guard.
#pragma once

#include <fusion.h>
#include <runtime/multidevice_executor.h>
#include <runtime/fusion_kernel_runtime.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace fuser {

class FusionExecutorCache {
 public:
  explicit FusionExecutorCache(std::unique_ptr<Fusion> fusion);

  // Inputs in fusion->inputs() order: at::Tensor, double, int64_t or bool.
  std::vector<at::Tensor> runFusionWithInputs(
      const std::vector<c10::IValue>& inputs);

  // The fusion as the user defined it (unscheduled).
  Fusion* fusion() const {
    return fusion_.get();
  }
  FusionKernelRuntime* getMostRecentKernelRuntime() const {
    return most_recent_.load();
  }
  // Number of distinct compiled runtimes.
  size_t numRuntimes() const;
  // For a fusion placed on a device mesh: what runs it (made by the first
  // run; doc/multidevice.md), else nullptr.
  MultiDeviceExecutor* multiDeviceExecutor() const;

 private:
  struct KeyHash {
    size_t operator()(const std::vector<int64_t>& key) const;
  };

  void signatureOf(
      const std::vector<c10::IValue>& inputs, std::vector<int64_t>& key) const;

  std::unique_ptr<Fusion> fusion_;
  const bool multi_device_fusion_;
  mutable std::mutex multi_device_mutex_; // guards multi_device_
  std::unique_ptr<MultiDeviceExecutor> multi_device_;
  // Per input: whether a scalar's value is part of the signature (an
  // integer or boolean that an extent or split factor depends on).
  std::vector<bool> scalar_value_in_key_;
  mutable std::mutex mutex_; // guards runtimes_
  std::unordered_map<
      std::vector<int64_t>, std::unique_ptr<FusionKernelRuntime>, KeyHash>
      runtimes_;
  std::atomic<FusionKernelRuntime*> most_recent_{nullptr};
};

} // namespace fuser
