"""Building fusions with FusionDefinition: inputs, constants, every op, and
the rules of the with block. CPU only."""

import pytest
import torch

import fuser
from fuser import DataType, FuserError, FusionDefinition, Scalar, Tensor, Vector

from helpers import assert_round_trip, contiguous_tensor


def assert_prints_and_round_trips(fd, *expected):
    """Each of `expected` is in fd's printed definition, which re-creates fd
    (assert_round_trip)."""
    text = str(fd)
    for part in expected:
        assert part in text
    assert_round_trip(fd)


def test_define_tensor_shape_contiguity_dtype():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, 1, 4], contiguity=[True, None, False], dtype=DataType.Half)
    assert isinstance(t0, Tensor)
    assert t0.name == "T0"
    assert t0.ndim == 3
    assert t0.dtype == DataType.Half
    assert t0.contiguity() == [True, None, False]
    ids = t0.logical_domain()
    assert [i.is_broadcast() for i in ids] == [False, True, False]
    assert ids[0].extent().value() is None  # symbolic
    assert ids[1].extent().value() == 1
    assert ids[2].extent().value() == 4
    assert not t0.has_allocation()
    assert fd.inputs() == [t0]


def test_define_tensor_defaults_to_non_contiguous():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, 1, -1])
    assert t0.dtype == DataType.Float
    assert t0.contiguity() == [False, None, False]


def test_define_tensor_broadcast_flags_are_normalized():
    # A flag given for a size-1 (broadcast) axis is dropped (None).
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[1, -1], contiguity=[True, True])
    assert t0.contiguity() == [None, True]


def test_define_tensor_stride_order_sets_allocation():
    with FusionDefinition() as fd:
        # NHWC memory for an NCHW tensor: C has the smallest stride.
        t0 = fd.define_tensor(
            shape=[-1, -1, -1, -1],
            contiguity=[True, True, True, True],
            dtype=DataType.Float,
            stride_order=[3, 0, 2, 1],
        )
    assert t0.has_allocation()
    logical = t0.logical_domain()
    assert t0.allocation_domain() == [logical[0], logical[2], logical[3], logical[1]]
    assert t0.loop_domain() == logical


def test_define_tensor_row_major_stride_order_is_no_allocation():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True, stride_order=[1, 0])
    assert not t0.has_allocation()
    assert "stride_order" not in str(fd)


@pytest.mark.parametrize(
    "make, shape, contiguity, stride_order",
    [
        (lambda: torch.empty(2, 3, 4, device="meta"), [-1, -1, -1], [True, True, True], None),
        (lambda: torch.empty(4, 3, device="meta").t(), [-1, -1], [True, True], [0, 1]),
        (lambda: torch.empty(2, 8, device="meta")[:, ::2], [-1, -1], [True, False], None),
        (
            lambda: torch.empty(2, 3, 4, 5, device="meta").to(memory_format=torch.channels_last),
            [-1, -1, -1, -1],
            [True, True, True, True],
            [3, 0, 2, 1],
        ),
        (lambda: torch.empty(3, 1, 4, device="meta"), [-1, 1, -1], [True, None, True], None),
    ],
)
def test_define_tensor_from_sizes_and_strides(make, shape, contiguity, stride_order):
    example = make()
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(
            sizes=list(example.shape), strides=list(example.stride()), dtype=DataType.Float
        )
        t1 = fd.from_pytorch(example)
    text = str(fd)
    expected = f"shape={shape}, contiguity={contiguity}, dtype=DataType.Float"
    if stride_order is not None:
        expected += f", stride_order={stride_order}"
    assert f"T0 = fd.define_tensor({expected})" in text
    assert f"T1 = fd.define_tensor({expected})" in text
    assert t0.contiguity() == t1.contiguity()


def test_from_pytorch_dtype_and_static_sizes():
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(
            torch.empty(2, 3, dtype=torch.bfloat16, device="meta"), static_sizes=True
        )
    assert t0.dtype == DataType.BFloat16
    assert [i.extent().value() for i in t0.logical_domain()] == [2, 3]


def test_from_pytorch_rejects_cpu_tensors():
    with FusionDefinition() as fd:
        with pytest.raises(
            FuserError, match=r"the tensor is on cpu; fuser runs on CUDA tensors only"
        ):
            fd.from_pytorch(torch.empty(2, 3))
        # The definition stays usable.
        fd.add_output(fd.ops.neg(fd.define_tensor(shape=[-1], contiguity=True)))
    assert len(fd.outputs()) == 1


def test_contiguity_none_declares_an_expanded_dimension():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[None, True])
        fd.add_output(fd.ops.relu(t0))
    # Read through its stride (0 when expanded), as from_pytorch declares
    # an expanded tensor.
    assert t0.contiguity() == [False, True]
    assert "contiguity=[False, True]" in str(fd)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(shape=[-1, -1], contiguity=[True]), "one entry per dimension (2)"),
        (dict(shape=[-1, -2]), "shape entries must be -1"),
        (dict(shape=[-1, -1], contiguity=["yes", True]), "contiguity[0] is 'yes'"),
        (dict(shape=[-1, -1], stride_order=[0, 0]), "permutation of 0..1"),
        (dict(shape=[-1], is_cpu=True), "is_cpu=True declares a 0-dim CPU scalar tensor"),
    ],
)
def test_define_tensor_rejects_bad_arguments(kwargs, message):
    with FusionDefinition() as fd:
        with pytest.raises(FuserError) as info:
            fd.define_tensor(**kwargs)
    assert message in str(info.value)


