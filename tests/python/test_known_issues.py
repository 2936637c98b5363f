"""Fusions the C++ side got wrong, found through the Python frontend; all
fixed, kept as regression tests."""

import pytest
import torch

from fuser import FusionDefinition

from helpers import requires_gpu

pytestmark = requires_gpu

# Fixed: the pointwise scheduler vectorized tensors whose rows are not a
# multiple of the vector width and the run-time stride check refused them
# (now only strides outside the contiguous inner axes are checked).


@pytest.mark.parametrize("shape", [(4, 5), (8, 257), (6, 10)])
def test_contiguous_2d_with_odd_rows(shape):
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.relu(t0))
    x = torch.randn(*shape, device="cuda")
    (out,) = fd.execute([x])
    torch.testing.assert_close(out, x.relu())


def test_channels_last_with_odd_sizes():
    x = torch.randn(2, 3, 5, 7, device="cuda").to(memory_format=torch.channels_last)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.mul(fd.from_pytorch(x), 2.0))
    (out,) = fd.execute([x])
    torch.testing.assert_close(out, x * 2.0)


def test_mask_used_by_logical_and_where():
    # Fixed: producers are no longer inlined deeper than their inlined
    # consumers (csrc/transform/inlining.cpp); confirmed on an H200.
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True])
        t1 = fd.define_tensor(shape=[-1], contiguity=[True])
        mask = fd.ops.logical_or(fd.ops.gt(t0, 0.5), fd.ops.logical_not(fd.ops.lt(t1, 0.0)))
        fd.add_output(fd.ops.logical_and(mask, fd.ops.ne(t0, t1)))
        fd.add_output(fd.ops.where(mask, t0, 0.0))
    a, b = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    out0, out1 = fd.execute([a, b])
    mask = (a > 0.5) | ~(b < 0.0)
    assert torch.equal(out0, mask & (a != b))
    torch.testing.assert_close(out1, torch.where(mask, a, 0.0))


# Fixed: an expand written beside an output no op joins it to went into
# one pointwise kernel that failed to lower; the segmenter now writes each
# in a kernel of its own (doc/ops.md "Expand").
def test_broadcast_in_dim_output_beside_another():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=True)
        w = fd.define_tensor(shape=[-1], contiguity=True)
        fd.add_output(fd.ops.add(x, x))
        fd.add_output(fd.ops.broadcast_in_dim(w, x.shape(), [1]))
    tx = torch.randn(64, 1000, device="cuda")
    tw = torch.randn(1000, device="cuda")
    out, expanded = fd.execute([tx, tw])
    torch.testing.assert_close(out, tx + tx)
    torch.testing.assert_close(expanded, tw.expand(64, 1000))


# Fixed: a softmax that also wrote its row maxima expanded to the row's
# shape failed to lower; the [rows, 1] maxima written before the row
# failed too (csrc/device_lower/pass/loop_nests.cpp).
def test_softmax_writing_its_row_maxima():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=True)
        row_max = fd.ops.max(x, [1])
        keepdim = fd.ops.broadcast_in_dim(row_max, [x.size(0), 1], [0])
        expanded = fd.ops.broadcast_in_dim(row_max, x.shape(), [0])
        e = fd.ops.exp(fd.ops.sub(x, expanded))
        fd.add_output(keepdim)
        fd.add_output(fd.ops.div(e, fd.ops.broadcast_in_dim(fd.ops.sum(e, [1]), x.shape(), [0])))
        fd.add_output(expanded)
    t = torch.randn(256, 1000, device="cuda")
    keepdim_out, softmax_out, expanded_out = fd.execute([t])
    m = t.amax(1, keepdim=True)
    torch.testing.assert_close(keepdim_out, m)
    torch.testing.assert_close(softmax_out, torch.softmax(t, 1))
    torch.testing.assert_close(expanded_out, m.expand(256, 1000))
