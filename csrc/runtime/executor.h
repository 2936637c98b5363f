// The executors: what runs one scheduled segment of a fusion
// (doc/design.md §6). A kernel executor launches a generated kernel, the
// ExprEval executor evaluates the segment op by op with ATen, the NoOp
// executor only allocates empty outputs and forwards inputs, and the
// communication executor runs a collective between devices
// (runtime/communication_executor.h). Every executor returns its
// outputs in their declared allocation layout (runtime/tensor_layout.h).
#pragma once

#include <fusion.h>
#include <layout/tensor_layout.h>
#include <scheduler/scheduler_types.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <memory>
#include <string>
#include <vector>

namespace fuser {

class Executor {
 public:
  virtual ~Executor() = default;

  // Prepares to run `fusion` (scheduled; the executor keeps a copy or what
  // it derives from it) on inputs of the signature of `inputs`: device,
  // dtypes, sizes, strides and pointer alignment. `layouts` holds, per
  // input, the layout the caller made already (the runtime makes each once
  // per cache miss); an input without one gets its layout made here.
  virtual void compile(
      const Fusion* fusion, const std::vector<c10::IValue>& inputs,
      const KnownLayouts& layouts) = 0;
  void compile(const Fusion* fusion, const std::vector<c10::IValue>& inputs) {
    compile(fusion, inputs, KnownLayouts{});
  }

  // Runs on any inputs binding accepts (checked); returns the outputs.
  virtual std::vector<at::Tensor> run(
      const std::vector<c10::IValue>& inputs) = 0;

  // Runs on inputs of the signature compile() saw, which the caller
  // guarantees (FusionExecutorCache's key fixes it): nothing that the
  // signature fixes is checked again. By default the same as run().
  virtual std::vector<at::Tensor> runWithSignature(
      const std::vector<c10::IValue>& inputs) {
    return run(inputs);
  }

  // The CUDA source it launches; empty for executors without a kernel.
  virtual const std::string& kernelCode() const;
};

// The executor for segments scheduled by `type`.
std::unique_ptr<Executor> makeExecutor(SchedulerType type);

} // namespace fuser
