"""print(fd) is Python that re-creates the definition: the printed text of
the re-created definition, and its fusion IR, are identical. CPU only."""

import pytest

from fuser import DataType, FusionDefinition, ParallelType

from helpers import assert_round_trip, round_trip


def test_printed_text():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[1, -1], contiguity=[None, True], dtype=DataType.Half)
        t2 = fd.ops.add(t0, t1)
        t3 = fd.ops.mul(t2, 2.0)
        fd.add_output(t3)
    assert str(fd) == (
        "from fuser import DataType, FusionDefinition, ParallelType\n"
        "\n"
        "\n"
        "def fuser_fusion(fd: FusionDefinition) -> None:\n"
        "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
        "dtype=DataType.Float)\n"
        "    T1 = fd.define_tensor(shape=[1, -1], contiguity=[None, True], "
        "dtype=DataType.Half)\n"
        "    T2 = fd.ops.add(T0, T1)\n"
        "    S0 = fd.define_scalar(2.0, dtype=DataType.Double)\n"
        "    T3 = fd.ops.mul(T2, S0)\n"
        "    fd.add_output(T3)\n"
        "\n"
        "\n"
        "with FusionDefinition() as fd:\n"
        "    fuser_fusion(fd)\n"
    )
    assert repr(fd) == str(fd)


def test_empty_definition_prints_pass():
    with FusionDefinition() as fd:
        pass
    assert "    pass\n" in str(fd)
    assert_round_trip(fd)


def define_pointwise(fd):
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
    s0 = fd.define_scalar(None, dtype=DataType.Double)
    t2 = fd.ops.cast(t1, DataType.Float)
    t3 = fd.ops.add(t0, t2)
    t4 = fd.ops.mul(t3, s0)
    t5 = fd.ops.where(fd.ops.gt(t4, 0.0), t4, fd.ops.mul(t4, 0.01))
    t6 = fd.ops.cast(fd.ops.relu(t5), dtype=DataType.Half)
    fd.add_output(t6)
    fd.add_output(fd.ops.logical_not(fd.ops.eq(t0, float("inf"))))


def define_reductions(fd):
    t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=True, dtype=DataType.Float)
    fd.add_output(fd.ops.sum(t0, dims=[1], keepdim=True))
    fd.add_output(fd.ops.mean(t0, [0, 2]))
    fd.add_output(fd.ops.max(t0, -1, dtype=DataType.Double))
    fd.add_output(fd.ops.min(t0))


def define_shapes(fd):
    t0 = fd.define_tensor(shape=[2, 3, 4], contiguity=True, dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    t2 = fd.ops.permute(t0, [1, 2, 0])
    t3 = fd.ops.reshape(t0, [6, 4])
    t4 = fd.ops.broadcast_in_dim(t1, shape=[6, -1], broadcast_dims=[1])
    t5 = fd.ops.broadcast(t1, [True, False])
    fd.add_output(fd.ops.add(t3, t4))
    fd.add_output(fd.ops.segment_set(t2))
    fd.add_output(fd.ops.set(t5))


def define_strided_inputs(fd):
    import torch

    fd.from_pytorch(torch.empty(2, 3, 4, 5, device="meta").to(memory_format=torch.channels_last))
    fd.define_tensor(sizes=[4, 1, 3], strides=[1, 12, 4], dtype=DataType.BFloat16)
    fd.define_tensor(shape=[-1, -1], contiguity=[False, True], stride_order=[0, 1])


def define_allocation(fd):
    t0 = fd.define_tensor(shape=[6], contiguity=[True], dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t2 = fd.ops.set(t0)
    t3 = fd.ops.exp(t1)
    fd.add_output(t2)
    fd.add_output(t3)
    outer, inner = fd.split(t0.axis(0), 2)
    t0.set_allocation_domain([outer, inner], [True, True])
    # The output in column-major order; axis 1 split by an extent.
    ids = t3.logical_domain()
    o, i = ids[1].split(fd.define_scalar(2, dtype=DataType.Int), inner_split=False)
    merged = fd.merge(o, i)
    t3.set_allocation_domain([merged, ids[0]], contiguity=True)
    t1.logical_domain()[0].parallelize(ParallelType.Serial)


def define_stride_order(fd):
    t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=True)
    t1 = fd.ops.stride_order(fd.ops.relu(t0), [1, 2, 0])
    fd.add_output(fd.ops.stride_order(t1, [2, 1, 0]))
    fd.add_output(t1)


def define_extents(fd):
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
    t1 = fd.define_tensor(shape=[-1], contiguity=True)
    unused = t0.axis(0).extent()  # noqa: F841  (queried, never used: not printed)
    t2 = fd.ops.broadcast_in_dim(t1, shape=t0.shape(), broadcast_dims=[1])
    t3 = fd.ops.div(fd.ops.add(t0, t2), t0.logical_domain()[1].extent())
    fd.add_output(t3)


@pytest.mark.parametrize(
    "define",
    [
        define_pointwise,
        define_reductions,
        define_shapes,
        define_strided_inputs,
        define_allocation,
        define_extents,
        define_stride_order,
    ],
)
def test_round_trip(define):
    with FusionDefinition() as fd:
        define(fd)
    copy = assert_round_trip(fd)
    # And again from the copy: printing is a fixed point.
    assert str(round_trip(copy)) == str(fd)


def test_unused_extent_queries_are_not_printed():
    with FusionDefinition() as fd:
        define_extents(fd)
    text = str(fd)
    assert "T0.axis" not in text
    assert "S0 = T0.size(0)" in text
    assert "S2 = T0.logical_domain()[1].extent()" in text


def test_allocation_is_printed_with_named_iter_domains():
    with FusionDefinition() as fd:
        define_allocation(fd)
    text = str(fd)
    assert "I0, I1 = fd.split(T0.logical_domain()[0], 2, inner_split=True)" in text
    assert "T0.set_allocation_domain([I0, I1], contiguity=[True, True])" in text
    assert "I2, I3 = fd.split(T3.logical_domain()[1], S0, inner_split=False)" in text
    assert "I4 = fd.merge(I2, I3)" in text
    assert (
        "T3.set_allocation_domain([I4, T3.logical_domain()[0]], " "contiguity=[True, True])" in text
    )
    assert "T1.logical_domain()[0].parallelize(ParallelType.Serial)" in text


def test_special_float_constants_round_trip():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=True)
        t1 = fd.ops.minimum(fd.ops.maximum(t0, float("-inf")), float("inf"))
        fd.add_output(fd.ops.add(t1, float("nan")))
    assert 'fd.define_scalar(float("-inf"), dtype=DataType.Double)' in str(fd)
    assert_round_trip(fd)
