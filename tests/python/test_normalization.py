"""fd.ops.softmax, log_softmax, their backward ops, layer_norm, rms_norm and batch_norm
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


def test_batch_norm_prints_round_trips_and_updates_running_stats_as_outputs():
    with FusionDefinition() as fd:
        x = contiguous_tensor(fd, 4)
        w, b, rm, rv = (contiguous_tensor(fd, 1) for _ in range(4))
        out, mean, invstd = fd.ops.batch_norm(x, w, b, rm, rv, 0.1, 1e-5, True)
        fd.add_output(out)
        fd.add_output(mean)
    text = str(fd)
    assert (
        "fd.ops.batch_norm(T0, weight=T1, bias=T2, running_mean=T3, running_var=T4, "
        "momentum=S0, eps=S1, training=True, channels_last=False)" in text
    )
    # The running statistics' updates are outputs written into T3 and T4,
    # not printed (the op adds them again when the definition is re-run).
    assert "alias_input" not in text
    assert len(fd.outputs()) == 4
    assert_round_trip(fd)
    with FusionDefinition() as fd:
        x = contiguous_tensor(fd, 2)
        c = contiguous_tensor(fd, 1)
        with pytest.raises(
            FuserError, match="running_mean, updated in place, must be a tensor input"
        ):
            fd.ops.batch_norm(x, None, None, fd.ops.neg(c), c, 0.1, 1e-5, True)
        with pytest.raises(FuserError, match="normalizes by running_mean"):
            fd.ops.batch_norm(x, None, None, None, None, 0.1, 1e-5, False)
        with pytest.raises(TypeError, match="training must be a bool"):
            fd.ops.batch_norm(x, None, None, None, None, 0.1, 1e-5, 1)
        out, _, _ = fd.ops.batch_norm(x, None, None, None, None, 0.1, 1e-5, True)
        fd.add_output(out)  # still usable


@requires_gpu
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_batch_norm_matches_torch_and_updates_running_stats(channels_last, dtype):
    fuser_dtype = {torch.float32: DataType.Float, torch.bfloat16: DataType.BFloat16}[dtype]
    x = torch.randn(16, 64, 9, 7, device="cuda", dtype=dtype)
    w = torch.randn(64, device="cuda", dtype=dtype)
    b = torch.randn(64, device="cuda", dtype=dtype)
    rm = torch.randn(64, device="cuda")
    rv = torch.rand(64, device="cuda") + 0.5
    want_rm, want_rv = rm.clone(), rv.clone()
    want = torch.nn.functional.batch_norm(
        x.float(), want_rm, want_rv, w.float(), b.float(), True, 0.1, 1e-5
    ).to(dtype)
    x_in = x.permute(0, 2, 3, 1).contiguous() if channels_last else x
    with FusionDefinition() as fd:
        tx = contiguous_tensor(fd, 4, fuser_dtype)
        tw, tb = (contiguous_tensor(fd, 1, fuser_dtype) for _ in range(2))
        trm, trv = (contiguous_tensor(fd, 1) for _ in range(2))
        out, mean, invstd = fd.ops.batch_norm(
            tx, tw, tb, trm, trv, 0.1, 1e-5, True, channels_last=channels_last
        )
        fd.add_output(out)
        fd.add_output(mean)
    got, got_mean = fd.execute([x_in, w, b, rm, rv])
    if channels_last:
        got = got.permute(0, 3, 1, 2)
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(got, want, rtol=tol, atol=tol)
    torch.testing.assert_close(got_mean, x.float().mean((0, 2, 3)), rtol=1e-4, atol=1e-4)
    # The running statistics were updated in place, as torch updates them.
    torch.testing.assert_close(rm, want_rm, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(rv, want_rv, rtol=1e-4, atol=1e-4)


def test_batch_norm_backward_prints_and_round_trips():
    with FusionDefinition() as fd:
        dy, x = contiguous_tensor(fd, 4), contiguous_tensor(fd, 4)
        w, mean, invstd = (contiguous_tensor(fd, 1) for _ in range(3))
        dx, dw, db = fd.ops.batch_norm_backward(dy, x, w, None, None, mean, invstd, 1e-5, True)
        for t in (dx, dw, db):
            fd.add_output(t)
    text = str(fd)
    assert "T5, T6, T7 = fd.ops.batch_norm_backward(T0, T1, weight=T2" in text
    assert "save_mean=T3, save_invstd=T4" in text
    assert_round_trip(fd)
    with FusionDefinition() as fd:
        x = contiguous_tensor(fd, 2)
        with pytest.raises(FuserError, match="training needs save_mean and save_invstd"):
            fd.ops.batch_norm_backward(x, x, None, None, None, None, None, 1e-5, True)


@requires_gpu
@pytest.mark.parametrize("channels_last", [False, True])
def test_batch_norm_backward_matches_torch(channels_last):
    x = torch.randn(16, 64, 9, 7, device="cuda")
    dy = torch.randn_like(x)
    w = torch.randn(64, device="cuda")
    mean = x.mean((0, 2, 3))
    invstd = torch.rsqrt(x.var((0, 2, 3), unbiased=False) + 1e-5)
    want = torch.ops.aten.native_batch_norm_backward(
        dy, x, w, None, None, mean, invstd, True, 1e-5, [True, True, True]
    )

    def nhwc(t):
        return t.permute(0, 2, 3, 1).contiguous() if channels_last else t

    with FusionDefinition() as fd:
        tdy, tx = contiguous_tensor(fd, 4), contiguous_tensor(fd, 4)
        tw, tm, ti = (contiguous_tensor(fd, 1) for _ in range(3))
        for t in fd.ops.batch_norm_backward(
            tdy, tx, tw, None, None, tm, ti, 1e-5, True, channels_last=channels_last
        ):
            fd.add_output(t)
    dx, dw, db = fd.execute([nhwc(dy), nhwc(x), w, mean, invstd])
    torch.testing.assert_close(dx, nhwc(want[0]), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(dw, want[1], rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(db, want[2], rtol=1e-4, atol=1e-3)


def test_a_softmax_of_a_product_reads_its_rows_in_vectors():
    # The logits of a language model head, [B * T, V] from [B, T, C]
    # @ [C, V], then a log-softmax over V: the persistent segment's input
    # is cut from a reshape and keeps the reshape's root. Its memory axes
    # are still those of its rows (layout/allocation_folding.h,
    # within_logical), so the rows are read in vectors of 8 bf16; the
    # product itself stays with ATen.
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.BFloat16)
        w = fd.define_tensor(
            shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, stride_order=[0, 1]
        )
        logits = fd.ops.reshape(
            fd.ops.reshape(fd.ops.matmul(fd.ops.reshape(a, new_shape=[256, 64]), w), [2, 128, 1000]),
            [256, 1000],
        )
        x = fd.ops.cast(logits, DataType.Float)
        shifted = fd.ops.sub(x, fd.ops.max(x, [1], keepdim=True))
        log_sum = fd.ops.log(fd.ops.sum(fd.ops.exp(shifted), [1], keepdim=True))
        fd.add_output(fd.ops.cast(fd.ops.sub(shifted, log_sum), DataType.BFloat16))
    inputs = [
        torch.empty(2, 128, 64, dtype=torch.bfloat16, device="meta"),
        torch.empty_strided((64, 1000), (1, 64), dtype=torch.bfloat16, device="meta"),
    ]
    segments = fd._compile_off_device(inputs)
    assert [s for s, _, _ in segments] == ["ExprEval", "InnerPersistent"], segments
    _, code, error = segments[1]
    assert not error, error
    kernel = code[code.index("// ---- kernel") :]
    assert "Load<__nv_bfloat16, 8>" in kernel, kernel
