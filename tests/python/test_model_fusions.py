"""Fusions that Thunder and torch.compile made from real models (nanoGPT,
a Llama-style block, cross entropy) and that fuser once scheduled wrongly
or not at all. Each is checked twice: on the CPU, what a cache miss does
up to the launch (FusionDefinition._compile_off_device: segmentation,
schedulers, lowering, NVRTC) must succeed with the expected schedulers;
on the GPU, the outputs must match PyTorch's and no segment may fall back
to ATen (conftest.py checks that)."""

import pytest
import torch

from fuser import DataType, FuserError, FusionDefinition
from helpers import requires_gpu


def compiled_segments(fd, inputs):
    """(scheduler, kernel) per segment; fails on a segment that failed."""
    segments = fd._compile_off_device(inputs)
    for name, _, error in segments:
        assert error == "", f"{name} segment failed: {error}"
    return [(name, code) for name, code, _ in segments]


# --- a causal mask from one iota read along rows and along columns ------------
def causal_softmax(n):
    """Thunder's nanoGPT attention: where(iota[:, None] >= iota[None, :], x,
    -inf), then a softmax over the last axis."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[2, 3, n, n], contiguity=[True] * 4, dtype=DataType.Float)
        iota = fd.ops.iota(length=n, start=0, step=1, dtype=DataType.Int)
        rows = fd.ops.broadcast_in_dim(iota, shape=[n, 1], broadcast_dims=[0])
        columns = fd.ops.broadcast_in_dim(iota, shape=[1, n], broadcast_dims=[1])
        mask = fd.ops.ge(
            fd.ops.broadcast_in_dim(rows, shape=[n, n], broadcast_dims=[0, 1]),
            fd.ops.broadcast_in_dim(columns, shape=[n, n], broadcast_dims=[0, 1]),
        )
        mask = fd.ops.broadcast_in_dim(mask, shape=[2, 3, n, n], broadcast_dims=[2, 3])
        masked = fd.ops.where(mask, x, fd.define_scalar(float("-inf"), dtype=DataType.Double))
        top = fd.ops.max(masked, dims=[3])
        top = fd.ops.broadcast_in_dim(top, shape=[2, 3, n, n], broadcast_dims=[0, 1, 2])
        e = fd.ops.exp(fd.ops.sub(masked, top))
        total = fd.ops.broadcast_in_dim(fd.ops.sum(e, dims=[3]), shape=[2, 3, n, n], broadcast_dims=[0, 1, 2])
        fd.add_output(fd.ops.div(e, total))
    return fd


def test_one_iota_read_along_rows_and_columns_gives_each_its_own_index():
    fd = causal_softmax(64)
    codes = [code for _, code in compiled_segments(fd, [torch.randn(2, 3, 64, 64)])]
    mask_kernel = next(code for code in codes if "iota" in code or "% 64" in code)
    # The row index and the column index of the mask: one iota each.
    assert "/ 64" in mask_kernel and "% 64" in mask_kernel


@requires_gpu
def test_causal_softmax_matches_torch():
    n = 128
    x = torch.randn(2, 3, n, n, device="cuda")
    (out,) = causal_softmax(n).execute([x])
    mask = torch.ones(n, n, dtype=torch.bool, device="cuda").tril()
    expected = torch.softmax(x.masked_fill(~mask, float("-inf")), dim=-1)
    torch.testing.assert_close(out, expected)


# --- a reduction of one element per row beside a row reduction ---------------
def cross_entropy(rows, classes):
    """logsumexp(x) - x[target]: the picked logit is summed over its size-1
    axis, a reduction of one element per row in a persistent kernel."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[rows, classes], contiguity=[True, True], dtype=DataType.Float)
        target = fd.define_tensor(shape=[rows, 1], contiguity=[True, None], dtype=DataType.Int)
        top = fd.ops.max(x, dims=[1])
        top_b = fd.ops.broadcast_in_dim(top, shape=[rows, classes], broadcast_dims=[0])
        total = fd.ops.sum(fd.ops.exp(fd.ops.sub(x, top_b)), dims=[1])
        picked = fd.ops.sum(fd.ops.take_along_axis(x, target, 1), dims=[1])
        fd.add_output(fd.ops.sub(fd.ops.add(fd.ops.log(total), top), picked))
    return fd


