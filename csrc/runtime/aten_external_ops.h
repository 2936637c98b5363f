// The library ops (ir/external_op.h) evaluated with ATen's kernels.
#pragma once

#include <expr/evaluator.h>
#include <ir/external_op.h>

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

namespace fuser {

// `op`'s outputs, in order, computed from its inputs: tensors from
// `tensor_of`, scalars from `ee`.
std::vector<at::Tensor> evaluateExternalOp(
    const ExternalOp* op,
    const std::function<at::Tensor(const Val*)>& tensor_of,
    ExpressionEvaluator& ee);

} // namespace fuser
