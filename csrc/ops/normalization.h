// Normalizations, composed of reductions and elementwise ops (doc/design.md
// §3): softmax, log_softmax, layer norm and RMS norm, forward and backward,
// and batch norm's forward,
// with PyTorch's semantics. Half and BFloat16 inputs compute in Float and
// the results return in the input's type; statistics (mean, invstd) stay
// Float (Double for Double inputs). Each is an ordinary fusion of the ops
// it is made of: the schedulers see the reductions and the ops around them.
#pragma once

#include <ir/interface_nodes.h>

#include <vector>

namespace fuser {

// torch.softmax(x, dim): exp(x - max) / sum(exp(x - max)) along `dim`
// (negative counts from the end).
TensorView* softmax(TensorView* x, int64_t dim);
// torch.log_softmax(x, dim): x - max - log(sum(exp(x - max))).
TensorView* log_softmax(TensorView* x, int64_t dim);
// The input gradients of softmax and log_softmax from the output `y` and
// its gradient `dy` (as torch's _softmax_backward_data and
// _log_softmax_backward_data): y * (dy - sum(dy * y)) and
// dy - exp(y) * sum(dy).
TensorView* softmax_backward(TensorView* dy, TensorView* y, int64_t dim);
TensorView* log_softmax_backward(TensorView* dy, TensorView* y, int64_t dim);

// A normalization's output and the statistics its backward needs, shaped
// as torch.native_layer_norm's: the normalized axes kept as broadcasts.
// RMS norm has no mean (nullptr).
struct ForwardNormResult {
  TensorView* output = nullptr;
  TensorView* mean = nullptr;
  TensorView* invstd = nullptr;
};

// torch.nn.functional.layer_norm over the last normalized_shape.size()
// axes (their sizes are the tensor's: only the count is used): (x - mean)
// * rsqrt(biased variance + eps), times weight and plus bias when given
// (tensors of the normalized axes). `eps` is a scalar.
ForwardNormResult layer_norm(
    TensorView* x, const std::vector<int64_t>& normalized_shape,
    TensorView* weight, TensorView* bias, Val* eps);
// torch.nn.functional.rms_norm: x * rsqrt(mean(x * x) + eps) * weight.
ForwardNormResult rms_norm(
    TensorView* x, const std::vector<int64_t>& normalized_shape,
    TensorView* weight, Val* eps);

// torch.nn.functional.batch_norm, with torch.native_batch_norm's results:
// x is [N, C, ...] (channels_last: [N, ..., C]), normalized per channel C
// over every other axis. Training: by the batch's mean and biased
// variance; with running_mean and running_var, their updates by
// `momentum` (the variance's unbiased) are returned too, in their types,
// for the caller to write back (Python's fd.ops.batch_norm does, in place).
// Evaluation: by running_mean and running_var, which are then required.
// weight, bias and the running statistics are [C] (any may be nullptr
// except as said); mean and invstd are [C] in the compute type.
struct BatchNormResult {
  TensorView* output = nullptr;
  TensorView* mean = nullptr;
  TensorView* invstd = nullptr;
  TensorView* running_mean = nullptr;
  TensorView* running_var = nullptr;
};
BatchNormResult batch_norm(
    TensorView* x, TensorView* weight, TensorView* bias,
    TensorView* running_mean, TensorView* running_var, bool training,
    Val* momentum, Val* eps, bool channels_last = false);

// Gradients of layer_norm / rms_norm from the output gradient `dy`, the
// input and the forward's statistics: grad_weight and grad_bias are
// reduced over the outer axes (nullptr when there is no weight or bias).
struct BackwardNormResult {
  TensorView* grad_input = nullptr;
  TensorView* grad_weight = nullptr;
  TensorView* grad_bias = nullptr;
};
BackwardNormResult layer_norm_backward(
    TensorView* dy, TensorView* x, const std::vector<int64_t>& normalized_shape,
    TensorView* mean, TensorView* invstd, TensorView* weight, TensorView* bias);
BackwardNormResult rms_norm_backward(
    TensorView* dy, TensorView* x, const std::vector<int64_t>& normalized_shape,
    TensorView* invstd, TensorView* weight);

// Gradients of batch_norm (torch.native_batch_norm_backward) from the
// output gradient `dy` and the input x, in the forward's layout: training
// normalizes by the forward's save_mean and save_invstd ([C], as
// batch_norm returns them), evaluation by running_mean and running_var
// with eps. grad_weight and grad_bias are [C] in weight's type (x's when
// there is no weight), grad_input in x's.
BackwardNormResult batch_norm_backward(
    TensorView* dy, TensorView* x, TensorView* weight, TensorView* running_mean,
    TensorView* running_var, TensorView* save_mean, TensorView* save_invstd,
    bool training, Val* eps, bool channels_last = false);

} // namespace fuser