def test_a_one_element_reduction_shares_a_persistent_kernel():
    fd = cross_entropy(256, 1024)
    inputs = [torch.randn(256, 1024), torch.randint(0, 1024, (256, 1))]
    assert "InnerPersistent" in [name for name, _ in compiled_segments(fd, inputs)]


@requires_gpu
def test_cross_entropy_matches_torch():
    x = torch.randn(256, 1024, device="cuda")
    target = torch.randint(0, 1024, (256, 1), device="cuda")
    (out,) = cross_entropy(256, 1024).execute([x, target])
    expected = torch.nn.functional.cross_entropy(x, target[:, 0], reduction="none")
    torch.testing.assert_close(out, expected)


# --- a padded thread axis of a constant extent -------------------------------
def log_softmax_rows(rows, classes):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[rows, classes], contiguity=[True, True], dtype=DataType.Float)
        top = fd.ops.broadcast_in_dim(fd.ops.max(x, dims=[1]), shape=[rows, classes], broadcast_dims=[0])
        shifted = fd.ops.sub(x, top)
        total = fd.ops.sum(fd.ops.exp(shifted), dims=[1])
        total = fd.ops.broadcast_in_dim(fd.ops.log(total), shape=[rows, classes], broadcast_dims=[0])
        fd.add_output(fd.ops.sub(shifted, total))
    return fd


def test_launch_bounds_cover_the_padded_threads():
    # 32064 classes in vectors of 4 and batches of 8: 1002 threads, which
    # launch as 1024 (a multiple of 32); bounds of 1002 made the launch fail.
    fd = log_softmax_rows(256, 32064)
    segments = dict(compiled_segments(fd, [torch.randn(256, 32064)]))
    code = segments["InnerPersistent"]
    assert "__launch_bounds__(1002" not in code
    assert "__launch_bounds__(1024" in code


@requires_gpu
def test_log_softmax_of_32064_classes_matches_torch():
    x = torch.randn(256, 32064, device="cuda")
    (out,) = log_softmax_rows(256, 32064).execute([x])
    torch.testing.assert_close(out, torch.log_softmax(x, dim=1))


# --- full reductions to 0-dim outputs in a persistent kernel -----------------
def masked_mean():
    """torch.compile's nanoGPT loss: sum(where(valid, -x, 0)) / sum(valid)."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        valid = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Bool)
        zero = fd.ops.broadcast(fd.ops.full(shape=[], fill_value=fd.define_scalar(0), dtype=DataType.Float), is_broadcast_dim=[True])
        count = fd.ops.cast(fd.ops.sum(fd.ops.cast(valid, dtype=DataType.Int), dims=[0]), dtype=DataType.Float)
        total = fd.ops.sum(fd.ops.where(valid, fd.ops.neg(x), zero), dims=[0])
        fd.add_output(count)
        fd.add_output(fd.ops.div(total, count))
    return fd


def test_full_reductions_to_scalars_compile():
    names = [n for n, _ in compiled_segments(masked_mean(), [torch.randn(256), torch.rand(256) > 0.5])]
    assert names == ["InnerPersistent"]


@requires_gpu
def test_masked_mean_matches_torch():
    x = torch.randn(256, device="cuda")
    valid = torch.rand(256, device="cuda") > 0.5
    count, mean = masked_mean().execute([x, valid])
    torch.testing.assert_close(count, valid.sum().float())
    torch.testing.assert_close(mean, (-x * valid).sum() / valid.sum())


# --- two parts of a fusion that share no axis --------------------------------
def two_rotary_products():
    """q * cos and k * cos with q and k of unrelated (symbolic) sizes, in a
    permuted layout: the schedule of one output reaches the other only
    through cos's broadcast."""
    with FusionDefinition() as fd:
        q = fd.define_tensor(shape=[-1] * 4, contiguity=[True] * 4, dtype=DataType.BFloat16, stride_order=[3, 1, 2, 0])
        cos = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        k = fd.define_tensor(shape=[-1] * 4, contiguity=[True] * 4, dtype=DataType.BFloat16, stride_order=[3, 1, 2, 0])
        fd.add_output(fd.ops.mul(q, fd.ops.broadcast(cos, is_broadcast_dim=[True, True, False, False])), stride_order=[3, 1, 2, 0])
        fd.add_output(fd.ops.mul(k, fd.ops.broadcast(cos, is_broadcast_dim=[True, True, False, False])), stride_order=[3, 1, 2, 0])
    return fd