def test_define_scalar_constants_and_inputs():
    with FusionDefinition() as fd:
        s0 = fd.define_scalar(2.5)
        s1 = fd.define_scalar(3)
        s2 = fd.define_scalar(True)
        s3 = fd.define_scalar(2, dtype=DataType.Double)
        s4 = fd.define_scalar(None, dtype=DataType.Int)
        s5 = fd.define_scalar(dtype=DataType.Double)
    assert [s.dtype for s in (s0, s1, s2, s3, s4, s5)] == [
        DataType.Double,
        DataType.Int,
        DataType.Bool,
        DataType.Double,
        DataType.Int,
        DataType.Double,
    ]
    assert [s.value() for s in (s0, s1, s2, s3, s4)] == [2.5, 3, True, 2.0, None]
    assert isinstance(s3.value(), float)
    assert fd.inputs() == [s4, s5]
    assert "S3 = fd.define_scalar(2.0, dtype=DataType.Double)" in str(fd)


UNARY = [
    "abs", "cos", "exp", "gelu", "log", "neg", "reciprocal", "relu", "rsqrt",
    "sigmoid", "silu", "sin", "sqrt", "tanh", "acos", "acosh", "asin",
    "asinh", "atan", "atanh", "cosh", "sinh", "tan", "exp2", "expm1", "erf",
    "erfc", "erfinv", "erfcinv", "lgamma", "log10", "log1p", "log2", "ceil", "floor",
    "round", "trunc", "frac", "sign",
]  # fmt: skip
PREDICATES = ["signbit", "isnan", "isinf", "isfinite"]
INTEGER_BINARY = [
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "logical_right_shift", "gcd",
]  # fmt: skip
BINARY = [
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "fmod", "atan2",
    "remainder", "nextafter",
]  # fmt: skip
COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]


def test_every_op_of_the_library_is_in_fd_ops():
    for name in fuser._C.unary_ops + fuser._C.binary_ops + [
        "where", "cast", "set", "segment_set", "broadcast", "broadcast_in_dim", "expand",
        "permute", "reshape", "sum", "max", "min", "mean", "prod", "var",
        "var_mean", "welford",
    ]:  # fmt: skip
        assert callable(getattr(FusionDefinition().ops, name)), name
    complex_parts = ["real", "imag", "conj"]
    assert set(UNARY + PREDICATES + complex_parts + ["logical_not", "bitwise_not"]) == set(
        fuser._C.unary_ops
    )
    assert set(BINARY + COMPARE + INTEGER_BINARY + ["logical_and", "logical_or", "mod"]) == set(
        fuser._C.binary_ops
    )


@pytest.mark.parametrize("name", PREDICATES)
def test_predicates_are_bool(name):
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 2, DataType.BFloat16)
        t1 = getattr(fd.ops, name)(t0)
        fd.add_output(t1)
    assert t1.dtype == DataType.Bool
    assert f"T1 = fd.ops.{name}(T0)" in str(fd)


@pytest.mark.parametrize("name", INTEGER_BINARY)
def test_integer_ops_take_integers_only(name):
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 2, DataType.Int32)
        t1 = contiguous_tensor(fd, 2, DataType.Int)
        t2 = getattr(fd.ops, name)(t0, t1)
        fd.add_output(t2)
        assert t2.dtype == DataType.Int
        with pytest.raises(FuserError, match=f"{name}: expected integer"):
            getattr(fd.ops, name)(t0, contiguous_tensor(fd, 2))


@pytest.mark.parametrize("name", UNARY)
def test_unary_ops(name):
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 2, DataType.Half)
        t1 = getattr(fd.ops, name)(t0)
        fd.add_output(t1)
    assert isinstance(t1, Tensor)
    assert t1.dtype == DataType.Half
    assert f"T1 = fd.ops.{name}(T0)" in str(fd)
    assert f"{name}(" in fd.fusion_ir()


@pytest.mark.parametrize("name", BINARY)
def test_binary_ops_with_tensors_and_numbers(name):
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 2)
        t1 = contiguous_tensor(fd, 2)
        t2 = getattr(fd.ops, name)(t0, t1)
        t3 = getattr(fd.ops, name)(t2, 2.0)
        t4 = getattr(fd.ops, name)(3, t3)
    assert [t.dtype for t in (t2, t3, t4)] == [DataType.Float] * 3
    text = str(fd)
    assert f"T2 = fd.ops.{name}(T0, T1)" in text
    assert "S0 = fd.define_scalar(2.0, dtype=DataType.Double)" in text
    assert f"T3 = fd.ops.{name}(T2, S0)" in text
    assert "S1 = fd.define_scalar(3, dtype=DataType.Int)" in text
    assert f"T4 = fd.ops.{name}(S1, T3)" in text


