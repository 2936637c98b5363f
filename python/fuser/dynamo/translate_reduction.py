"""Translators of reductions and normalizations (sum, mean, amax, var_mean,
softmax and its backward, layer norm) to fd.ops, for aten_table.py.

Half and bfloat16 inputs are reduced in float, as ATen's kernels
accumulate, and the context casts the result back to the dtype eager ATen
gives it."""

import torch

_LOW_PRECISION = (torch.float16, torch.bfloat16)


def _reduction_dims(dims, rank):
    """aten's dim list (None or [] meaning every axis), non-negative."""
    if dims is None or len(dims) == 0:
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return sorted(d + rank if d < 0 else d for d in dims)


def _accumulation_dtype(dtype):
    return torch.float32 if dtype in _LOW_PRECISION else dtype


def _accumulating(name):
    """sum and mean: in the result's dtype, float for half and bfloat16
    (an integer or bool sum is int64, as the fake result says)."""

    def translate(ctx, x, dim=None, keepdim=False, dtype=None):
        x = ctx.cast(x, _accumulation_dtype(ctx.result_dtype()))
        return getattr(ctx.fd.ops, name)(x, _reduction_dims(dim, x.ndim), keepdim)

    translate.__name__ = f"translate_{name}"
    return translate


translate_sum = _accumulating("sum")
translate_mean = _accumulating("mean")


def translate_sum_all(ctx, x, dtype=None):
    return translate_sum(ctx, x, None, False)


def translate_mean_all(ctx, x, dtype=None):
    return translate_mean(ctx, x, None, False)


def _extremum(name):
    """amax and amin: exact in any dtype, so no cast."""

    def translate(ctx, x, dim=(), keepdim=False):
        return getattr(ctx.fd.ops, name)(x, _reduction_dims(dim, x.ndim), keepdim)

    translate.__name__ = f"translate_a{name}"
    return translate


translate_amax = _extremum("max")
translate_amin = _extremum("min")


def translate_prod(ctx, x, dim, keepdim=False, dtype=None):
    x = ctx.cast(x, _accumulation_dtype(ctx.result_dtype()))
    return ctx.fd.ops.prod(x, _reduction_dims([dim], x.ndim), keepdim)


def translate_var_mean(ctx, x, dim=None, *, correction=None, keepdim=False):
    x = ctx.cast(x, _accumulation_dtype(ctx.result_dtype(0)))
    correction = 1 if correction is None else int(correction)
    return ctx.fd.ops.var_mean(x, _reduction_dims(dim, x.ndim), correction, keepdim)


def translate_var(ctx, x, dim=None, *, correction=None, keepdim=False):
    x = ctx.cast(x, _accumulation_dtype(ctx.result_dtype()))
    correction = 1 if correction is None else int(correction)
    return ctx.fd.ops.var(x, _reduction_dims(dim, x.ndim), correction, keepdim)


def _softmax(name):
    """_softmax and _log_softmax: half_to_float gives a float result from a
    half input (fd.ops.softmax computes half in float either way)."""

    def translate(ctx, x, dim, half_to_float):
        if half_to_float:
            x = ctx.cast(x, torch.float32)
        return getattr(ctx.fd.ops, name)(x, ctx.normalized_dim(dim, x.ndim))

    translate.__name__ = f"translate_{name}"
    return translate


translate_softmax = _softmax("softmax")
translate_log_softmax = _softmax("log_softmax")


def _softmax_backward(name):
    """_softmax_backward_data(grad, output, dim, input_dtype): the result
    has input_dtype, which the context casts to."""

    def translate(ctx, grad, output, dim, input_dtype):
        return getattr(ctx.fd.ops, name)(grad, output, ctx.normalized_dim(dim, grad.ndim))

    translate.__name__ = f"translate_{name}"
    return translate


translate_softmax_backward = _softmax_backward("softmax_backward")
translate_log_softmax_backward = _softmax_backward("log_softmax_backward")


def translate_native_layer_norm(ctx, x, normalized_shape, weight, bias, eps):
    """(output, mean, rstd) over the trailing len(normalized_shape) axes,
    computed in float from one Welford reduction: the mean and rstd are
    what the backward (decomposed by AOTAutograd) reads, so fd.ops.layer_norm,
    which returns the output alone, is not enough. The statistics keep the
    normalized axes as size 1, as ATen's do."""
    x = ctx.cast(x, torch.float32)
    rank = x.ndim
    dims = list(range(rank - len(normalized_shape), rank))
    var, mean = ctx.fd.ops.var_mean(x, dims, 0, True)
    rstd = ctx.fd.ops.rsqrt(ctx.fd.ops.add(var, eps))
    out = ctx.fd.ops.mul(ctx.fd.ops.sub(x, mean), rstd)
    if weight is not None:
        out = ctx.fd.ops.mul(out, ctx.with_rank(ctx.cast(weight, torch.float32), rank))
    if bias is not None:
        out = ctx.fd.ops.add(out, ctx.with_rank(ctx.cast(bias, torch.float32), rank))
    return out, mean, rstd
