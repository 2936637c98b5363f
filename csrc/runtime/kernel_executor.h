// KernelExecutor: one scheduled fusion as one compiled kernel (DESIGN §6).
// compile() lowers, prints CUDA and compiles it with NVRTC for the device;
// run() binds the inputs, allocates the outputs, checks the conditions
// lowering recorded, and launches on PyTorch's current stream.
#pragma once

#include <device_lower/lower.h>
#include <expr/evaluator.h>
#include <fusion.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <cuda.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace fuser {

struct LaunchParams {
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  std::string toString() const;
};

class KernelExecutor {
 public:
  KernelExecutor() = default;
  ~KernelExecutor();
  KernelExecutor(const KernelExecutor&) = delete;
  KernelExecutor& operator=(const KernelExecutor&) = delete;

  // Lowers `fusion` as scheduled now. The index type is chosen from
  // `inputs`: 32-bit when every offset fits, else 64-bit.
  void compile(const Fusion* fusion, const std::vector<c10::IValue>& inputs);
  bool isCompiled() const {
    return module_ != nullptr;
  }

  std::vector<at::Tensor> run(const std::vector<c10::IValue>& inputs);

  const std::string& kernelCode() const {
    return source_;
  }
  const LaunchParams& lastLaunchParams() const {
    return launch_params_;
  }
  const LoweredKernel& kernel() const {
    return *kernel_;
  }
  DataType indexType() const {
    return kernel_->index_type;
  }

 private:
  // Binds the argument fields the kernel's sizes are read from (by node,
  // not by name: this is the per-launch path).
  void bindParameterExtents(
      ExpressionEvaluator& ee, size_t parameter,
      const std::vector<int64_t>& sizes) const;

  // The conditions the kernel's vectorized accesses rely on, for the
  // tensors of this launch (per kernel tensor parameter: allocation sizes,
  // strides, data pointer). A user error when one fails.
  void checkVectorizedAccesses(
      ExpressionEvaluator& ee, const std::vector<std::vector<int64_t>>& sizes,
      const std::vector<std::vector<int64_t>>& strides,
      const std::vector<const void*>& data) const;

  std::unique_ptr<LoweredKernel> kernel_;
  std::string source_;
  int device_ = -1;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  LaunchParams launch_params_;
};

// Whether every tensor of `inputs` can be addressed with 32-bit offsets.
bool fitsInt32Indexing(const std::vector<c10::IValue>& inputs);

} // namespace fuser