def rotary_inputs(device):
    def heads():
        return torch.randn(2, 128, 8, 32, device=device, dtype=torch.bfloat16).transpose(1, 2)

    return [heads(), torch.randn(128, 32, device=device, dtype=torch.bfloat16), heads()]


def test_outputs_that_share_no_axis_are_separate_kernels():
    names = [n for n, _ in compiled_segments(two_rotary_products(), rotary_inputs("cpu"))]
    assert names == ["PointWise", "PointWise"]


@requires_gpu
def test_two_rotary_products_match_torch():
    q, cos, k = rotary_inputs("cuda")
    out_q, out_k = two_rotary_products().execute([q, cos, k])
    torch.testing.assert_close(out_q, q * cos)
    torch.testing.assert_close(out_k, k * cos)


# --- reductions of a 0-dim tensor --------------------------------------------
def softmax_of_a_scalar(dims):
    """Thunder's softmax of a 0-dim tensor (its test_ops samples have
    one): max and sum over axis 0 of a 0-dim tensor, as torch allows."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float)
        e = fd.ops.exp(fd.ops.sub(x, fd.ops.max(x, dims=dims)))
        fd.add_output(fd.ops.div(e, fd.ops.sum(e, dims=dims)))
    return fd


def test_a_0_dim_tensor_reduces_to_itself_over_axis_0_or_none():
    for dims in ([0], [-1], []):
        names = [n for n, _ in compiled_segments(softmax_of_a_scalar(dims), [torch.tensor(0.5)])]
        assert names, dims


@requires_gpu
def test_softmax_of_a_0_dim_tensor_matches_torch():
    x = torch.tensor(0.5, device="cuda")
    (out,) = softmax_of_a_scalar([0]).execute([x])
    torch.testing.assert_close(out, torch.softmax(x, dim=0))


# --- rank 0 through reshape and squeeze (Thunder's getitem and logsumexp) -----
def reshapes_through_rank_0():
    """x[None, ...] of a 0-dim tensor, and back: Thunder's getitem and the
    squeeze of logsumexp's keepdim result."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float)
        up = fd.ops.reshape(x, [1, -1])
        down = fd.ops.squeeze(fd.ops.exp(up), [0, 1])
        fd.add_output(up)
        fd.add_output(down)
        fd.add_output(fd.ops.reshape(down, []))
    return fd


def test_a_0_dim_tensor_reshapes_to_size_1_axes_and_squeezes_back():
    fd = reshapes_through_rank_0()
    assert compiled_segments(fd, [torch.tensor(0.5)])
    text = fd.fusion_ir()
    assert "broadcast(T0_g_float[]" in text  # rank 0 -> [1, 1]: broadcast axes


@requires_gpu
def test_reshapes_through_rank_0_match_torch():
    for value in (0.5, -0.0, float("nan")):
        x = torch.tensor(value, device="cuda")
        up, down, same = reshapes_through_rank_0().execute([x])
        assert up.shape == (1, 1) and down.shape == () and same.shape == ()
        torch.testing.assert_close(up, x.reshape(1, 1), equal_nan=True)
        torch.testing.assert_close(down, x.exp(), equal_nan=True)
        torch.testing.assert_close(same, x.exp(), equal_nan=True)


def test_rank_0_reshapes_name_what_they_need():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float)
        with pytest.raises(FuserError, match="one element reshapes only to sizes 1"):
            fd.ops.reshape(x, [fd.define_scalar(dtype=DataType.Int)])
        y = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        with pytest.raises(FuserError, match="needs every axis of size 1"):
            fd.ops.reshape(y, [])
        fd.add_output(x)