def test_comparisons_logical_ops_and_where():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 1)
        t1 = contiguous_tensor(fd, 1)
        compared = [getattr(fd.ops, name)(t0, t1) for name in COMPARE]
        both = fd.ops.logical_and(compared[0], compared[1])
        either = fd.ops.logical_or(both, fd.ops.logical_not(compared[2]))
        chosen = fd.ops.where(either, t0, 0.0)
    assert all(t.dtype == DataType.Bool for t in compared + [both, either])
    assert chosen.dtype == DataType.Float


def test_type_promotion_follows_pytorch():
    with FusionDefinition() as fd:
        i0 = contiguous_tensor(fd, 1, DataType.Int32)
        h0 = contiguous_tensor(fd, 1, DataType.Half)
        assert fd.ops.div(i0, i0).dtype == DataType.Float  # true division
        assert fd.ops.add(i0, 1).dtype == DataType.Int32
        assert fd.ops.add(i0, 1.5).dtype == DataType.Float
        assert fd.ops.mul(h0, 2.0).dtype == DataType.Half
        assert fd.ops.add(h0, i0).dtype == DataType.Half


def test_cast():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 2)
        t1 = fd.ops.cast(t0, DataType.BFloat16)
        t2 = fd.ops.cast(t1, dtype=torch.float64)
    assert t1.dtype == DataType.BFloat16
    assert t2.dtype == DataType.Double
    assert "T1 = fd.ops.cast(T0, dtype=DataType.BFloat16)" in str(fd)
    assert "T2 = fd.ops.cast(T1, dtype=DataType.Double)" in str(fd)


def test_scalar_arithmetic_gives_scalars():
    with FusionDefinition() as fd:
        s0 = fd.define_scalar(None, dtype=DataType.Double)
        s1 = fd.ops.mul(s0, 2.0)
        t0 = contiguous_tensor(fd, 1)
        t1 = fd.ops.add(t0, s1)
    assert isinstance(s1, Scalar)
    assert s1.dtype == DataType.Double
    assert isinstance(t1, Tensor)


def test_python_operators():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 1)
        t1 = contiguous_tensor(fd, 1)
        t2 = -((t0 + t1) * 2.0 - 1) / t1
        t3 = abs(1.0 - t2) ** 2
    text = str(fd)
    for op in ("add", "mul", "sub", "neg", "div", "abs", "pow"):
        assert f"fd.ops.{op}(" in text
    assert isinstance(t3, Tensor)


def test_reductions():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 3)
        t1 = fd.ops.sum(t0, dims=[1])
        t2 = fd.ops.sum(t0, [0, -1], keepdim=True)
        t3 = fd.ops.max(t0, 2)
        t4 = fd.ops.min(t0)
        t5 = fd.ops.mean(t0, dims=[0], dtype=DataType.Half)
        i0 = contiguous_tensor(fd, 2, DataType.Int32)
        t6 = fd.ops.sum(i0, [1])
        t7 = fd.ops.sum(t0, [1], dtype=DataType.Double)
    assert [t.ndim for t in (t1, t2, t3, t4, t5)] == [2, 3, 2, 0, 2]
    assert t5.dtype == DataType.Half
    assert t6.dtype == DataType.Int  # integers sum to int64, as in torch
    assert t7.dtype == DataType.Double
    text = str(fd)
    assert "T1 = fd.ops.sum(T0, dims=[1], keepdim=False, dtype=DataType.Null)" in text
    assert "T2 = fd.ops.sum(T0, dims=[0, -1], keepdim=True, dtype=DataType.Null)" in text
    assert "T4 = fd.ops.min(T0, dims=[0, 1, 2], keepdim=False" in text
    assert t2.logical_domain()[0].is_broadcast()


def test_variance_and_welford():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 3)
        var, mean = fd.ops.var_mean(t0, [0, 2], correction=0, keepdim=True)
        t3 = fd.ops.var(t0, [1])
        avg, var_sum, n = fd.ops.welford(t0, [2])
        t7 = fd.ops.prod(t0, 1)
        h0 = contiguous_tensor(fd, 2, DataType.BFloat16)
        hv = fd.ops.var(h0, [1])
    assert [t.ndim for t in (var, mean, t3, avg, var_sum, n, t7)] == [3, 3, 2, 2, 2, 2, 2]
    assert n.dtype == DataType.Int and avg.dtype == DataType.Float
    assert hv.dtype == DataType.BFloat16  # as torch.var of a bfloat16 tensor
    text = str(fd)
    assert "T1, T2 = fd.ops.var_mean(T0, dims=[0, 2], correction=0, keepdim=True)" in text
    assert "T3 = fd.ops.var(T0, dims=[1], correction=1, keepdim=False)" in text
    assert "T4, T5, T6 = fd.ops.welford(T0, dims=[2])" in text
    assert "T7 = fd.ops.prod(T0, dims=[1], keepdim=False" in text
    with pytest.raises(TypeError, match="correction must be an int"):
        with FusionDefinition() as fd:
            fd.ops.var(contiguous_tensor(fd, 2), [1], correction=0.5)


