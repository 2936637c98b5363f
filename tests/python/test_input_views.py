"""Outputs that are views of a fusion's inputs (doc/segmentation.md §8): a
head split (slice, reshape, permute), a squeeze, an expand and a chunk come
back as views of the input, as PyTorch returns them, and launch no kernel
(counted with torch.profiler on the GPU); without a GPU, the segmentation
holds one ATen segment and no kernel."""

import pytest
import torch

from fuser import DataType, FusionDefinition

from helpers import contiguous_tensor, requires_gpu

BATCH, SEQ, HEADS, HEAD_DIM = 2, 16, 4, 8
EMBED = HEADS * HEAD_DIM


def head_split():
    with FusionDefinition() as fd:
        qkv = contiguous_tensor(fd, 3, DataType.BFloat16)
        for part in range(3):
            t = fd.ops.slice(qkv, [0, 0, part * EMBED], [BATCH, SEQ, (part + 1) * EMBED], [1, 1, 1])
            t = fd.ops.reshape(t, [BATCH, SEQ, HEADS, HEAD_DIM])
            fd.add_output(fd.ops.permute(t, [0, 2, 1, 3]))
    return fd


def torch_head_split(qkv):
    return [t.view(BATCH, SEQ, HEADS, HEAD_DIM).permute(0, 2, 1, 3) for t in qkv.chunk(3, dim=-1)]


def squeeze_and_expand():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, 1, -1], contiguity=[True, None, True])
        fd.add_output(fd.ops.squeeze(x, [1]))
        fd.add_output(fd.ops.expand(x, [x.shape()[0], 5, x.shape()[2]]))
    return fd


def kernels_launched(fn):
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]


def test_head_split_is_one_segment_without_a_kernel():
    qkv = torch.empty(BATCH, SEQ, 3 * EMBED, dtype=torch.bfloat16, device="meta")
    segments = head_split()._compile_off_device([qkv])
    assert [(scheduler, code, error) for scheduler, code, error in segments] == [
        ("ExprEval", "", "")
    ]


def test_a_view_a_computation_reads_is_written_by_its_kernel():
    with FusionDefinition() as fd:
        x = contiguous_tensor(fd, 2)
        t = fd.ops.permute(x, [1, 0])
        fd.add_output(t)
        fd.add_output(fd.ops.relu(t))
    segments = fd._compile_off_device([torch.empty(8, 16, device="meta")])
    assert [scheduler for scheduler, _, _ in segments] == ["PointWise"]


def test_evaluate_with_aten_on_the_cpu():
    qkv = torch.randn(BATCH, SEQ, 3 * EMBED).to(torch.bfloat16)
    for got, expected in zip(head_split()._evaluate_with_aten([qkv]), torch_head_split(qkv)):
        assert torch.equal(got, expected)


@requires_gpu
def test_head_split_returns_views_and_launches_nothing():
    fd = head_split()
    qkv = torch.randn(BATCH, SEQ, 3 * EMBED, dtype=torch.bfloat16, device="cuda")
    fd.execute([qkv])  # the cache miss
    outputs = []
    launched = kernels_launched(lambda: outputs.extend(fd.execute([qkv])))
    assert launched == []
    for got, expected in zip(outputs, torch_head_split(qkv)):
        assert got.untyped_storage().data_ptr() == qkv.untyped_storage().data_ptr()
        assert got.stride() == expected.stride()
        assert torch.equal(got, expected)
    assert fd.last_scheduler_types() == ["ExprEval"]


@requires_gpu
def test_squeeze_and_expand_are_views():
    fd = squeeze_and_expand()
    x = torch.randn(3, 1, 7, device="cuda")
    fd.execute([x])
    outputs = []
    assert kernels_launched(lambda: outputs.extend(fd.execute([x]))) == []
    squeezed, expanded = outputs
    assert torch.equal(squeezed, x.squeeze(1))
    assert torch.equal(expanded, x.expand(3, 5, 7))
    assert expanded.stride()[1] == 0
    for out in outputs:
        assert out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


@requires_gpu
@pytest.mark.parametrize("stride_order", [[0, 1], [1, 0]])
def test_an_output_given_a_layout_is_written(stride_order):
    with FusionDefinition() as fd:
        x = contiguous_tensor(fd, 2)
        fd.add_output(fd.ops.permute(x, [1, 0]), stride_order=stride_order)
    x = torch.randn(8, 16, device="cuda")
    (out,) = fd.execute([x])
    assert out.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert torch.equal(out, x.t())