# --- expanding a size-1 axis that a reshape made (Thunder's cross_entropy) ----
def expanded_class_weight():
    """cross_entropy's weight [C] reshaped to [C, 1, 1], broadcast to
    [1, C, 1, 1] and expanded to the input's [N, C, H, W]: the reshape's
    size-1 axes are not broadcast axes."""
    with FusionDefinition() as fd:
        w = fd.define_tensor(shape=[4], contiguity=[True], dtype=DataType.Float)
        r = fd.ops.reshape(w, [4, 1, 1])
        b = fd.ops.broadcast_in_dim(r, shape=[1, 4, 1, 1], broadcast_dims=[1, 2, 3])
        fd.add_output(fd.ops.broadcast_in_dim(b, shape=[3, 4, 2, 3], broadcast_dims=[0, 1, 2, 3]))
    return fd


def test_size_1_axes_of_a_reshape_expand_like_broadcast_axes():
    fd = expanded_class_weight()
    assert compiled_segments(fd, [torch.randn(4)])


@requires_gpu
def test_expanded_class_weight_matches_torch():
    w = torch.randn(4, device="cuda")
    (out,) = expanded_class_weight().execute([w])
    torch.testing.assert_close(out, w.reshape(1, 4, 1, 1).expand(3, 4, 2, 3))


# --- an RMS norm backward of constant shapes (Thunder's Llama block) ---------
def rms_norm_backward(batch, seq, hidden):
    """Thunder's RMSNorm backward: dx through two sums over the hidden axis
    (the second over the size-1 axis of a keepdim result), dw as a sum over
    the rows, and dx reshaped to [rows, hidden]. Declared with constant
    sizes, as Thunder declares them."""
    shape = [batch, seq, hidden]
    with FusionDefinition() as fd:
        w = fd.define_tensor(shape=[hidden], contiguity=[True], dtype=DataType.Float)
        dy = fd.define_tensor(shape=shape, contiguity=[True] * 3, dtype=DataType.Float)
        x = fd.define_tensor(shape=shape, contiguity=[True] * 3, dtype=DataType.Float)
        rstd = fd.define_tensor(shape=[batch, seq, 1], contiguity=[True, True, None], dtype=DataType.Float)
        g = fd.ops.mul(fd.ops.broadcast_in_dim(w, shape=shape, broadcast_dims=[2]), dy)
        dot = fd.ops.sum(fd.ops.mul(x, g), dims=[2])
        dot = fd.ops.broadcast_in_dim(dot, shape=[batch, seq, 1], broadcast_dims=[0, 1])
        rstd3 = fd.ops.pow(rstd, fd.define_scalar(3.0, dtype=DataType.Double))
        c = fd.ops.mul(fd.ops.mul(fd.define_scalar(-0.5, dtype=DataType.Double), dot), rstd3)
        c = fd.ops.mul(c, fd.ops.reciprocal(fd.define_scalar(float(hidden), dtype=DataType.Double)))
        c = fd.ops.broadcast_in_dim(fd.ops.sum(c, dims=[2]), shape=[batch, seq, 1], broadcast_dims=[0, 1])
        rstd_b = fd.ops.broadcast_in_dim(rstd, shape=shape, broadcast_dims=[0, 1, 2])
        xc = fd.ops.mul(x, fd.ops.broadcast_in_dim(c, shape=shape, broadcast_dims=[0, 1, 2]))
        dx = fd.ops.add(fd.ops.add(fd.ops.mul(rstd_b, g), xc), xc)
        dw = fd.ops.sum(fd.ops.mul(fd.ops.mul(x, rstd_b), dy), dims=[0, 1])
        fd.add_output(dx)
        fd.add_output(fd.ops.reshape(dx, new_shape=[batch * seq, hidden]))
        fd.add_output(dw)
    return fd


