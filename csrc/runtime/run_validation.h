// FUSER_ENABLE=validate_runs: every run of a FusionExecutorCache is checked
// against an ATen evaluation of the fusion on the same inputs
// (runtime/aten_evaluator.h), and so is every kernel segment of a run of
// several segments, on the inputs it got. A debugging aid for programs
// that drive fuser (a Thunder model, a torch.compile graph): the first
// segment, or fusion, whose outputs differ names itself and the first
// element that differs.
#pragma once

#include <fusion.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

namespace fuser {

// Throws an InternalError naming `fusion`, `segments` (a description of
// how it ran) and the first output of `outputs` that differs from the ATen
// evaluation beyond a tolerance for its type (float 1e-3, half 2e-2,
// bfloat16 5e-2, double 1e-9, absolute and relative; integers and bools
// exactly; NaN where the reference has NaN).
void validateRunWithATen(
    Fusion* fusion, const std::vector<c10::IValue>& inputs,
    const std::vector<at::Tensor>& outputs, const std::string& segments);

// The same check for one segment of a run: `segment` is its unscheduled
// fusion, `inputs` what it got and `outputs` what its kernel wrote;
// `which` names it ("segment 3 of 7 (PointWise)").
void validateSegmentWithATen(
    Fusion* segment, const std::vector<c10::IValue>& inputs,
    const std::vector<at::Tensor>& outputs, const std::string& which);

} // namespace fuser
