"""Fusions that the C++ side gets wrong today, found through the Python
frontend. Each is expected to fail (xfail) with the reason given; when one
starts to pass, the bug is fixed: remove its marker (or fold the test into
test_execute.py)."""

import pytest
import torch

from fuser import FusionDefinition

from helpers import requires_gpu

pytestmark = requires_gpu

VECTORIZE_ODD_STRIDES = (
    "pointwise scheduler: vectorizes accesses of tensors whose allocation "
    "strides are not multiples of the vector width, which the runtime then "
    "refuses ('needs every allocation stride to be a multiple of N')"
)


@pytest.mark.xfail(reason=VECTORIZE_ODD_STRIDES, strict=False)
@pytest.mark.parametrize("shape", [(4, 5), (8, 257), (6, 10)])
def test_contiguous_2d_with_odd_rows(shape):
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.relu(t0))
    x = torch.randn(*shape, device="cuda")
    (out,) = fd.execute([x])
    torch.testing.assert_close(out, x.relu())


@pytest.mark.xfail(reason=VECTORIZE_ODD_STRIDES, strict=False)
def test_channels_last_with_odd_sizes():
    x = torch.randn(2, 3, 5, 7, device="cuda").to(memory_format=torch.channels_last)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.mul(fd.from_pytorch(x), 2.0))
    (out,) = fd.execute([x])
    torch.testing.assert_close(out, x * 2.0)


@pytest.mark.xfail(
    reason="pointwise scheduler / inlining: a comparison feeding both a "
    "logical op and a where is inlined too deeply ('cannot run inside the "
    "loops it is computed in')",
    strict=False,
)
def test_mask_used_by_logical_and_where():
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