def test_rms_norm_backward_of_constant_shapes_is_one_inner_outer_kernel():
    # The column sum's producers read the rows' buffers inside the loop over
    # the rows; capped at its partial's position (constant extents only),
    # they left that loop and lowering failed. The reshape is a view.
    fd = rms_norm_backward(2, 128, 256)
    inputs = [torch.randn(256), torch.randn(2, 128, 256), torch.randn(2, 128, 256), torch.rand(2, 128, 1)]
    segments = compiled_segments(fd, inputs)
    assert [name for name, _ in segments] == ["InnerOuterPersistent", "ExprEval"]
    assert "gridReduceGroupResident" in segments[0][1]


@requires_gpu
def test_rms_norm_backward_matches_torch():
    batch, seq, hidden, eps = 2, 128, 256, 1e-6
    w = torch.randn(hidden, device="cuda")
    dy = torch.randn(batch, seq, hidden, device="cuda")
    x = torch.randn(batch, seq, hidden, device="cuda")
    rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    dx, dx_rows, dw = rms_norm_backward(batch, seq, hidden).execute([w, dy, x, rstd])
    x_ref = x.clone().requires_grad_()
    w_ref = w.clone().requires_grad_()
    torch.nn.functional.rms_norm(x_ref, (hidden,), w_ref, eps).backward(dy)
    torch.testing.assert_close(dx, x_ref.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(dx_rows, x_ref.grad.reshape(batch * seq, hidden), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(dw, w_ref.grad, rtol=1e-4, atol=1e-4)


# --- reshapes of empty tensors (Thunder's logsumexp of a [1, 0, 1, 1]) -----
def reshapes_of_an_empty_tensor():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[1, 0, 1, 1], contiguity=[None, True, None, None], dtype=DataType.Float)
        fd.add_output(fd.ops.reshape(x, [0, 1]))
        fd.add_output(fd.ops.reshape(fd.ops.exp(x), [0]))
    return fd


def test_an_empty_tensor_reshapes_to_sizes_with_0():
    fd = reshapes_of_an_empty_tensor()
    fd._compile_off_device([torch.randn(1, 0, 1, 1)])
    with FusionDefinition() as bad:
        x = bad.define_tensor(shape=[1, 0, 1, 1], contiguity=[None, True, None, None], dtype=DataType.Float)
        with pytest.raises(FuserError, match="-1 cannot be inferred beside a size 0"):
            bad.ops.reshape(x, [0, -1])
        bad.add_output(x)


@requires_gpu
def test_reshapes_of_an_empty_tensor_match_torch():
    x = torch.randn(1, 0, 1, 1, device="cuda")
    a, b = reshapes_of_an_empty_tensor().execute([x])
    assert a.shape == (0, 1) and b.shape == (0,)


# --- a layer norm backward summing keepdim results again (nanoGPT) -----------
def layer_norm_backward(batch, seq, hidden):
    """Thunder's layer norm backward in nanoGPT, the input gradient: the
    sums of dy * w * (x - mean) and of -dy * w * rstd over the hidden axis,
    each broadcast to [batch, seq, 1] and summed again over that size-1
    axis (a reduction of one element per row; the first after a product
    with rstd ** 3, where rstd's size-1 axis meets the row)."""
    shape = [batch, seq, hidden]
    rows = [batch, seq, 1]
    with FusionDefinition() as fd:

        def scalar(value):
            return fd.define_scalar(value, dtype=DataType.Double)

        def keepdim(t):
            return fd.ops.broadcast_in_dim(t, shape=rows, broadcast_dims=[0, 1])

        def along_rows(t):
            return fd.ops.broadcast_in_dim(t, shape=shape, broadcast_dims=[0, 1, 2])

        mean = fd.define_tensor(shape=[batch, seq], contiguity=[True, True], dtype=DataType.Float)
        w = fd.define_tensor(shape=[hidden], contiguity=[True], dtype=DataType.Float)
        dy = fd.define_tensor(shape=shape, contiguity=[True] * 3, dtype=DataType.Float)
        x = fd.define_tensor(shape=shape, contiguity=[True] * 3, dtype=DataType.Float)
        rstd = fd.define_tensor(shape=rows, contiguity=[True, True, None], dtype=DataType.Float)
        g = fd.ops.mul(fd.ops.broadcast_in_dim(w, shape=shape, broadcast_dims=[2]), dy)
        xc = fd.ops.sub(x, along_rows(keepdim(mean)))
        gr = fd.ops.mul(along_rows(rstd), g)
        dot = keepdim(fd.ops.sum(fd.ops.mul(xc, g), dims=[2]))
        dvar = fd.ops.mul(fd.ops.mul(scalar(-0.5), dot), fd.ops.pow(rstd, scalar(3.0)))
        dmean = keepdim(fd.ops.sum(fd.ops.neg(gr), dims=[2]))
        dvar = along_rows(keepdim(fd.ops.sum(dvar, dims=[2])))
        dmean = along_rows(keepdim(fd.ops.sum(dmean, dims=[2])))
        dx_var = fd.ops.mul(fd.ops.mul(fd.ops.mul(scalar(2.0), dvar), xc), scalar(1.0 / hidden))
        fd.add_output(fd.ops.add(gr, fd.ops.add(fd.ops.mul(scalar(1.0 / hidden), dmean), dx_var)))
    return fd


def test_one_element_reductions_of_a_layer_norm_backward_are_added_in_registers():
    # Joined to the row through rstd's broadcast axis, the sum of one
    # element took the row's splits (a loop over TIDx of one thread) and
    # lowering found no index for it. The statistics' kernel reduces the two
    # rows across the threads, nothing else; dx, which reads the statistics
    # expanded along the row, is a pointwise kernel after it.
    fd = layer_norm_backward(4, 64, 128)
    inputs = [torch.randn(4, 64), torch.randn(128), torch.randn(4, 64, 128), torch.randn(4, 64, 128), torch.rand(4, 64, 1)]
    segments = compiled_segments(fd, inputs)
    assert [name for name, _ in segments] == ["InnerPersistent", "PointWise"]
    assert segments[0][1].split("__global__")[1].count("Reduce<") == 2


@requires_gpu
def test_layer_norm_backward_matches_torch():
    batch, seq, hidden, eps = 4, 64, 128, 1e-5
    x = torch.randn(batch, seq, hidden, device="cuda")
    w = torch.randn(hidden, device="cuda")
    dy = torch.randn(batch, seq, hidden, device="cuda")
    mean = x.mean(-1)
    rstd = torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + eps)
    (dx,) = layer_norm_backward(batch, seq, hidden).execute([mean, w, dy, x, rstd])
    x_ref = x.clone().requires_grad_()
    torch.nn.functional.layer_norm(x_ref, (hidden,), w, None, eps).backward(dy)
    torch.testing.assert_close(dx, x_ref.grad, rtol=1e-4, atol=1e-4)


