"""fd.ops: the operations of a FusionDefinition, with nvFuser's names. Each
checks and records through the definition's own methods (_movement_ops.py,
_compute_ops.py); the elementwise ops come from the extension's tables."""

from . import _C, _library_ops
from ._C import DataType, FuserError
from .dtypes import to_data_type


class Ops:
    """fd.ops: the operations of a FusionDefinition, with nvFuser's names."""

    def __init__(self, fd):
        self._fd = fd

    def where(self, pred, value1, value2):
        """value1 where pred holds, else value2."""
        return self._fd._where(pred, value1, value2)

    def cast(self, arg, dtype):
        return self._fd._cast(arg, dtype)

    def trunc_div(self, arg1, arg2):
        """torch.div(a, b, rounding_mode="trunc"): integers divide as C's
        `/` (nvFuser's div of integers), floats give trunc(a / b)."""
        return self._fd._elementwise(
            "trunc_div", [arg1, arg2], lambda a, b: self._fd._fusion.trunc_div(a, b)
        )

    def set(self, arg):
        """A copy of a tensor."""
        return self._fd._set("set", arg)

    def stride_order(self, arg, stride_order):
        """A copy of a tensor laid out dense in `stride_order` (as in
        define_tensor: stride_order[i] ranks dimension i's stride, 0 the
        innermost), as nvFuser's stride_order: an output made by it is
        allocated in that order."""
        return self._fd._stride_order(arg, stride_order)

    def segment_set(self, arg):
        """A copy of a tensor that ends a segment: what reads it runs in
        another kernel than what computes it."""
        return self._fd._set("segment_set", arg)

    def broadcast(self, arg, is_broadcast_dim):
        """Inserts a broadcast axis wherever is_broadcast_dim is True."""
        return self._fd._broadcast(arg, is_broadcast_dim)

    def broadcast_in_dim(self, arg, shape, broadcast_dims):
        """Broadcasts to `shape`: input dimension i becomes output dimension
        broadcast_dims[i]; the other output dimensions are new broadcast
        axes, expanded where `shape` gives them a size other than 1."""
        return self._fd._broadcast_in_dim(arg, shape, broadcast_dims)

    def expand(self, arg, shape):
        """torch.expand with one size per dimension (ints or integer
        Scalars): a broadcast dimension given a size other than 1 takes it;
        any other must be given -1 or its own size."""
        return self._fd._expand(arg, shape)

    def permute(self, arg, dims):
        """Output dimension i is input dimension dims[i]."""
        return self._fd._permute(arg, dims)

    def squeeze(self, arg, dims):
        """torch.squeeze of `dims` (axes of size 1): a view of the others,
        run between kernels like reshape."""
        return self._fd._squeeze(arg, dims)

    def unsqueeze(self, arg, dim):
        """torch.unsqueeze: a broadcast axis inserted at `dim`."""
        return self._fd._unsqueeze(arg, dim)

    def reshape(self, arg, new_shape):
        """Reshape to `new_shape`: ints (one may be -1) or integer Scalars
        (scalar inputs, or sizes of the tensor such as x.size(0)). Runs as a
        view between kernels; sizes whose product is not the element count
        are an error when it runs."""
        return self._fd._reshape(arg, new_shape)

    def full(self, shape, fill_value, dtype):
        """A tensor of sizes `shape` (ints or integer Scalars) with every
        element `fill_value`, of `dtype` (torch.full)."""
        return self._fd._full(shape, fill_value, dtype)

    def zeros(self, shape, dtype):
        return self._fd._full(shape, 0.0 if _is_floating(dtype) else 0, dtype)

    def ones(self, shape, dtype):
        return self._fd._full(shape, 1.0 if _is_floating(dtype) else 1, dtype)

    def iota(self, length, start=None, step=None, dtype=DataType.Int):
        """[start, start + step, ..., start + (length - 1) * step] of
        `dtype`; start 0 and step 1 when not given (torch.arange)."""
        return self._fd._iota(length, start, step, dtype)

    def uniform(self, minval, maxval, shape, rng_seed=None, rng_offset=None, dtype=DataType.Float):
        """Uniform in [minval, maxval) of sizes `shape`. Element i (the
        logical linear index) depends on (rng_seed, rng_offset, i) alone, not
        on the schedule; without a seed and offset, each execute() takes them
        from torch's default CUDA generator."""
        return self._fd._random("uniform", minval, maxval, shape, rng_seed, rng_offset, dtype)

    def normal(self, mean, std, shape, rng_seed=None, rng_offset=None, dtype=DataType.Float):
        """Normal of `mean` and standard deviation `std`, as uniform."""
        return self._fd._random("normal", mean, std, shape, rng_seed, rng_offset, dtype)

    def rand_like(self, arg, rng_seed=None, rng_offset=None):
        """torch.rand_like: uniform in [0, 1) of `arg`'s shape and dtype."""
        tensor = self._fd._tensor_operand(arg, "fd.ops.rand_like")
        return self.uniform(0.0, 1.0, tensor.shape(), rng_seed, rng_offset, tensor.dtype)

    def randn_like(self, arg, rng_seed=None, rng_offset=None):
        """torch.randn_like: standard normal of `arg`'s shape and dtype."""
        tensor = self._fd._tensor_operand(arg, "fd.ops.randn_like")
        return self.normal(0.0, 1.0, tensor.shape(), rng_seed, rng_offset, tensor.dtype)

    def slice(self, arg, start_indices, end_indices, strides=None):
        """arg[start:end:stride, ...], one entry per axis (ints or integer
        Scalars; negative counts from the end, bounds clamped, as torch's
        slicing). As an output of the fusion, a view of arg (doc/ops.md)."""
        return self._fd._slice(arg, start_indices, end_indices, strides)

    def pad(self, arg, pad_widths, value=None):
        """torch.nn.functional.pad: (left, right) pairs from the last axis
        backwards, filled with `value` (default 0); negative widths trim."""
        return self._fd._pad(arg, pad_widths, value)

    def cat(self, tensors, dim):
        """torch.cat of `tensors` along `dim` (types promoted as torch)."""
        return self._fd._cat(tensors, dim)

    def select(self, arg, index, dim):
        """torch.select: `arg` at position `index` (an int or integer
        Scalar, negative from the end) of `dim`, which the result drops."""
        return self._fd._indexing("select", arg, index, dim)

    def index_select(self, arg, index, dim):
        """torch.index_select: the positions `index` (a 1-D integer tensor)
        of `dim`. Like the other indexing ops, runs through ATen as a kernel
        of its own for now; an index out of range is a FuserError."""
        return self._fd._indexing("index_select", arg, index, dim)

    def gather(self, arg, index, dim):
        """torch.gather along `dim`: the result has `index`'s shape."""
        return self._fd._indexing("gather", arg, index, dim)

    def take_along_axis(self, arg, index, dim):
        """nvFuser's take_along_axis: gather with an index of `arg`'s
        shape except along `dim`."""
        return self._fd._indexing("gather", arg, index, dim)

    def scatter(self, arg, index, src, dim):
        """torch.scatter: `arg` with `src` written at `index` along `dim`."""
        return self._fd._indexing("scatter", arg, index, dim, src)

    def cumsum(self, arg, dim, dtype=None):
        """torch.cumsum along `dim`: int64 for integer and bool tensors
        unless `dtype` is given. Runs through ATen as a kernel of its own
        (no scan scheduler yet)."""
        return self._fd._scan("cumsum", arg, dim, dtype)

    def cumprod(self, arg, dim, dtype=None):
        """torch.cumprod along `dim`, typed as cumsum."""
        return self._fd._scan("cumprod", arg, dim, dtype)

    def cummax(self, arg, dim):
        """torch.cummax along `dim`: (values, indices), the running maximum
        in arg's type and the int64 index it came from."""
        return self._fd._scan_with_indices("cummax", arg, dim)

    def cummin(self, arg, dim):
        """torch.cummin along `dim`: (values, indices)."""
        return self._fd._scan_with_indices("cummin", arg, dim)

    def triu(self, arg, diagonal=0):
        """torch.triu: the elements of the last two axes with column - row
        >= diagonal; the others 0."""
        return self._fd._triangle("triu", arg, diagonal)

    def tril(self, arg, diagonal=0):
        """torch.tril: the elements of the last two axes with column - row
        <= diagonal; the others 0."""
        return self._fd._triangle("tril", arg, diagonal)

    def size(self, arg, dim):
        """The extent of dimension `dim` of a tensor, an Int Scalar (as
        arg.size(dim))."""
        return self._fd._tensor_operand(arg, "fd.ops.size").size(dim)

    def shape(self, arg):
        """The extents of a tensor's dimensions, a list of Int Scalars that
        fd.ops.reshape takes (as arg.shape())."""
        return self._fd._tensor_operand(arg, "fd.ops.shape").shape()

    def sum(self, arg, dims=None, keepdim=False, dtype=DataType.Null, *, dim=None):
        return self._fd._reduction("sum", arg, _dims(dims, dim, "sum"), keepdim, dtype)

    def max(self, arg, dims=None, keepdim=False, dtype=DataType.Null, *, dim=None):
        return self._fd._reduction("max", arg, _dims(dims, dim, "max"), keepdim, dtype)

    def min(self, arg, dims=None, keepdim=False, dtype=DataType.Null, *, dim=None):
        return self._fd._reduction("min", arg, _dims(dims, dim, "min"), keepdim, dtype)

    def mean(self, arg, dims=None, keepdim=False, dtype=DataType.Null, *, dim=None):
        return self._fd._reduction("mean", arg, _dims(dims, dim, "mean"), keepdim, dtype)

    def prod(self, arg, dims=None, keepdim=False, dtype=DataType.Null, *, dim=None):
        return self._fd._reduction("prod", arg, _dims(dims, dim, "prod"), keepdim, dtype)

    def var(self, arg, dims=None, correction=1, keepdim=False, *, dim=None):
        """torch.var: the variance over `dims` with Bessel's `correction`."""
        return self._fd._var_mean("var", arg, _dims(dims, dim, "var"), correction, keepdim)

    def var_mean(self, arg, dims=None, correction=1, keepdim=False, *, dim=None):
        """torch.var_mean: (variance, mean) from one Welford reduction."""
        return self._fd._var_mean(
            "var_mean", arg, _dims(dims, dim, "var_mean"), correction, keepdim
        )

    def clamp(self, arg, min=None, max=None):  # noqa: A002 - torch's names
        """torch.clamp: maximum(arg, min), then minimum with max; either
        bound may be left out (not both). NaN stays NaN."""
        return self._fd._clamp(arg, min, max)

    def addcmul(self, arg, tensor1, tensor2, value=1.0):
        """torch.addcmul: arg + value * tensor1 * tensor2."""
        return self._fd._elementwise(
            "addcmul", [arg, tensor1, tensor2, value], self._fd._fusion.addcmul
        )

    def lerp(self, start, end, weight):
        """torch.lerp: start + weight * (end - start); weight a tensor or a
        number."""
        return self._fd._elementwise("lerp", [start, end, weight], self._fd._fusion.lerp)

    def matmul(self, arg1, arg2):
        """torch.matmul: 1-D operands are vectors, batch axes broadcast;
        half and bfloat16 accumulate in float."""
        return self._fd._matmul(arg1, arg2)

    def linear(self, arg1, arg2, bias=None):
        """torch.nn.functional.linear(input, weight, bias): input times
        weight transposed, plus bias, accumulated in float."""
        return self._fd._linear(arg1, arg2, bias)

    def softmax(self, arg, dim):
        """torch.softmax(arg, dim); half and bfloat16 compute in float."""
        return self._fd._softmax("softmax", arg, dim)

    def log_softmax(self, arg, dim):
        """torch.log_softmax(arg, dim); half and bfloat16 compute in float."""
        return self._fd._softmax("log_softmax", arg, dim)

    def softmax_backward(self, grad, output, dim):
        """The input gradient of softmax from its output and the output's
        gradient: output * (grad - sum(grad * output, dim))."""
        return self._fd._softmax_backward("softmax_backward", grad, output, dim)

    def log_softmax_backward(self, grad, output, dim):
        """The input gradient of log_softmax: grad - exp(output) * sum(grad, dim)."""
        return self._fd._softmax_backward("log_softmax_backward", grad, output, dim)

    def layer_norm(self, arg, normalized_shape, weight=None, bias=None, eps=1e-5):
        """torch.nn.functional.layer_norm over the trailing
        len(normalized_shape) axes, computed in float for half and bfloat16."""
        return self._fd._norm("layer_norm", arg, normalized_shape, weight, bias, eps)

    def rms_norm(self, arg, normalized_shape, weight=None, eps=1e-6):
        """torch.nn.functional.rms_norm: arg * rsqrt(mean(arg ** 2) + eps) * weight."""
        return self._fd._norm("rms_norm", arg, normalized_shape, weight, None, eps)

    def batch_norm(
        self,
        arg,
        weight,
        bias,
        running_mean,
        running_var,
        momentum,
        eps,
        training,
        channels_last=False,
    ):
        """torch.nn.functional.batch_norm of arg [N, C, ...] (channels_last:
        [N, ..., C]) per channel; returns (output, mean, invstd), the
        statistics [C] in float. Training with running_mean and
        running_var (tensor inputs) also updates them in place when the
        fusion runs, as PyTorch does; evaluation normalizes by them."""
        return self._fd._batch_norm(
            arg, weight, bias, running_mean, running_var, momentum, eps, training, channels_last
        )

    def batch_norm_backward(
        self,
        grad,
        arg,
        weight,
        running_mean,
        running_var,
        save_mean,
        save_invstd,
        eps,
        training,
        channels_last=False,
    ):
        """The gradients (grad_input, grad_weight, grad_bias) of batch_norm,
        as torch.native_batch_norm_backward: training by the forward's
        save_mean and save_invstd, evaluation by the running statistics."""
        return self._fd._batch_norm_backward(
            grad,
            arg,
            weight,
            running_mean,
            running_var,
            save_mean,
            save_invstd,
            eps,
            training,
            channels_last,
        )

    def welford(self, arg, dims=None):
        """(mean, var_sum, count) of Welford's one-pass reduction: var_sum
        is the sum of squared deviations from the mean, count an int64."""
        return self._fd._welford(arg, dims)

    # --- library ops: run with ATen's kernels (_library_ops.py) -----------------
    def topk(self, arg, k, dim=-1, largest=True, sorted=True):
        """torch.topk: (values, int64 indices) of the k largest (smallest
        unless `largest`) elements along `dim`."""
        return _library_ops.topk(self._fd, arg, k, dim, largest, sorted)

    def argsort(self, arg, dim=-1, descending=False, stable=False):
        """torch.argsort: the int64 positions along `dim` that sort `arg`."""
        return _library_ops.argsort(self._fd, arg, dim, descending, stable)

    def grouped_mm(self, a, b, offsets=None):
        """torch._grouped_mm: products of matrices in groups ending at the
        int32 `offsets` ([groups, m, k] x [groups, k, n] takes none)."""
        return _library_ops.grouped_mm(self._fd, a, b, offsets)

    def embedding_fwd(
        self,
        input,
        weight,
        padding_idx=None,
        max_norm=None,
        norm_type=None,
        scale_grad_by_freq=False,
        sparse=False,
    ):
        """torch.nn.functional.embedding (with max_norm, the rows read are
        renormalized in place, as torch does)."""
        return _library_ops.embedding_fwd(
            self._fd, input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse
        )

    def sdpfa_fwd(self, query, key, value, dropout_p=None, is_causal=None, scale=None):
        """Flash attention of half or bfloat16 [batch, heads, sequence,
        head size] tensors: (output, logsumexp, philox_seed, philox_offset)."""
        return _library_ops.sdpfa_fwd(self._fd, query, key, value, dropout_p, is_causal, scale)

    def sdpfa_bwd(
        self,
        grad_output,
        query,
        key,
        value,
        output,
        logsumexp,
        dropout_p,
        is_causal,
        philox_seed,
        philox_offset,
        scale=None,
    ):
        """(grad_query, grad_key, grad_value) of sdpfa_fwd."""
        return _library_ops.sdpfa_bwd(
            self._fd,
            grad_output,
            query,
            key,
            value,
            output,
            logsumexp,
            dropout_p,
            is_causal,
            philox_seed,
            philox_offset,
            scale,
        )


def _is_floating(dtype):
    return to_data_type(dtype) in (
        DataType.Double,
        DataType.Float,
        DataType.Half,
        DataType.BFloat16,
    )


def _dims(dims, dim, name):
    """The reduced dims, given as `dims` (nvFuser's spelling) or `dim`
    (PyTorch's), not both."""
    if dim is None:
        return dims
    if dims is not None:
        raise FuserError(f"fd.ops.{name}: give dims or dim, not both (got {dims} and {dim}).")
    return dim


def _make_unary(name):
    def op(self, arg):
        return self._fd._unary(name, arg)

    op.__name__ = name
    op.__qualname__ = f"Ops.{name}"
    op.__doc__ = f"Elementwise {name}."
    return op


def _make_binary(name):
    def op(self, arg1, arg2):
        return self._fd._binary(name, arg1, arg2)

    op.__name__ = name
    op.__qualname__ = f"Ops.{name}"
    op.__doc__ = f"Elementwise {name} (tensors and scalars, PyTorch type promotion)."
    return op


for _name in _C.unary_ops:
    setattr(Ops, _name, _make_unary(_name))
for _name in _C.binary_ops:
    setattr(Ops, _name, _make_binary(_name))
del _name
