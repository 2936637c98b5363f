"""Checking a definition's values without a GPU (README.md, "Debug dumps"):
ATen op by op, after the rewrites before segmentation, and segment by
segment as the runtime hands values on."""

import torch

from fuser import DataType, FusionDefinition


def test_segments_evaluated_with_aten_match_the_definition_on_the_cpu():
    # Two reductions along different axes of one product of a permute and
    # a slice: several segments, the views between them. Op by op, after
    # the rewrites before segmentation, and segment by segment as the
    # runtime hands values on, ATen gives PyTorch's values without a GPU.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t = fd.ops.permute(fd.ops.slice(x, [0, 2], [8, 34]), [1, 0])
        y = fd.ops.mul(t, t)
        fd.add_output(fd.ops.sum(y, [0]))
        fd.add_output(fd.ops.sum(y, [1]))
    x = torch.randn(8, 40)
    t = x[:, 2:34].t()
    expected = [(t * t).sum(0), (t * t).sum(1)]
    segments = [s for s, _, _ in fd._compile_off_device([x])]
    assert len(segments) > 1, segments
    for got in (
        fd._evaluate_with_aten([x]),
        fd._evaluate_with_aten([x], rewritten=True),
        fd._evaluate_segments_with_aten([x]),
    ):
        for g, e in zip(got, expected):
            torch.testing.assert_close(g, e)
