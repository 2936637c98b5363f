// A cache miss without a GPU: what the runtime does before it launches
// anything (segmentation, each segment's scheduler, lowering, CUDA C++,
// NVRTC), for inputs that may be CPU or meta tensors. For reproducing a
// scheduling or compile failure on a machine without a GPU (the Python
// frontend's FusionDefinition._compile_off_device, the tests).
#pragma once

#include <fusion.h>
#include <scheduler/scheduler_types.h>

#include <ATen/core/ivalue.h>

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace fuser {

struct OffDeviceSegment {
  SchedulerType scheduler = SchedulerType::ExprEval;
  // The generated kernel (empty for an ExprEval or NoOp segment, or when
  // the segment failed).
  std::string code;
  // What failed while the segment was scheduled, lowered or compiled;
  // empty when nothing did (the runtime would run the segment with ATen
  // instead, runtime/fusion_kernel_runtime.h).
  std::string error;
};

// Per segment of `fusion` for `inputs` (in fusion->inputs() order), in run
// order. Input errors (rank, dtype, layout) throw as on the GPU; the sm_90
// target is assumed.
std::vector<OffDeviceSegment> compileOffDevice(
    const Fusion* fusion, const std::vector<c10::IValue>& inputs);

// The outputs of `fusion` for `inputs` (CPU tensors do), its segments for
// those inputs evaluated one after another with ATen, each from the
// values the earlier ones handed on, as the runtime runs them: a check of
// segmentation (which values cross, how each segment's fusion is cut)
// apart from the kernels.
std::vector<at::Tensor> evaluateSegmentsWithATen(
    const Fusion* fusion, const std::vector<c10::IValue>& inputs);

} // namespace fuser
