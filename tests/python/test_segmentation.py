"""Fusions no scheduler takes whole run as segments (doc/segmentation.md):
the outputs match torch and each segment has the scheduler expected."""

import torch

from fuser import DataType, FusionDefinition

from helpers import requires_gpu

pytestmark = requires_gpu


def cuda(*shape):
    return torch.randn(*shape, device="cuda")


def test_reductions_along_two_axes_are_two_kernels():
    with FusionDefinition() as fd:
        # [L, M, N]: sums over N and L, which no one kernel takes (M is
        # kept by both; the inner-outer scheduler takes [M, N]).
        x = fd.define_tensor(shape=[-1, -1, -1], contiguity=True)
        rows = fd.ops.broadcast_in_dim(fd.ops.sum(x, [2]), x.shape(), [0, 1])
        fd.add_output(fd.ops.sum(fd.ops.mul(x, rows), [0]))
    # Uniform inputs: with normal ones the result cancels to near zero,
    # below the rounding of its terms.
    t = torch.rand(3, 100, 500, device="cuda")
    (out,) = fd.execute([t])
    torch.testing.assert_close(out, (t * t.sum(2, keepdim=True)).sum(0), rtol=1e-4, atol=1e-3)
    assert fd.last_scheduler_types() == ["Reduction", "Reduction"]


def test_softmax_whose_row_does_not_fit_is_segmented():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=True)
        fd.add_output(fd.ops.softmax(x, 1))
    big = cuda(4, 1 << 18)
    (out,) = fd.execute([big])
    torch.testing.assert_close(out, torch.softmax(big, 1))
    assert fd.last_scheduler_types() == ["Reduction", "Reduction", "PointWise"]
    small = cuda(4, 1000)
    (out,) = fd.execute([small])
    torch.testing.assert_close(out, torch.softmax(small, 1))
    assert fd.last_scheduler_types() == ["InnerPersistent"]


def test_reshape_of_unknown_sizes_between_reductions():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1, -1], contiguity=True)
        s = fd.ops.sum(x, [2])
        r = fd.ops.reshape(s, [x.size(0), -1, 8])
        fd.add_output(fd.ops.sum(r, [1]))
    t = cuda(6, 64, 40)
    (out,) = fd.execute([t])
    torch.testing.assert_close(out, t.sum(2).reshape(6, -1, 8).sum(1), rtol=1e-4, atol=1e-3)
    assert fd.last_scheduler_types() == ["Reduction", "ExprEval", "Reduction"]