# --- Llama's rotary-embedding backward and its q, k, v gradients ------------
def rope_backward():
    """Thunder's backward of litgpt's apply_rope for q and k (sin and cos
    [128, 32], head size 32 split in halves), the q, k, v gradients
    permuted back to [B, T, H * D] and concatenated into the fused qkv
    gradient; q, k and v come in the [B, T, H, D] layout of the forward's
    views (stride order [3, 1, 2, 0])."""
    with FusionDefinition() as fd:
        sin = fd.define_tensor(shape=[128, 32], contiguity=[True, True], dtype=DataType.Float)
        dq = fd.define_tensor(shape=[2, 8, 128, 32], contiguity=[True] * 4, dtype=DataType.Float, stride_order=[3, 1, 2, 0])
        cos = fd.define_tensor(shape=[128, 32], contiguity=[True, True], dtype=DataType.Float)
        dk = fd.define_tensor(shape=[2, 8, 128, 32], contiguity=[True] * 4, dtype=DataType.Float, stride_order=[3, 1, 2, 0])
        dv = fd.define_tensor(shape=[2, 8, 128, 32], contiguity=[True] * 4, dtype=DataType.Float, stride_order=[3, 1, 2, 0])
        zero = fd.define_scalar(0.0, dtype=DataType.Double)

        def table(t):
            t = fd.ops.reshape(fd.ops.broadcast_in_dim(t, shape=[1, 128, 32], broadcast_dims=[1, 2]), new_shape=[1, 1, 128, 32])
            return fd.ops.broadcast_in_dim(t, shape=[2, 8, 128, 32], broadcast_dims=[0, 1, 2, 3])

        def half(t, lo, hi):
            return fd.ops.slice(t, start_indices=[0, 0, 0, lo], end_indices=[2, 8, 128, hi], strides=[1, 1, 1, 1])

        c, s = table(cos), table(sin)
        empty = fd.ops.pad(fd.ops.full(shape=[2, 8, 128, 0], fill_value=fd.define_scalar(0, dtype=DataType.Int), dtype=DataType.Float), pad_widths=[0, 32, 0, 0, 0, 0, 0, 0], value=zero)
        grads = []
        for g in (dq, dk):
            g = half(g, 0, 32)
            by_sin = fd.ops.mul(s, g)
            rotated = fd.ops.add(fd.ops.pad(fd.ops.neg(half(by_sin, 0, 16)), pad_widths=[16, 0, 0, 0, 0, 0, 0, 0], value=zero),
                                 fd.ops.pad(half(by_sin, 16, 32), pad_widths=[0, 16, 0, 0, 0, 0, 0, 0], value=zero))
            grads.append(fd.ops.add(empty, fd.ops.add(fd.ops.mul(c, g), rotated)))
        flat = [fd.ops.reshape(fd.ops.permute(t, dims=[0, 2, 1, 3]), new_shape=[2, 128, 256]) for t in (grads[1], grads[0], dv)]
        qkv = fd.ops.cat(flat, dim=-1)
        fd.add_output(qkv)
        fd.add_output(fd.ops.reshape(qkv, new_shape=[256, 768]))
    return fd


