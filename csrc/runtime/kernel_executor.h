// KernelExecutor: one scheduled fusion as one compiled kernel
// (doc/design.md §6). compile() lowers, prints CUDA and compiles it with
// NVRTC for the device. A launch plan holds everything a launch needs for
// one input signature (argument bytes, output layouts, launch sizes); run()
// plans for its inputs, checking them, and launches; runWithSignature()
// reuses the plan of compile()'s signature, so a cache hit only allocates
// outputs, fills in data pointers and scalars, and launches on PyTorch's
// current stream.
#pragma once

#include <device_lower/lower.h>
#include <expr/evaluator.h>
#include <layout/tma_layout.h>
#include <runtime/executor.h>
#include <runtime/tensor_layout.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <cuda.h>

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace fuser {

struct LaunchParams {
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t shared_memory_bytes = 0; // dynamic
  std::string toString() const;
};

class KernelExecutor : public Executor {
 public:
  KernelExecutor() = default;
  ~KernelExecutor() override;
  KernelExecutor(const KernelExecutor&) = delete;
  KernelExecutor& operator=(const KernelExecutor&) = delete;

  // Lowers `fusion` as scheduled now and plans launches for the signature
  // of `inputs`. The index type is chosen from `inputs`: 32-bit when every
  // offset fits, else 64-bit.
  using Executor::compile;
  void compile(
      const Fusion* fusion, const std::vector<c10::IValue>& inputs,
      const KnownLayouts& layouts) override;
  bool isCompiled() const {
    return module_ != nullptr;
  }
  // The __global__ function's name in the kernels compile() makes from now
  // on (default: lowering's "fuser_kernel"), followed by a digest of the
  // code. The runtime names each after its scheduler, so that profiles
  // tell the kernels apart.
  void setKernelName(std::string name) {
    kernel_name_ = std::move(name);
  }
  // What the scheduler asked of the kernels compile() makes from now on
  // (HeuristicParams::kernelFlags): a register cap, a cooperative launch.
  void setKernelFlags(KernelFlags flags) {
    kernel_flags_ = flags;
  }

  std::vector<at::Tensor> run(const std::vector<c10::IValue>& inputs) override;
  std::vector<at::Tensor> runWithSignature(
      const std::vector<c10::IValue>& inputs) override;

  const std::string& kernelCode() const override {
    return source_;
  }
  // The launch of the most recent run (a copy: runs may be concurrent).
  LaunchParams lastLaunchParams() const;
  // The name by which errors and the dumps refer to the kernel: the lowered
  // kernel's name and a hash of its source.
  std::string kernelId() const;
  const LoweredKernel& kernel() const {
    return *kernel_;
  }
  DataType indexType() const {
    return kernel_->index_type;
  }

 private:
  // Everything a launch needs for one input signature.
  struct LaunchPlan {
    // The kernel parameters, each at its offset in one buffer; data
    // pointers and scalars are filled in at each launch.
    std::vector<char> bytes;
    std::vector<size_t> offsets;
    std::vector<TensorLayout> output_layouts;
    std::vector<at::TensorOptions> output_options;
    LaunchParams launch;
    // The buffers of reductions across blocks: a work buffer (any bytes)
    // and its semaphores (zeroed when allocated; every launch leaves them
    // zero), written into argument `argument`.
    struct GridBuffer {
      size_t argument = 0;
      int64_t bytes = 0;
      bool semaphores = false;
    };
    std::vector<GridBuffer> grid_buffers;
    // The buffers on each stream the plan has launched on. Launches on one
    // stream run one after another and share them; launches on several
    // streams at once must not (guarded by the executor's launch_mutex_).
    mutable std::unordered_map<CUstream, std::vector<at::Tensor>>
        grid_buffers_by_stream;
    // The tensor maps of a matrix product's operands, which hold the
    // input's data pointer (doc/matmul.md §4): the last one encoded is kept
    // with the pointer it was encoded for, and encoded again when a launch
    // brings another (guarded by the executor's launch_mutex_).
    struct TensorMapArgument {
      TensorMapGeometry geometry;
      size_t input = 0;
      size_t argument = 0;
      mutable void* encoded_for = nullptr;
      mutable CUtensorMap encoded{};
    };
    std::vector<TensorMapArgument> tensor_maps;
  };

  // Binds and checks `inputs` (user errors for what binding rejects or a
  // vectorized access does not allow) and plans their launch. An input
  // with a layout in `layouts` is not replayed again.
  LaunchPlan plan(
      const std::vector<c10::IValue>& inputs,
      const KnownLayouts& layouts = {}) const;
  std::vector<at::Tensor> launch(
      const LaunchPlan& plan, const std::vector<c10::IValue>& inputs);
  // Binds the argument fields the kernel's sizes are read from (by node,
  // not by name).
  void bindParameterExtents(
      ExpressionEvaluator& ee, size_t parameter,
      const std::vector<int64_t>& sizes) const;
  // The conditions the kernel's vectorized accesses rely on (per kernel
  // tensor parameter: its layout and data pointer alignment).
  // The geometry of each tensor map of a matrix product's operands (their
  // layouts and alignments are per kernel tensor parameter), with a zeroed
  // argument for each: launch() encodes them with the data pointers.
  void planTensorMaps(
      LaunchPlan& plan, ExpressionEvaluator& ee,
      const std::vector<const TensorLayout*>& layouts,
      const std::vector<int64_t>& alignments) const;
  void checkVectorizedAccesses(
      ExpressionEvaluator& ee, const std::vector<const TensorLayout*>& layouts,
      const std::vector<int64_t>& alignments) const;

  std::unique_ptr<LoweredKernel> kernel_;
  std::string source_;
  int device_ = -1;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  // Writes the pointers of `plan`'s grid buffers for `stream` into
  // `bytes`, allocating them on the plan's first launch on that stream.
  void writeGridBuffers(
      const LaunchPlan& plan, CUstream stream, char* bytes) const;

  std::string kernel_name_;
  KernelFlags kernel_flags_;
  std::unique_ptr<LaunchPlan> signature_plan_;
  // Guards what launches from several threads share: launch_params_ and
  // each plan's tensor maps and buffers per stream.
  mutable std::mutex launch_mutex_;
  LaunchParams launch_params_;
};

// Test hooks (tests/cpp/test_failures.cpp): the next `count` kernels
// compiled in the process carry an #error, as generated code NVRTC rejects
// would; the next `count` launches ask the driver for a block it refuses,
// as a launch that fails would.
void failNextCompilesForTesting(int count);
void failNextLaunchesForTesting(int count);

// Whether every tensor of `inputs` can be addressed with 32-bit offsets.
bool fitsInt32Indexing(const std::vector<c10::IValue>& inputs);

} // namespace fuser