def test_broadcast_and_broadcast_in_dim():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 1)
        t1 = fd.ops.broadcast(t0, [True, False])
        t2 = fd.ops.broadcast_in_dim(t0, shape=[1, -1, 1], broadcast_dims=[1])
        t3 = contiguous_tensor(fd, 2)
        t4 = fd.ops.broadcast_in_dim(t0, shape=t3.shape(), broadcast_dims=[1])
        t5 = fd.ops.add(t3, t4)
        fd.add_output(t5)
    assert [i.is_broadcast() for i in t1.logical_domain()] == [True, False]
    assert [i.is_broadcast() for i in t2.logical_domain()] == [True, False, True]
    assert [i.is_broadcast() for i in t5.logical_domain()] == [False, False]
    text = str(fd)
    assert "T1 = fd.ops.broadcast(T0, is_broadcast_dim=[True, False])" in text
    assert "S0 = T3.size(0)" in text
    assert "T4 = fd.ops.broadcast_in_dim(T0, shape=[S0, S1], broadcast_dims=[1])" in text


def test_broadcast_in_dim_checks():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[3])
        with pytest.raises(FuserError, match="one entry per dimension"):
            fd.ops.broadcast_in_dim(t0, shape=[2, 3], broadcast_dims=[0, 1])
        with pytest.raises(FuserError, match="must be increasing"):
            fd.ops.broadcast_in_dim(t0, shape=[2, 3], broadcast_dims=[2])
        with pytest.raises(FuserError, match="has size 3 and cannot be expanded to 4"):
            fd.ops.broadcast_in_dim(t0, shape=[2, 4], broadcast_dims=[1])


def test_expand_and_broadcast_in_dim_to_sizes_are_expand_ops():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1])
        t1 = fd.ops.broadcast_in_dim(t0, shape=[4, -1], broadcast_dims=[1])
        t2 = fd.ops.relu(t1)
        t3 = fd.ops.sum(t2, [0])  # sums the expanded axis, as torch does
        n = fd.define_scalar(dtype=DataType.Int)
        t4 = fd.ops.expand(fd.ops.broadcast(t0, [False, True]), shape=[-1, n])
        fd.add_output(t2)
        fd.add_output(t3)
        fd.add_output(t4)
    assert [i.is_broadcast() for i in t1.logical_domain()] == [False, False]
    assert t1.logical_domain()[0].extent().value() == 4
    assert [i.is_broadcast() for i in t4.logical_domain()] == [False, False]
    assert "= expand(" in fd.fusion_ir()
    text = str(fd)
    assert "T1 = fd.ops.broadcast_in_dim(T0, shape=[4, -1], broadcast_dims=[1])" in text
    assert "T5 = fd.ops.expand(T4, shape=[-1, S0])" in text
    assert_prints_and_round_trips(fd)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[3, 1])
        with pytest.raises(FuserError, match="needs one extent per axis"):
            fd.ops.expand(t0, shape=[3])
        with pytest.raises(FuserError, match="has size 3 and cannot be expanded to 4"):
            fd.ops.expand(t0, shape=[4, 2])
        fd.add_output(fd.ops.expand(t0, shape=[3, 2]))  # still usable


def test_permute_reshape_set():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[2, 3, 4], contiguity=True)
        t1 = fd.ops.permute(t0, dims=[2, 0, 1])
        t2 = fd.ops.reshape(t0, new_shape=[6, -1])
        t3 = fd.ops.set(t1)
        t4 = fd.ops.segment_set(t2)
    assert [i.extent().value() for i in t1.logical_domain()] == [4, 2, 3]
    assert [i.extent().value() for i in t2.logical_domain()] == [6, 4]
    assert t3.ndim == 3 and t4.ndim == 2
    text = str(fd)
    assert "T1 = fd.ops.permute(T0, dims=[2, 0, 1])" in text
    assert "T2 = fd.ops.reshape(T0, new_shape=[6, -1])" in text
    assert "T4 = fd.ops.segment_set(T2)" in text


def test_reshape_of_unknown_sizes():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        rows = fd.define_scalar(None, dtype=DataType.Int)
        t1 = fd.ops.reshape(t0, new_shape=[-1])
        t2 = fd.ops.reshape(t0, new_shape=[rows, -1, t0.size(0)])
        with pytest.raises(FuserError, match="sizes are integers"):
            fd.ops.reshape(t0, new_shape=[fd.define_scalar(None, dtype=DataType.Double)])
        with pytest.raises(FuserError, match="ints or integer Scalars"):
            fd.ops.reshape(t0, new_shape=[2.5])
    assert t1.ndim == 1 and t2.ndim == 3
    text = str(fd)
    assert "T1 = fd.ops.reshape(T0, new_shape=[-1])" in text
    assert "fd.ops.reshape(T0, new_shape=[S0, -1, S1])" in text


