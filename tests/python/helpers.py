"""Helpers shared by the Python tests."""

import pytest
import torch

from fuser import DataType, FusionDefinition

requires_gpu = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (none found)"
)


def contiguous_tensor(fd, ndim, dtype=DataType.Float):
    """An input of `ndim` axes of any size, contiguous."""
    return fd.define_tensor(shape=[-1] * ndim, contiguity=[True] * ndim, dtype=dtype)


def round_trip(fd):
    """Re-creates a definition from its printed form; returns the copy."""
    namespace = {}
    exec(compile(str(fd), "<printed fusion definition>", "exec"), namespace)
    copy = namespace["fd"]
    assert isinstance(copy, FusionDefinition)
    return copy


def assert_round_trip(fd):
    copy = round_trip(fd)
    assert str(copy) == str(fd)
    assert copy.fusion_ir() == fd.fusion_ir()
    return copy
