"""fd.ops.matmul and fd.ops.linear (doc/matmul.md): definitions on the CPU,
and on the GPU against torch, through the matmul kernel where the
scheduler takes the layout and through ATen (cuBLAS) where it does not."""

import pytest
import torch

from fuser import DataType, FuserError, FusionDefinition

from helpers import assert_round_trip, requires_gpu


def define_like(fd, t):
    """An input with t's sizes (symbolic), dtype and memory order."""
    order = sorted(range(t.dim()), key=lambda i: (t.stride(i), i))
    stride_order = [0] * t.dim()
    for rank, axis in enumerate(order):
        stride_order[axis] = rank
    dtype = {torch.bfloat16: DataType.BFloat16, torch.float16: DataType.Half}[t.dtype]
    return fd.define_tensor(
        shape=[-1] * t.dim(), contiguity=[True] * t.dim(), dtype=dtype, stride_order=stride_order
    )


def test_matmul_and_linear_print_and_round_trip():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        w = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        bias = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16)
        fd.add_output(fd.ops.linear(a, w, bias))
        fd.add_output(fd.ops.linear(a, w))
        fd.add_output(fd.ops.matmul(a, w))
    text = str(fd)
    assert "fd.ops.linear(T0, T1, T2)" in text
    assert "fd.ops.linear(T0, T1)" in text
    assert "fd.ops.matmul(T0, T1)" in text
    assert "mma(" in fd.fusion_ir()
    assert_round_trip(fd)


def test_matmul_of_different_types_is_an_error():
    with pytest.raises(FuserError, match="types differ"):
        with FusionDefinition() as fd:
            a = fd.define_tensor(shape=[-1, -1], dtype=DataType.BFloat16)
            b = fd.define_tensor(shape=[-1, -1], dtype=DataType.Half)
            fd.add_output(fd.ops.matmul(a, b))


def bf16(*shape):
    return torch.randn(*shape, device="cuda", dtype=torch.bfloat16)


def relative_error(got, expected):
    return ((got.double() - expected.double()).norm() / expected.double().norm()).item()


@requires_gpu
@pytest.mark.parametrize("a_t,b_t", [(False, False), (False, True), (True, False), (True, True)])
def test_matmul_layouts(a_t, b_t):
    # Rows of 320 and 512 bfloat16 are multiples of 16 bytes, as the bulk
    # copy engine needs (test_unaligned_rows_fall_back_to_aten has others).
    a = bf16(320, 256).t() if a_t else bf16(256, 320)
    b = bf16(512, 320).t() if b_t else bf16(320, 512)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.matmul(define_like(fd, a), define_like(fd, b)))
    (out,) = fd.execute([a, b])
    expected = a.double() @ b.double()
    assert out.dtype == torch.bfloat16 and out.shape == (256, 512)
    assert relative_error(out, expected) < 1e-2
    if torch.cuda.get_device_capability() == (9, 0):
        assert "FuserMatmul::consume" in fd.last_cuda_code()


@requires_gpu
def test_linear_with_bias_and_gelu_is_one_kernel():
    x, w, bias = bf16(1000, 512), bf16(384, 512), bf16(384)
    with FusionDefinition() as fd:
        tx, tw, tb = define_like(fd, x), define_like(fd, w), define_like(fd, bias)
        y = fd.ops.linear(tx, tw, tb)
        fd.add_output(fd.ops.cast(fd.ops.gelu(y), DataType.BFloat16))
    (out,) = fd.execute([x, w, bias])
    expected = torch.nn.functional.gelu(torch.nn.functional.linear(x.float(), w.float(), bias.float()))
    assert relative_error(out, expected) < 1e-2
    if torch.cuda.get_device_capability() == (9, 0):
        code = fd.last_cuda_code()
        assert "FuserMatmul::consume" in code and "gelu(" in code


@requires_gpu
def test_unaligned_rows_fall_back_to_aten():
    # Rows of 4097 bfloat16 (8194 bytes) cannot be copied by the bulk copy
    # engine: the product runs through ATen, with the same result.
    a, b = bf16(64, 96), bf16(96, 4097)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.matmul(define_like(fd, a), define_like(fd, b)))
    (out,) = fd.execute([a, b])
    assert relative_error(out, a.double() @ b.double()) < 1e-2