def test_clamp_addcmul_lerp_and_the_dim_spelling():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 2)
        t1 = contiguous_tensor(fd, 2)
        fd.add_output(fd.ops.clamp(t0, min=-1.0, max=1.0))
        fd.add_output(fd.ops.clamp(t0, max=0.5))
        fd.add_output(fd.ops.addcmul(t0, t1, t1, value=0.5))
        fd.add_output(fd.ops.lerp(t0, t1, 0.25))
        fd.add_output(fd.ops.sum(t0, dim=1))
        fd.add_output(fd.ops.var_mean(t1, dim=[0], correction=0)[0])
        with pytest.raises(FuserError, match="give min, max or both"):
            fd.ops.clamp(t0)
        with pytest.raises(FuserError, match="give dims or dim, not both"):
            fd.ops.sum(t0, dims=[0], dim=1)
    assert_prints_and_round_trips(
        fd,
        "fd.ops.clamp(T0, min=S0, max=S1)",
        "fd.ops.clamp(T0, min=None, max=S2)",
        "fd.ops.addcmul(T0, T1, T1, S3)",
        "fd.ops.lerp(T0, T1, S4)",
        "fd.ops.sum(T0, dims=[1]",
    )


def test_squeeze_and_unsqueeze():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, 1, -1], contiguity=[True, None, True])
        t1 = fd.ops.squeeze(t0, [1])
        t2 = fd.ops.unsqueeze(t1, 0)
        fd.add_output(t2)
        with pytest.raises(FuserError, match="only axes of size 1"):
            fd.ops.squeeze(fd.define_tensor(shape=[2, 3], contiguity=True), [0])
    assert t1.ndim == 2 and t2.ndim == 3
    text = str(fd)
    assert "T1 = fd.ops.squeeze(T0, dims=[1])" in text
    assert "T2 = fd.ops.unsqueeze(T1, dim=0)" in text


def test_add_output():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 1)
        t1 = fd.ops.exp(t0)
        fd.add_output(t1)
        fd.add_output(t1)  # returned twice, as nvFuser allows
        with pytest.raises(FuserError, match="only tensors can be outputs"):
            fd.add_output(fd.define_scalar(1.0))
    assert fd.outputs() == [t1]
    assert str(fd).count("fd.add_output(T1)") == 2


def test_ops_only_inside_the_with_block():
    fd = FusionDefinition()
    with pytest.raises(FuserError, match="not open"):
        fd.define_tensor(shape=[-1])
    with fd:
        t0 = contiguous_tensor(fd, 1)
    with pytest.raises(FuserError, match="already closed"):
        fd.ops.relu(t0)
    with pytest.raises(FuserError, match="already defined"):
        with fd:
            pass


def test_operands_from_another_definition_are_rejected():
    with FusionDefinition() as other:
        foreign = contiguous_tensor(other, 1)
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 1)
        with pytest.raises(FuserError, match="another FusionDefinition"):
            fd.ops.add(t0, foreign)


def test_bad_operand_types():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 1)
        with pytest.raises(TypeError, match="argument 2 must be a Tensor"):
            fd.ops.add(t0, "2")
        with pytest.raises(FuserError, match="argument 1 must be a Tensor"):
            fd.ops.permute(fd.define_scalar(1.0), [0])


def test_subclass_with_definition_method():
    class Relu(FusionDefinition):
        def definition(self):
            t0 = self.define_tensor(shape=[-1], contiguity=[True])
            self.add_output(self.ops.relu(t0))

    fd = Relu()
    assert "T1 = fd.ops.relu(T0)" in str(fd)
    assert len(fd.inputs()) == 1 and len(fd.outputs()) == 1


def test_add_output_with_stride_order_sets_a_dense_allocation():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, 1, -1], contiguity=[True, None, True])
        t1 = fd.ops.relu(t0)
        fd.add_output(t1, stride_order=[0, 1, 2])
        t2 = fd.ops.sum(t0, [2])
        # Row-major asked for: an allocation domain in logical order (the
        # output is written, never a view of an input with other strides).
        fd.add_output(t2, stride_order=[1, 0])
        fd.add_output(fd.ops.neg(t0))  # no order asked for: none
    assert "allocation domain : [iS5{i3}, bS4{1}, iS3{i0}]" in fd.fusion_ir()
    assert "contiguity: t n t" in fd.fusion_ir()
    assert fd.fusion_ir().count("allocation domain") == 2
    assert_prints_and_round_trips(
        fd,
        "fd.add_output(T1, stride_order=[0, 1, 2])",
        "fd.add_output(T2, stride_order=[1, 0])",
        "fd.add_output(T3)",
    )


@pytest.mark.parametrize(
    "stride_order, message",
    [([0, 0, 1], "permutation of 0..2"), ([0, 1], "permutation of 0..2")],
)
def test_add_output_rejects_a_bad_stride_order(stride_order, message):
    with FusionDefinition() as fd:
        t1 = fd.ops.relu(fd.define_tensor(shape=[-1, -1, -1], contiguity=True))
        with pytest.raises(FuserError, match=message):
            fd.add_output(t1, stride_order=stride_order)
        fd.add_output(t1)
    assert len(fd.outputs()) == 1


