"""fd.ops of the library ops (doc/ops.md, "Library ops"): topk, argsort,
grouped_mm, embedding_fwd, sdpfa_fwd and sdpfa_bwd, which fuser runs with
ATen's kernels in a segment of their own, with nvFuser's Python names and
argument orders. Each function takes the FusionDefinition first; Ops
(_ops.py) exposes them."""

from ._C import FuserError
from ._operands import _is_int


def _optional_scalar(fd, value, what, position):
    """A Scalar operand, or None for an argument left out."""
    return None if value is None else fd._scalar_operand(value, what, position)


def _val(operand):
    return None if operand is None else operand._val


def _checked_bool(value, what, name):
    if not isinstance(value, bool):
        raise FuserError(f"{what}: {name} must be a bool; got {value!r}.")
    return value


def topk(fd, arg, k, dim=-1, largest=True, sorted=True):
    what, tensor = fd._dim_op_operand("topk", arg, dim)
    k = fd._scalar_operand(k, what, 2)
    largest = _checked_bool(largest, what, "largest")
    sorted = _checked_bool(sorted, what, "sorted")
    vals = fd._fusion.topk(tensor._val, k._val, int(dim), largest, sorted)
    outs = tuple(fd._wrap(v) for v in vals)
    kwargs = {"dim": int(dim), "largest": largest, "sorted": sorted}
    fd._record_op("topk", [tensor, k], kwargs, outs)
    return outs


def argsort(fd, arg, dim=-1, descending=False, stable=False):
    what, tensor = fd._dim_op_operand("argsort", arg, dim)
    descending = _checked_bool(descending, what, "descending")
    stable = _checked_bool(stable, what, "stable")
    out = fd._wrap(fd._fusion.argsort(tensor._val, int(dim), descending, stable))
    kwargs = {"dim": int(dim), "descending": descending, "stable": stable}
    return fd._record_op("argsort", [tensor], kwargs, out)


def grouped_mm(fd, a, b, offsets=None):
    what = "fd.ops.grouped_mm"
    fd._check_defining(what)
    a = fd._tensor_operand(a, what, 1)
    b = fd._tensor_operand(b, what, 2)
    offsets = None if offsets is None else fd._tensor_operand(offsets, what, 3)
    out = fd._wrap(fd._fusion.grouped_mm(a._val, b._val, _val(offsets)))
    return fd._record_op("grouped_mm", [a, b, offsets], {}, out)


def embedding_fwd(
    fd,
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=None,
    scale_grad_by_freq=False,
    sparse=False,
):
    """nvFuser's argument order; Python values, Scalars (constants) or None
    for padding_idx, max_norm and norm_type, bools or Scalars for the flags."""
    what = "fd.ops.embedding_fwd"
    fd._check_defining(what)
    indices = fd._tensor_operand(input, what, 1)
    weight = fd._tensor_operand(weight, what, 2)
    padding_idx = _constant(padding_idx, what, "padding_idx")
    if padding_idx is not None and not _is_int(padding_idx):
        raise FuserError(f"{what}: padding_idx must be an int; got {padding_idx!r}.")
    max_norm = _optional_scalar(fd, max_norm, what, 4)
    norm_type = _optional_scalar(fd, norm_type, what, 5)
    scale_grad_by_freq = bool(_constant(scale_grad_by_freq, what, "scale_grad_by_freq"))
    sparse = bool(_constant(sparse, what, "sparse"))
    out = fd._wrap(
        fd._fusion.embedding(
            indices._val,
            weight._val,
            padding_idx,
            _val(max_norm),
            _val(norm_type),
            scale_grad_by_freq,
            sparse,
        )
    )
    args = [indices, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse]
    return fd._record_op("embedding_fwd", args, {}, out)


def _constant(value, what, name):
    """The Python value of a constant argument given as a value or as a
    constant Scalar (Thunder defines its flags as scalars)."""
    from ._values import Scalar

    if isinstance(value, Scalar):
        if value.value() is None:
            raise FuserError(
                f"{what}: {name} must be known when the fusion is defined; "
                f"{value.name} is a scalar input."
            )
        return value.value()
    return value


def sdpfa_fwd(fd, query, key, value, dropout_p=None, is_causal=None, scale=None):
    """(output, logsumexp, philox_seed, philox_offset) of flash attention."""
    what = "fd.ops.sdpfa_fwd"
    fd._check_defining(what)
    q, k, v = (fd._tensor_operand(t, what, i + 1) for i, t in enumerate((query, key, value)))
    dropout_p = fd._scalar_operand(0.0 if dropout_p is None else dropout_p, what, 4)
    is_causal = fd._scalar_operand(False if is_causal is None else is_causal, what, 5)
    scale = _optional_scalar(fd, scale, what, 6)
    vals = fd._fusion.sdpfa_fwd(q._val, k._val, v._val, dropout_p._val, is_causal._val, _val(scale))
    outs = tuple(fd._wrap(val) for val in vals)
    fd._record_op("sdpfa_fwd", [q, k, v, dropout_p, is_causal, scale], {}, outs)
    return outs


def sdpfa_bwd(
    fd,
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
    """(grad_query, grad_key, grad_value) of flash attention."""
    what = "fd.ops.sdpfa_bwd"
    fd._check_defining(what)
    tensors = [grad_output, query, key, value, output, logsumexp]
    tensors = [fd._tensor_operand(t, what, i + 1) for i, t in enumerate(tensors)]
    dropout_p = fd._scalar_operand(dropout_p, what, 7)
    is_causal = fd._scalar_operand(is_causal, what, 8)
    seed = fd._tensor_operand(philox_seed, what, 9)
    offset = fd._tensor_operand(philox_offset, what, 10)
    scale = _optional_scalar(fd, scale, what, 11)
    vals = fd._fusion.sdpfa_bwd(
        *[t._val for t in tensors],
        dropout_p._val,
        is_causal._val,
        seed._val,
        offset._val,
        _val(scale),
    )
    outs = tuple(fd._wrap(val) for val in vals)
    args = tensors + [dropout_p, is_causal, seed, offset, scale]
    fd._record_op("sdpfa_bwd", args, {}, outs)
    return outs