def rope_backward_inputs(device):
    def bhtd():
        return torch.randn(2, 128, 8, 32, device=device).transpose(1, 2)  # stride order [3, 1, 2, 0]

    return [torch.randn(128, 32, device=device), bhtd(), torch.randn(128, 32, device=device), bhtd(), bhtd()]


def rope_backward_reference(sin, dq, cos, dk, dv):
    def one(g):
        by_sin = sin * g
        rotated = torch.nn.functional.pad(-by_sin[..., :16], (16, 0)) + torch.nn.functional.pad(by_sin[..., 16:], (0, 16))
        return cos * g + rotated

    flat = [t.permute(0, 2, 1, 3).reshape(2, 128, 256) for t in (one(dk), one(dq), dv)]
    qkv = torch.cat(flat, dim=-1)
    return qkv, qkv.reshape(256, 768)


def test_rope_backward_compiles():
    assert compiled_segments(rope_backward(), rope_backward_inputs("cpu"))


# Regression: segment 14 of 19, the kernel that pads and adds the halves,
# read the row before each left-padded input (CUDA's unsigned launch
# variables made the pad's bound test unsigned; doc/design.md §5).
@requires_gpu
def test_rope_backward_matches_torch():
    inputs = rope_backward_inputs("cuda")
    qkv, flat = rope_backward().execute(inputs)
    expected_qkv, expected_flat = rope_backward_reference(*inputs)
    torch.testing.assert_close(qkv, expected_qkv)
    torch.testing.assert_close(flat, expected_flat)


def test_the_rope_backward_reference_is_the_derivative_of_rope():
    # The reference above is the gradient of litgpt's apply_rope (checked
    # by autograd on the CPU), so the GPU test compares with the truth.
    sin, dq, cos, dk, dv = rope_backward_inputs("cpu")
    x = torch.randn(2, 8, 128, 32, requires_grad=True)
    rope = x * cos + torch.cat((-x[..., 16:], x[..., :16]), dim=-1) * sin
    rope.backward(dq)
    qkv, _ = rope_backward_reference(sin, dq, cos, dk, dv)
    torch.testing.assert_close(qkv[..., 256:512].reshape(2, 128, 8, 32).permute(0, 2, 1, 3), x.grad)