def test_shape_size_and_define_vector_build_reshapes():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        t1 = fd.define_tensor(shape=[-1], contiguity=True)
        s0 = fd.define_scalar(None, dtype=DataType.Int)
        t2 = fd.ops.reshape(t0, fd.define_vector([s0, -1]))
        t3 = fd.ops.reshape(t1, fd.ops.shape(t0))
        t4 = fd.ops.reshape(t1, [fd.ops.size(t0, 1), fd.ops.size(t0, 0)])
        for t in (t2, t3, t4):
            fd.add_output(t)
    text = str(fd)
    assert "T2 = fd.ops.reshape(T0, new_shape=[S0, -1])" in text
    assert "T3 = fd.ops.reshape(T1, new_shape=[S1, S2])" in text
    assert "S1 = T0.size(0)" in text and "S2 = T0.size(1)" in text
    assert "S3 = T0.size(1)" in text and "S4 = T0.size(0)" in text
    assert "T4 = fd.ops.reshape(T1, new_shape=[S3, S4])" in text
    with FusionDefinition() as fd:
        with pytest.raises(FuserError, match="entry 1 is 2.5"):
            fd.define_vector([1, 2.5])
        with pytest.raises(
            FuserError, match=r"define_vector\(-1\): a vector input has a size >= 0"
        ):
            fd.define_vector(-1)
        fd.add_output(fd.define_tensor(shape=[-1], contiguity=True))


def test_a_vector_input_is_a_list_of_scalar_inputs_printed_by_name():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        v0 = fd.define_vector(3)
        t1 = fd.ops.reshape(t0, v0)
        t2 = fd.ops.reshape(t0, [v0[2], -1])
        fd.add_output(t1)
        fd.add_output(t2)
    assert isinstance(v0, Vector) and len(v0) == 3
    assert all(isinstance(s, Scalar) and s.value() is None for s in v0)
    assert fd.inputs() == [t0, v0]
    text = str(fd)
    assert "V0 = fd.define_vector(3, dtype=DataType.Int)" in text
    assert "S0, S1, S2 = V0" in text
    assert "T1 = fd.ops.reshape(T0, new_shape=V0)" in text
    assert "T2 = fd.ops.reshape(T0, new_shape=[S2, -1])" in text
    # The printed definition defines the same fusion.
    scope = {}
    exec(text, scope)
    assert str(scope["fd"]) == text


@pytest.mark.parametrize(
    "dtype, data_type",
    [(torch.int8, DataType.Int8), (torch.uint8, DataType.UInt8), (torch.int16, DataType.Int16)],
)
def test_narrow_integer_tensors(dtype, data_type):
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=True, dtype=dtype)
        t1 = fd.ops.add(t0, 3)
        t2 = fd.ops.sum(t0, [0])
        fd.add_output(t1)
        fd.add_output(t2)
    assert t0.dtype == data_type
    assert t1.dtype == data_type  # a Python int keeps the tensor's type
    assert t2.dtype == DataType.Int  # integer sums accumulate in int64
    assert_prints_and_round_trips(fd, f"dtype=DataType.{data_type.name}")


def test_stride_order_op_gives_a_copy_that_layout():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=True)
        t1 = fd.ops.stride_order(t0, [1, 2, 0])
        t2 = fd.ops.stride_order(t0, [2, 1, 0])  # row-major: no allocation
        fd.add_output(t1)
        fd.add_output(t2)
    text = str(fd)
    assert "fd.ops.stride_order(T0, stride_order=[1, 2, 0])" in text
    assert "fd.ops.stride_order(T0, stride_order=[2, 1, 0])" in text
    # stride_order[i] ranks dimension i's stride (0 the innermost), as
    # define_tensor reads it: dimension 1, then 0, then 2.
    logical = t1.logical_domain()
    assert t1.allocation_domain() == [logical[1], logical[0], logical[2]]
    assert not t2.has_allocation()


def test_stride_order_op_refuses_what_is_not_a_permutation():
    with pytest.raises(
        FuserError,
        match=r"fd.ops.stride_order: stride_order must be a permutation of 0..1; got \[0, 0\]",
    ):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
            fd.ops.stride_order(t0, [0, 0])


@pytest.mark.parametrize(
    "dtype, data_type",
    [(torch.float8_e4m3fn, DataType.Float8_e4m3fn), (torch.float8_e5m2, DataType.Float8_e5m2)],
)
def test_float8_tensors_are_cast_not_computed_on(dtype, data_type):
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=True, dtype=dtype)
        t1 = fd.ops.cast(t0, DataType.Float)
        t2 = fd.ops.cast(fd.ops.mul(t1, 2.0), data_type)
        fd.add_output(t2)
        # As in PyTorch, no arithmetic on float8 tensors: a user error that
        # says to cast first, and the definition stays usable.
        with pytest.raises(FuserError, match="Cast it first"):
            fd.ops.add(t0, t0)
    assert t0.dtype == data_type
    assert t2.dtype == data_type
    assert_prints_and_round_trips(fd, f"dtype=DataType.{data_type.name}")


