// Evaluates a fusion with ATen: every expr computes its output with the
// matching ATen op, in the dtypes the IR says (casts are explicit in the
// IR). The reference for testValidate, and later the ExprEval scheduler.
// Works on any device ATen does, CPU included.
#pragma once

#include <expr/evaluator.h>
#include <fusion.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <vector>

namespace fuser {

// Binds `inputs` (at::Tensor, double, int64 or bool, one per fusion input;
// see bindFusionInputs, device not checked) and returns the outputs in
// fusion->outputs() order. Scalar outputs come back as 0-dim tensors.
// Intermediates live on the device of the first tensor input.
std::vector<at::Tensor> evaluateFusionWithATen(
    Fusion* fusion, const std::vector<c10::IValue>& inputs);

// What a permute or an expand gives: a copy laid out as a kernel writes
// it (the reference of the tests), or ATen's view of its input (the ExprEval
// executor, which lays out at its end what it hands on, and returns the
// views a fusion returns of its inputs as views, segmentation/input_views.h).
enum class AtenViews { Materialize, Alias };

// Same, binding into `ee`, which afterwards can evaluate any extent or
// scalar of the fusion (e.g. the sizes of the outputs).
std::vector<at::Tensor> evaluateFusionWithATen(
    Fusion* fusion, const std::vector<c10::IValue>& inputs,
    ExpressionEvaluator& ee, AtenViews views = AtenViews::Materialize);

} // namespace fuser
