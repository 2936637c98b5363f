// What schedulers may know about the inputs of one run: the extents (bound
// in an ExpressionEvaluator over the fusion being scheduled) and, per tensor
// input, its allocation strides and the alignment of its data pointer. The
// runtime fills it from the at::Tensors; schedulers stay free of ATen.
#pragma once

#include <base/register_file.h>
#include <expr/evaluator.h>
#include <ir/interface_nodes.h>
#include <layout/tensor_layout.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace fuser {

struct TensorRuntimeInfo {
  // Its sizes and strides, logical and per allocation ID (reductions left
  // out) as bound for the kernel: made once per cache miss and read by the
  // schedulers and the kernel's launch plan.
  TensorLayout layout;
  // The largest power of two (capped at 16) dividing the data pointer.
  int64_t alignment_bytes = 16;
};

class RuntimeInfo {
 public:
  explicit RuntimeInfo(ExpressionEvaluator ee) : ee_(std::move(ee)) {}

  void setTensorInfo(const TensorView* input, TensorRuntimeInfo info) {
    tensors_[input] = std::move(info);
  }
  // Null for tensors that are not fusion inputs.
  const TensorRuntimeInfo* tensorInfo(const TensorView* tv) const {
    auto it = tensors_.find(tv);
    return it == tensors_.end() ? nullptr : &it->second;
  }

  ExpressionEvaluator& expressionEvaluator() {
    return ee_;
  }
  // What schedulers read about the device the run is on; an H200's values
  // when not known (e.g. for CPU tensors).
  struct Device {
    int64_t multiprocessors = 132;
    // Major * 10 + minor.
    int64_t compute_capability = 90;
    int64_t l2_bytes = 60 * 1024 * 1024;
    // What an SM gives its resident blocks, and the most shared memory one
    // block may take (opted in above 48 KiB).
    int64_t registers_per_sm = kRegistersPerSm;
    int64_t shared_bytes_per_sm = 228 * 1024;
    int64_t shared_bytes_per_block = 227 * 1024;
  };
  const Device& device() const {
    return device_;
  }
  void setDevice(const Device& device) {
    device_ = device;
  }
  int64_t multiprocessors() const {
    return device_.multiprocessors;
  }
  void setMultiprocessors(int64_t count) {
    device_.multiprocessors = count;
  }
  int64_t computeCapability() const {
    return device_.compute_capability;
  }
  void setComputeCapability(int64_t capability) {
    device_.compute_capability = capability;
  }
  int64_t l2Bytes() const {
    return device_.l2_bytes;
  }
  // The evaluated extent of `id` (1 for broadcast).
  int64_t extent(const IterDomain* id);
  // Elements of `tv` (its logical domain without reductions).
  int64_t numel(const TensorView* tv);

 private:
  ExpressionEvaluator ee_;
  std::unordered_map<const TensorView*, TensorRuntimeInfo> tensors_;
  Device device_;
};

} // namespace fuser