def test_factories_and_triangles_print_and_round_trip():
    with FusionDefinition() as fd:
        n = fd.define_scalar(dtype=DataType.Int)
        t0 = contiguous_tensor(fd, 2)
        fd.add_output(fd.ops.full([n, 3], 2.5, DataType.Float))
        fd.add_output(fd.ops.zeros([4], DataType.BFloat16))
        fd.add_output(fd.ops.ones([n], DataType.Int))
        fd.add_output(fd.ops.iota(n, 1, 2, DataType.Int))
        fd.add_output(fd.ops.iota(fd.ops.size(t0, 1), dtype=DataType.Float))
        fd.add_output(fd.ops.triu(t0, 1))
        fd.add_output(fd.ops.tril(t0, diagonal=-1))
    assert_prints_and_round_trips(
        fd,
        "fd.ops.full(shape=[S0, 3], fill_value=",
        "dtype=DataType.BFloat16)",
        "fd.ops.iota(length=S0, start=",
        "fd.ops.triu(T0, diagonal=1)",
        "fd.ops.tril(T0, diagonal=-1)",
    )


def test_factory_and_triangle_arguments_are_checked():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 1)
        with pytest.raises(FuserError, match="shape entries must be ints or integer Scalars"):
            fd.ops.full([2.5], 1.0, DataType.Float)
        with pytest.raises(FuserError, match="sizes must not be negative"):
            fd.ops.zeros([-2], DataType.Float)
        with pytest.raises(FuserError, match="iota: dtype must be an integer or floating-point"):
            fd.ops.iota(4, dtype=DataType.Bool)
        with pytest.raises(FuserError, match="at least 2 dimensions"):
            fd.ops.triu(t0)
        with pytest.raises(FuserError, match="diagonal must be an int"):
            fd.ops.tril(t0, 0.5)
        # The definition stays usable.
        fd.add_output(fd.ops.add(t0, fd.ops.iota(fd.ops.size(t0, 0), dtype=DataType.Float)))
    assert "fd.ops.iota(" in str(fd)


def test_random_ops_print_round_trip_and_take_generator_inputs():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 2)
        seed = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.uniform(-1.0, 1.0, [4, 5], rng_seed=seed, rng_offset=8))
        fd.add_output(fd.ops.rand_like(t0))
        fd.add_output(fd.ops.normal(0.0, 2.0, fd.ops.shape(t0), dtype=DataType.Double))
        with pytest.raises(FuserError, match="give both rng_seed and rng_offset"):
            fd.ops.randn_like(t0, rng_seed=seed)
    # Two random ops without a seed: their seeds and offsets are fusion
    # inputs after the user's two, which execute() fills from torch.
    assert fd._generator_slots == [2, 3, 4, 5]
    assert_prints_and_round_trips(
        fd,
        "fd.ops.uniform(S1, S2, shape=[4, 5], rng_seed=S0, rng_offset=S3",
        "rng_seed=None, rng_offset=None, dtype=DataType.Double)",
    )


def test_scans_print_round_trip_and_check_arguments():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 2, DataType.Int32)
        t1 = fd.ops.cumsum(t0, 1)
        t2 = fd.ops.cumprod(t0, -2, dtype=DataType.Float)
        fd.add_output(t1)
        fd.add_output(t2)
        with pytest.raises(FuserError, match="dim 2 is out of range"):
            fd.ops.cumsum(t0, 2)
        with pytest.raises(FuserError, match="dim must be an int"):
            fd.ops.cumsum(t0, 0.5)
    assert t1.dtype == DataType.Int
    assert t2.dtype == DataType.Float
    assert_prints_and_round_trips(
        fd, "fd.ops.cumsum(T0, dim=1)", "fd.ops.cumprod(T0, dim=-2, dtype=DataType.Float)"
    )


def test_indexing_ops_print_round_trip_and_check_arguments():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 2)
        rows = contiguous_tensor(fd, 1, DataType.Int)
        cols = contiguous_tensor(fd, 2, DataType.Int)
        fd.add_output(fd.ops.index_select(t0, rows, 0))
        fd.add_output(fd.ops.gather(t0, cols, 1))
        fd.add_output(fd.ops.take_along_axis(t0, cols, -1))
        fd.add_output(fd.ops.scatter(t0, cols, t0, 0))
        fd.add_output(fd.ops.select(t0, -1, 1))
        with pytest.raises(FuserError, match="indices are integers"):
            fd.ops.index_select(t0, t0, 0)
        with pytest.raises(FuserError, match="the index must have rank 1"):
            fd.ops.index_select(t0, cols, 0)
        with pytest.raises(FuserError, match="dim must be an int"):
            fd.ops.gather(t0, cols, None)
    assert_prints_and_round_trips(
        fd,
        "fd.ops.index_select(T0, T1, dim=0)",
        "fd.ops.gather(T0, T2, dim=1)",
        "fd.ops.scatter(T0, T2, T0, dim=0)",
        "fd.ops.select(T0, S",
    )


