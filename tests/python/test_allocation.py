"""The allocation domain from Python, with the seed scenario: an input [6]
whose allocation is its logical axis split by 2 ([6/2, 2]) while its loop
domain stays [6]; the output is set(input)."""

import pytest
import torch

from fuser import DataType, FuserError, FusionDefinition, IterDomain

from helpers import assert_round_trip, requires_gpu


def define_seed():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[6], contiguity=[True], dtype=DataType.Float)
        t1 = fd.ops.set(t0)
        fd.add_output(t1)
        outer, inner = fd.split(t0.axis(0), 2, inner_split=True)
        t0.set_allocation_domain([outer, inner], [True, True])
    return fd, t0, t1, outer, inner


def test_seed_domains():
    fd, t0, t1, outer, inner = define_seed()
    (logical,) = t0.logical_domain()
    assert isinstance(outer, IterDomain)
    assert [i.extent().value() for i in (logical, outer, inner)] == [6, 3, 2]
    assert t0.has_allocation()
    assert t0.allocation_domain() == [outer, inner]
    assert t0.domain().allocation() == [outer, inner]
    assert t0.contiguity() == [True, True]
    # The loop domain is untouched, and so is the output.
    assert t0.loop_domain() == [logical]
    assert t0.axis(0) == logical
    assert not t1.has_allocation()
    assert t1.loop_domain() == t1.logical_domain()
    ir = fd.fusion_ir()
    assert "allocation domain : [iS2{3}, iS3{2}]" in ir
    assert "Split: iS0{6} by factor 2 -> iS2{3}, iS3{2}" in ir
    assert "loop domain : [iS0{6}]" in ir
    domain = str(t0.domain())
    assert "logical domain : [iS0{6}]" in domain and "iS2{3}, iS3{2}" in domain


def test_seed_split_method_and_outer_split():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[6], contiguity=[True])
        fd.add_output(fd.ops.set(t0))
        outer, inner = t0.axis(0).split(2, inner_split=False)
        t0.set_allocation_domain([outer, inner], True)
    # An outer split: the factor is the outer extent.
    assert [outer.extent().value(), inner.extent().value()] == [2, 3]
    assert "fd.split(T0.logical_domain()[0], 2, inner_split=False)" in str(fd)


def test_seed_round_trip():
    fd, *_ = define_seed()
    assert_round_trip(fd)


def test_seed_rejects_a_non_divisible_input_on_cpu():
    fd, *_ = define_seed()
    # The [6] extent is a constant: any other size is refused.
    with pytest.raises(FuserError, match="Input 0"):
        fd.execute([torch.zeros(7)])


@requires_gpu
def test_seed_runs_on_gpu():
    fd, *_ = define_seed()
    x = torch.arange(6, dtype=torch.float32, device="cuda")
    (y,) = fd.execute([x])
    assert torch.equal(y, x)
    assert y.is_contiguous()
    assert "__global__" in fd.last_cuda_code()


@requires_gpu
def test_symbolic_split_allocation_runs_on_gpu():
    # [M, N] with allocation [M/2, 2, N], loop untouched (the single-device
    # form of a sharded [D, M/D, N] layout).
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        t1 = fd.ops.mul(t0, 3.0)
        fd.add_output(t1)
        m, n = t0.logical_domain()
        outer, inner = fd.split(m, 2)
        t0.set_allocation_domain([outer, inner, n], True)
    x = torch.randn(8, 12, device="cuda")
    (y,) = fd.execute([x])
    torch.testing.assert_close(y, x * 3.0)
    with pytest.raises(FuserError, match="divisible"):
        fd.execute([torch.randn(7, 12, device="cuda")])


@requires_gpu
def test_permuted_output_allocation_gives_permuted_strides():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        t1 = fd.ops.relu(t0)
        fd.add_output(t1)
        m, n = t1.logical_domain()
        t1.set_allocation_domain([n, m], True)
    x = torch.randn(8, 16, device="cuda")
    (y,) = fd.execute([x])
    torch.testing.assert_close(y, x.relu())
    assert y.stride() == (1, 8)
