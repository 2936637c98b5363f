"""fd.ops.softmax, log_softmax, their backward ops, layer_norm and rms_norm
(csrc/ops/normalization.h): definitions, printing and misuse on the CPU;
on the GPU the results against torch."""

import pytest
import torch

from fuser import DataType, FuserError, FusionDefinition

from helpers import assert_round_trip, contiguous_tensor, requires_gpu


def test_normalizations_print_and_round_trip():
    with FusionDefinition() as fd:
        x = contiguous_tensor(fd, 2)
        w = contiguous_tensor(fd, 1)
        b = contiguous_tensor(fd, 1)
        fd.add_output(fd.ops.softmax(x, -1))
        fd.add_output(fd.ops.log_softmax(x, 0))
        fd.add_output(fd.ops.softmax_backward(x, x, 1))
        fd.add_output(fd.ops.log_softmax_backward(x, x, 1))
        fd.add_output(fd.ops.layer_norm(x, [8], w, b, eps=1e-6))
        fd.add_output(fd.ops.layer_norm(x, 8))
        fd.add_output(fd.ops.rms_norm(x, [8], w))
    text = str(fd)
    assert "fd.ops.softmax(T0, dim=-1)" in text
    assert "fd.ops.log_softmax(T0, dim=0)" in text
    assert "fd.ops.softmax_backward(T0, T0, dim=1)" in text
    assert "fd.ops.layer_norm(T0, normalized_shape=[8], weight=T1, bias=T2, eps=1e-06)" in text
    assert "fd.ops.rms_norm(T0, normalized_shape=[8], weight=T1, eps=1e-06)" in text
    assert_round_trip(fd)


def test_normalization_misuse_is_an_error():
    with FusionDefinition() as fd:
        x = contiguous_tensor(fd, 2)
        w = contiguous_tensor(fd, 2)
        with pytest.raises(FuserError, match="normalized_shape names 3 trailing axes"):
            fd.ops.layer_norm(x, [2, 2, 2])
        with pytest.raises(FuserError, match="rank of the normalized axes"):
            fd.ops.rms_norm(x, [4], w)
        with pytest.raises(TypeError, match="dim must be an int"):
            fd.ops.softmax(x, 1.5)
        with pytest.raises(TypeError, match="eps must be a Python number"):
            fd.ops.layer_norm(x, [4], eps="small")
        ints = contiguous_tensor(fd, 2, DataType.Int)
        with pytest.raises(FuserError, match="needs a floating-point tensor"):
            fd.ops.softmax(ints, 1)
        fd.add_output(fd.ops.softmax(x, 1))
    # The definition is still usable after the errors.
    assert "fd.ops.softmax(T0, dim=1)" in str(fd)


@requires_gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_normalizations_match_torch(dtype):
    fuser_dtype = {torch.float32: DataType.Float, torch.bfloat16: DataType.BFloat16}[dtype]
    x = torch.randn(64, 1000, device="cuda", dtype=dtype)
    dy = torch.randn_like(x)
    w = torch.randn(1000, device="cuda", dtype=dtype)
    b = torch.randn(1000, device="cuda", dtype=dtype)
    y = torch.softmax(x, -1)
    with FusionDefinition() as fd:
        tx, tdy, ty = (contiguous_tensor(fd, 2, fuser_dtype) for _ in range(3))
        tw, tb = (contiguous_tensor(fd, 1, fuser_dtype) for _ in range(2))
        fd.add_output(fd.ops.softmax(tx, -1))
        fd.add_output(fd.ops.log_softmax(tx, -1))
        fd.add_output(fd.ops.softmax_backward(tdy, ty, -1))
        fd.add_output(fd.ops.layer_norm(tx, [1000], tw, tb, eps=1e-5))
        fd.add_output(fd.ops.rms_norm(tx, [1000], tw, eps=1e-6))
    outs = fd.execute([x, dy, y, w, b])
    expected = [
        torch.softmax(x, -1),
        torch.log_softmax(x, -1),
        torch._softmax_backward_data(dy, y, -1, dtype),
        torch.nn.functional.layer_norm(x, [1000], w, b, 1e-5),
        torch.nn.functional.rms_norm(x, [1000], w, 1e-6),
    ]
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    for got, want in zip(outs, expected):
        assert got.dtype == dtype and got.shape == want.shape
        torch.testing.assert_close(got, want, rtol=tol, atol=tol)
