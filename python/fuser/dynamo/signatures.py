"""Input signatures of a fused partition: what a FusionDefinition built for
a partition depends on, read off the values the partition is called with
(at run time) or off Dynamo's example values (fake tensors, possibly with
symbolic sizes, at compile time).

A tensor's signature holds its dtype, which axes have size 1 (fuser's
broadcast axes), its contiguity and stride order, never its sizes: the
definition declares every other size -1, so one definition serves every
batch size, and fuser's own executor cache compiles kernels per size as
needed. A scalar's signature is its type. Values that fuser cannot take as
inputs (a CPU tensor other than a 0-dim one) have no signature: the
partition then runs with eager ATen for that call."""

import dataclasses
from typing import Optional, Tuple

import torch

from .._C import DataType
from .._layouts import describe_strides
from ..dtypes import to_data_type


def data_type(dtype):
    """fuser's DataType of a torch dtype, uint64 included (the random state
    of flash attention, which fuser carries but does not compute on)."""
    if dtype == torch.uint64:
        return DataType.UInt64
    return to_data_type(dtype)


def is_fuser_dtype(dtype):
    try:
        data_type(dtype)
    except TypeError:
        return False
    return True


@dataclasses.dataclass(frozen=True)
class TensorSignature:
    dtype: torch.dtype
    shape: Tuple[int, ...]  # define_tensor's shape: 1 for broadcast axes, else -1
    contiguity: Tuple[Optional[bool], ...]
    stride_order: Tuple[int, ...]
    is_cpu_scalar: bool = False  # a 0-dim CPU tensor, taken by value

    @property
    def ndim(self):
        return len(self.shape)


@dataclasses.dataclass(frozen=True)
class ScalarSignature:
    dtype: DataType


def _hint(size):
    """An int for a size that may be symbolic: the value Dynamo traced with."""
    if isinstance(size, int):
        return size
    from torch.fx.experimental.symbolic_shapes import size_hint

    return size_hint(size)


def tensor_signature(sizes, strides, dtype, device_type):
    """The signature of a tensor of these (int) sizes and strides, or None
    when fuser cannot take it as an input."""
    if not is_fuser_dtype(dtype):
        return None
    if device_type == "cpu":
        if len(sizes) != 0:
            return None
        return TensorSignature(dtype, (), (), (), is_cpu_scalar=True)
    if device_type != "cuda":
        return None
    shape, contiguity, stride_order = describe_strides(
        list(sizes), list(strides), False, "torch.compile(backend='fuser')"
    )
    return TensorSignature(dtype, tuple(shape), tuple(contiguity), tuple(stride_order))


def _scalar_signature(value):
    if isinstance(value, (bool, torch.SymBool)):
        return ScalarSignature(DataType.Bool)
    if isinstance(value, (int, torch.SymInt)):
        return ScalarSignature(DataType.Int)
    if isinstance(value, (float, torch.SymFloat)):
        return ScalarSignature(DataType.Double)
    return None


def runtime_signature(values):
    """The signature of the values a partition is called with: a tuple, or
    None when one of them cannot be a fuser input."""
    signature = []
    for value in values:
        if isinstance(value, torch.Tensor):
            entry = tensor_signature(value.shape, value.stride(), value.dtype, value.device.type)
        else:
            entry = _scalar_signature(value)
        if entry is None:
            return None
        signature.append(entry)
    return tuple(signature)


def example_signature(values):
    """The signature that run-time values like Dynamo's example values
    (fake tensors, SymInts) will have; None when one of them cannot be a
    fuser input or its device is unknown at compile time (meta)."""
    signature = []
    for value in values:
        if isinstance(value, torch.Tensor):
            sizes = [_hint(s) for s in value.shape]
            strides = [_hint(s) for s in value.stride()]
            entry = tensor_signature(sizes, strides, value.dtype, value.device.type)
        else:
            entry = _scalar_signature(value)
        if entry is None:
            return None
        signature.append(entry)
    return tuple(signature)


def output_stride_order(value):
    """The stride order (define_tensor's convention) that eager ATen gives
    the tensor `value` (a fake tensor), or None when it is row-major: the
    partition's output is laid out the same way, so that the eager ops
    after it (views in particular) see the strides they were traced with."""
    sizes = [_hint(s) for s in value.shape]
    strides = [_hint(s) for s in value.stride()]
    if len(sizes) < 2:
        return None
    _, _, stride_order = describe_strides(sizes, strides, False, "torch.compile(backend='fuser')")
    if stride_order == list(range(len(sizes) - 1, -1, -1)):
        return None
    return stride_order
