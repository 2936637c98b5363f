"""Translators of elementwise aten ops (math, comparisons, where, clamp,
casts, copies and constants) to fd.ops, for the table in aten_table.py.

Each takes the TranslationContext and the node's arguments (fuser values
for FX nodes, Python values otherwise), as the aten schema orders them.
Operands are aligned to the result's rank first (PyTorch broadcasts lower
ranks from the right) and, for arithmetic, cast to the result's dtype, so
that e.g. an integer division is a true division as in PyTorch; the
context casts every result to the dtype eager ATen gives it."""

import math

import torch


def unary_math(name):
    """exp, tanh, ...: computed in the result's dtype (float for an
    integer input, as PyTorch)."""

    def translate(ctx, x):
        (x,) = ctx.as_dtype([x], ctx.result_dtype())
        return getattr(ctx.fd.ops, name)(x)

    translate.__name__ = f"translate_{name}"
    return translate


def unary_predicate(name):
    """isnan, logical_not, ...: on the input as it is."""

    def translate(ctx, x):
        return getattr(ctx.fd.ops, name)(x)

    translate.__name__ = f"translate_{name}"
    return translate


def binary_arithmetic(name):
    """add, mul, ...: tensor operands cast to the result's dtype; `alpha`
    (add and sub) scales the second operand."""

    def translate(ctx, a, b, alpha=None):
        a, b = ctx.as_dtype(ctx.aligned([a, b]), ctx.result_dtype())
        if alpha is not None and alpha != 1:
            b = ctx.fd.ops.mul(b, alpha)
        return getattr(ctx.fd.ops, name)(a, b)

    translate.__name__ = f"translate_{name}"
    return translate


def binary_comparison(name):
    """eq, lt, logical_and, ...: fuser promotes the operands as PyTorch."""

    def translate(ctx, a, b):
        a, b = ctx.aligned([a, b])
        return getattr(ctx.fd.ops, name)(a, b)

    translate.__name__ = f"translate_{name}"
    return translate


def translate_div_mode(ctx, a, b, rounding_mode=None):
    """div.Tensor_mode: a true division rounded toward zero or down."""
    compute = ctx.result_dtype()
    if not compute.is_floating_point:
        compute = torch.float64  # exact for the integers of int32, and most of int64
    a, b = ctx.as_dtype(ctx.aligned([a, b]), compute)
    quotient = ctx.fd.ops.div(a, b)
    if rounding_mode == "trunc":
        return ctx.fd.ops.trunc(quotient)
    if rounding_mode == "floor":
        return ctx.fd.ops.floor(quotient)
    return quotient


def translate_where(ctx, condition, a, b):
    condition, a, b = ctx.aligned([condition, a, b])
    a, b = ctx.as_dtype([a, b], ctx.result_dtype())
    return ctx.fd.ops.where(condition, a, b)


def translate_clamp(ctx, x, min=None, max=None):  # noqa: A002 - aten's names
    (x,) = ctx.as_dtype([x], ctx.result_dtype())
    return ctx.fd.ops.clamp(x, min, max)


def translate_clamp_tensor(ctx, x, min=None, max=None):  # noqa: A002
    x, low, high = ctx.as_dtype(ctx.aligned([x, min, max]), ctx.result_dtype())
    if low is not None:
        x = ctx.fd.ops.maximum(x, low)
    if high is not None:
        x = ctx.fd.ops.minimum(x, high)
    return x


def translate_hardtanh(ctx, x, min_val=-1.0, max_val=1.0):
    return ctx.fd.ops.clamp(x, min_val, max_val)


def translate_leaky_relu(ctx, x, negative_slope=0.01):
    return ctx.fd.ops.where(ctx.fd.ops.gt(x, 0), x, ctx.fd.ops.mul(x, negative_slope))


def translate_threshold_backward(ctx, grad, x, threshold):
    grad, x = ctx.aligned([grad, x])
    zero = ctx.fd.ops.full([], 0, ctx.fd_dtype(ctx.result_dtype()))
    zero = ctx.with_rank(zero, ctx.result_rank())
    return ctx.fd.ops.where(ctx.fd.ops.le(x, threshold), zero, grad)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def translate_gelu(ctx, x, approximate="none"):
    """fd.ops.gelu is the exact (erf) GELU; the tanh approximation is
    spelt out, computed in float."""
    if approximate == "none":
        return ctx.fd.ops.gelu(x)
    x = ctx.cast(x, torch.float32)
    inner = ctx.fd.ops.mul(
        ctx.fd.ops.add(x, ctx.fd.ops.mul(ctx.fd.ops.mul(ctx.fd.ops.mul(x, x), x), 0.044715)),
        _SQRT_2_OVER_PI,
    )
    return ctx.fd.ops.mul(ctx.fd.ops.mul(x, 0.5), ctx.fd.ops.add(ctx.fd.ops.tanh(inner), 1.0))


def translate_pow(ctx, base, exponent):
    base, exponent = ctx.as_dtype(ctx.aligned([base, exponent]), ctx.result_dtype())
    return ctx.fd.ops.pow(base, exponent)


def translate_to_copy(ctx, x, **kwargs):
    """_to_copy: a cast (to the dtype the fake result has) or a copy; the
    table's check keeps device moves and layouts out."""
    dtype = ctx.result_dtype()
    if x.dtype == ctx.fd_dtype(dtype):
        return ctx.fd.ops.set(x)
    return ctx.cast(x, dtype)


def translate_convert_element_type(ctx, x, dtype):
    return ctx.cast(x, dtype)


def translate_copy(ctx, x, *args, **kwargs):
    """clone, alias, detach, lift_fresh_copy: a copy in a fusion (the
    output's layout, e.g. clone's memory_format, is the fake result's)."""
    return ctx.fd.ops.set(x)


def translate_full(ctx, size, fill_value, **kwargs):
    return ctx.fd.ops.full(list(size), fill_value, ctx.fd_dtype(ctx.result_dtype()))


def translate_scalar_tensor(ctx, value, **kwargs):
    return ctx.fd.ops.full([], value, ctx.fd_dtype(ctx.result_dtype()))


def translate_full_like(ctx, x, fill_value, **kwargs):
    return ctx.fd.ops.full(ctx.fd.ops.shape(x), fill_value, ctx.fd_dtype(ctx.result_dtype()))


def translate_fill(ctx, x, value):
    return ctx.fd.ops.full(ctx.fd.ops.shape(x), value, ctx.fd_dtype(ctx.result_dtype()))


def translate_arange(ctx, start, end=None, step=1, **kwargs):
    """arange.start_step (and arange.default, whose one argument is the
    end): fd.ops.iota of ceil((end - start) / step) values. The table's
    check keeps a step other than 1 to Python ints."""
    if end is None:
        start, end = 0, start
    if isinstance(start, int) and isinstance(end, int) and isinstance(step, int):
        length = max(0, -((start - end) // step))
    else:
        length = end - start  # step 1
    dtype = ctx.fd_dtype(ctx.result_dtype())
    return ctx.fd.ops.iota(length, start, step, dtype)