def test_slice_pad_cat_print_round_trip_and_check_arguments():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 2)
        t1 = contiguous_tensor(fd, 2, DataType.BFloat16)
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.slice(t0, [1, 0], [n, -1], [2, 1]))
        fd.add_output(fd.ops.pad(t0, [1, 2], 0.5))
        joined = fd.ops.cat([t0, t1], -1)
        fd.add_output(joined)
        with pytest.raises(FuserError, match="one entry per axis"):
            fd.ops.slice(t0, [0], [1, 1])
        with pytest.raises(FuserError, match="steps must be positive"):
            fd.ops.slice(t0, [0, 0], [1, 1], [0, 1])
        with pytest.raises(FuserError, match="pad widths; give"):
            fd.ops.pad(t0, [1])
    assert joined.dtype == DataType.Float
    assert_prints_and_round_trips(
        fd,
        "fd.ops.slice(T0, start_indices=[1, 0], end_indices=[S0, -1], strides=[2, 1])",
        "fd.ops.pad(T0, pad_widths=[1, 2], value=S",
        "fd.ops.cat([T0, T1], dim=-1)",
    )


def test_outputs_aliasing_inputs_print_round_trip_and_are_checked():
    with FusionDefinition() as fd:
        p = contiguous_tensor(fd, 1)
        g = contiguous_tensor(fd, 1)
        h = contiguous_tensor(fd, 1, DataType.Half)
        fd.add_output(fd.ops.sub(p, fd.ops.mul(g, 0.1)), alias_input=p)
        fd.add_output(fd.ops.mul(g, 2.0))
        with pytest.raises(FuserError, match="alias_input must be a tensor input"):
            fd.add_output(fd.ops.mul(g, 3.0), alias_input=fd.ops.neg(g))
        with pytest.raises(FuserError, match="already the alias of an output"):
            fd.add_output(fd.ops.mul(p, 3.0), alias_input=p)
        with pytest.raises(FuserError, match="cannot be written into"):
            fd.add_output(fd.ops.mul(g, 3.0), alias_input=h)
    assert fd._aliases == {0: 0}
    assert_prints_and_round_trips(fd, "fd.add_output(T4, alias_input=T0)")


def test_complex_tensors_take_their_ops_and_reject_others():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=True, dtype=DataType.ComplexFloat)
        x = fd.define_tensor(shape=[-1, -1], contiguity=True)
        t = fd.ops.mul(a, x)
        assert t.dtype == DataType.ComplexFloat
        assert fd.ops.real(t).dtype == DataType.Float
        assert fd.ops.imag(t).dtype == DataType.Float
        assert fd.ops.abs(t).dtype == DataType.Float
        assert fd.ops.conj(t).dtype == DataType.ComplexFloat
        assert fd.ops.mul(t, 2.0).dtype == DataType.ComplexFloat
        # exp of complex values runs through ATen (doc/ops.md); erf has none.
        assert fd.ops.exp(a).dtype == DataType.ComplexFloat
        with pytest.raises(FuserError, match="erf does not take complex values"):
            fd.ops.erf(a)
        # Complex constants: a Python complex promotes a float tensor to
        # complex64, as in torch.
        assert fd.ops.mul(x, 1j).dtype == DataType.ComplexFloat
        assert fd.ops.mul(a, fd.define_scalar(2 - 1j, DataType.ComplexDouble)).dtype == (
            DataType.ComplexFloat
        )
        with pytest.raises(FuserError, match="complex scalars are constants"):
            fd.define_scalar(None, dtype=DataType.ComplexDouble)
        with pytest.raises(FuserError, match="is a complex number, but the dtype"):
            fd.define_scalar(1j, dtype=DataType.Double)
        fd.add_output(fd.ops.add(fd.ops.div(t, a), fd.ops.conj(a)))
    assert (
        "T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.ComplexFloat)"
        in str(fd)
    )
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=True, dtype=DataType.ComplexFloat)
        fd.add_output(fd.ops.add(fd.ops.conj(a), fd.ops.real(a)))
    code = fd.generate_cuda()
    assert "fuser_complex<float>" in code and "fuserConj(" in code
    assert fuser.to_data_type(torch.complex128) == DataType.ComplexDouble


def test_cummax_and_cummin_give_values_and_indices():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True, dtype=DataType.BFloat16)
        values, indices = fd.ops.cummax(t0, 1)
        low, where = fd.ops.cummin(t0, -1)
        assert values.dtype == DataType.BFloat16 and indices.dtype == DataType.Int
        assert low.dtype == DataType.BFloat16 and where.dtype == DataType.Int
        for t in (values, indices, low, where):
            fd.add_output(t)
    text = str(fd)
    assert "T1, T2 = fd.ops.cummax(T0, dim=1)" in text
    assert "T3, T4 = fd.ops.cummin(T0, dim=-1)" in text
