"""Conversions between fuser's DataType and torch dtypes."""

import torch

from ._C import DataType

_TORCH_TO_FUSER = {
    torch.bool: DataType.Bool,
    torch.int8: DataType.Int8,
    torch.uint8: DataType.UInt8,
    torch.int16: DataType.Int16,
    torch.int32: DataType.Int32,
    torch.int64: DataType.Int,
    torch.float8_e4m3fn: DataType.Float8_e4m3fn,
    torch.float8_e5m2: DataType.Float8_e5m2,
    torch.float16: DataType.Half,
    torch.bfloat16: DataType.BFloat16,
    torch.float32: DataType.Float,
    torch.float64: DataType.Double,
    torch.complex64: DataType.ComplexFloat,
    torch.complex128: DataType.ComplexDouble,
}
_FUSER_TO_TORCH = {v: k for k, v in _TORCH_TO_FUSER.items()}


def to_data_type(dtype):
    """The DataType of a torch dtype (a DataType is returned as is)."""
    if isinstance(dtype, DataType):
        return dtype
    try:
        return _TORCH_TO_FUSER[dtype]
    except (KeyError, TypeError):
        supported = ", ".join(str(d) for d in _TORCH_TO_FUSER)
        raise TypeError(f"fuser has no data type for {dtype!r}; supported: {supported}") from None


def to_torch_dtype(dtype):
    """The torch dtype of a DataType."""
    try:
        return _FUSER_TO_TORCH[dtype]
    except (KeyError, TypeError):
        raise TypeError(f"{dtype!r} has no torch dtype") from None
