"""Running definitions on the GPU and comparing with torch."""

import pytest
import torch

from fuser import DataType, FuserError, FusionDefinition

from helpers import assert_round_trip, requires_gpu

pytestmark = requires_gpu


def cuda(*shape, dtype=torch.float32):
    return torch.randn(*shape, device="cuda").to(dtype)


def run(define, inputs):
    with FusionDefinition() as fd:
        define(fd)
    return fd, fd.execute(inputs)


UNARY = {
    "abs": torch.abs,
    "cos": torch.cos,
    "exp": torch.exp,
    "gelu": torch.nn.functional.gelu,
    "log": lambda x: torch.log(x.abs() + 0.5),
    "neg": torch.neg,
    "reciprocal": lambda x: torch.reciprocal(x.abs() + 0.5),
    "relu": torch.relu,
    "rsqrt": lambda x: torch.rsqrt(x.abs() + 0.5),
    "sigmoid": torch.sigmoid,
    "silu": torch.nn.functional.silu,
    "sin": torch.sin,
    "sqrt": lambda x: torch.sqrt(x.abs() + 0.5),
    "tanh": torch.tanh,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    positive = name in ("log", "reciprocal", "rsqrt", "sqrt")

    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        x = fd.ops.add(fd.ops.abs(t0), 0.5) if positive else t0
        fd.add_output(getattr(fd.ops, name)(x))

    x = cuda(33, 65)
    _, (out,) = run(define, [x])
    torch.testing.assert_close(out, UNARY[name](x))


BINARY = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "fmod": torch.fmod,
    "pow": lambda a, b: torch.pow(a.abs() + 0.5, b),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        x = fd.ops.add(fd.ops.abs(t0), 0.5) if name == "pow" else t0
        fd.add_output(getattr(fd.ops, name)(x, t1))

    a, b = cuda(17, 130), cuda(17, 130)
    _, (out,) = run(define, [a, b])
    torch.testing.assert_close(out, BINARY[name](a, b))


# The math ops beyond arithmetic (doc/ops.md), each against torch's
# function of the same name on inputs of its domain, bf16 and float.
MATH_DOMAINS = {
    "acos": (-0.99, 0.99), "asin": (-0.99, 0.99), "atanh": (-0.99, 0.99),
    "erfinv": (-0.99, 0.99), "acosh": (1.0, 10.0), "lgamma": (0.05, 10.0),
    "log10": (0.05, 10.0), "log1p": (0.05, 10.0), "log2": (0.05, 10.0),
    "tan": (-1.4, 1.4),
}  # fmt: skip
MATH_UNARY = [
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan",
    "exp2", "expm1", "erf", "erfc", "erfinv", "lgamma", "log10", "log1p",
    "log2", "ceil", "floor", "round", "trunc", "frac", "sign", "signbit",
    "isnan", "isinf", "isfinite",
]  # fmt: skip


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("name", MATH_UNARY)
def test_math_unary(name, dtype):
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
        fd.add_output(getattr(fd.ops, name)(t0))

    lo, hi = MATH_DOMAINS.get(name, (-4.0, 4.0))
    x = (torch.rand(40, 70, device="cuda", dtype=torch.float64) * (hi - lo) + lo).to(dtype)
    x[0, :4] = torch.tensor([float("nan"), float("inf"), -0.0, 2.5])
    _, (out,) = run(define, [x])
    torch.testing.assert_close(out, getattr(torch, name)(x), equal_nan=True)


def test_integer_ops():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        t1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        for name in (
            "bitwise_and",
            "bitwise_or",
            "bitwise_xor",
            "bitwise_left_shift",
            "bitwise_right_shift",
            "gcd",
        ):
            fd.add_output(getattr(fd.ops, name)(t0, t1))
        fd.add_output(fd.ops.bitwise_not(t0))
        fd.add_output(fd.ops.remainder(t0, fd.ops.add(fd.ops.abs(t1), 1)))

    a = torch.randint(-1000, 1000, (5000,), device="cuda")
    b = torch.randint(-2, 67, (5000,), device="cuda")
    _, outs = run(define, [a, b])
    expected = [
        a & b, a | b, a ^ b, torch.bitwise_left_shift(a, b), torch.bitwise_right_shift(a, b),
        torch.gcd(a, b), ~a, torch.remainder(a, b.abs() + 1),
    ]  # fmt: skip
    for got, want in zip(outs, expected):
        assert torch.equal(got, want)


def test_atan2_and_remainder_of_floats():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.atan2(t0, t1))
        fd.add_output(fd.ops.remainder(t0, t1))

    a, b = cuda(30, 40) * 10, cuda(30, 40) + 3
    _, (angle, rest) = run(define, [a, b])
    torch.testing.assert_close(angle, torch.atan2(a, b))
    torch.testing.assert_close(rest, torch.remainder(a, b))


def equal_or_not(n):
    a = cuda(n)
    b = a.clone()
    b[::3] = cuda((n + 2) // 3)
    return a, b


def test_comparisons():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1], contiguity=[True])
        t1 = fd.define_tensor(shape=[-1], contiguity=[True])
        for name in ("eq", "ne", "lt", "le", "gt", "ge"):
            fd.add_output(getattr(fd.ops, name)(t0, t1))

    a, b = equal_or_not(1000)
    _, outs = run(define, [a, b])
    expected = [a == b, a != b, a < b, a <= b, a > b, a >= b]
    for got, want in zip(outs, expected):
        assert got.dtype == torch.bool
        assert torch.equal(got, want)


def test_logical_ops():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1], contiguity=[True])
        t1 = fd.define_tensor(shape=[-1], contiguity=[True])
        mask = fd.ops.logical_or(fd.ops.gt(t0, 0.5), fd.ops.logical_not(fd.ops.lt(t1, 0.0)))
        fd.add_output(fd.ops.logical_and(mask, fd.ops.ne(t0, t1)))

    a, b = equal_or_not(1000)
    _, (out,) = run(define, [a, b])
    assert torch.equal(out, ((a > 0.5) | ~(b < 0.0)) & (a != b))


def test_where():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1], contiguity=[True])
        t1 = fd.define_tensor(shape=[-1], contiguity=[True])
        fd.add_output(fd.ops.where(fd.ops.gt(t0, t1), t0, 0.0))
        fd.add_output(fd.ops.where(fd.ops.lt(t0, 0.0), -1.0, t1))

    a, b = equal_or_not(1000)
    _, (out0, out1) = run(define, [a, b])
    torch.testing.assert_close(out0, torch.where(a > b, a, 0.0))
    torch.testing.assert_close(out1, torch.where(a < 0.0, -1.0, b))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_reduced_precision_and_scalar_inputs(dtype):
    def define(fd):
        t0 = fd.from_pytorch(a)
        s0 = fd.define_scalar(None, dtype=DataType.Double)
        s1 = fd.define_scalar(None, dtype=DataType.Int)
        t1 = fd.ops.cast(t0, DataType.Float)
        t2 = fd.ops.add(fd.ops.mul(t1, s0), s1)
        fd.add_output(fd.ops.cast(fd.ops.tanh(t2), dtype=dtype))

    a = cuda(8, 256, dtype=dtype)
    _, (out,) = run(define, [a, 0.25, 3])
    assert out.dtype == dtype
    torch.testing.assert_close(out, torch.tanh(a.float() * 0.25 + 3).to(dtype))


def test_broadcast_in_dim_bias_add():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        t1 = fd.define_tensor(shape=[-1], contiguity=[True])
        t2 = fd.ops.broadcast_in_dim(t1, shape=t0.shape(), broadcast_dims=[1])
        t3 = fd.ops.broadcast(fd.ops.sum(t0, [1]), [False, True])
        fd.add_output(fd.ops.sub(fd.ops.add(t0, t2), t3))

    x, bias = cuda(31, 47), cuda(47)
    fd, (out,) = run(define, [x, bias])
    torch.testing.assert_close(out, x + bias - x.sum(1, keepdim=True))
    assert_round_trip(fd)


@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions(keepdim):
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=True)
        fd.add_output(fd.ops.sum(t0, [1], keepdim=keepdim))
        fd.add_output(fd.ops.max(t0, [0, 2], keepdim=keepdim))
        fd.add_output(fd.ops.min(t0, [-1], keepdim=keepdim))
        fd.add_output(fd.ops.mean(t0, [0], keepdim=keepdim))

    x = cuda(5, 67, 9)
    _, outs = run(define, [x])
    expected = [
        x.sum(1, keepdim=keepdim),
        x.amax((0, 2), keepdim=keepdim),
        x.amin(-1, keepdim=keepdim),
        x.mean(0, keepdim=keepdim),
    ]
    for got, want in zip(outs, expected):
        torch.testing.assert_close(got, want)


def test_variance_welford_and_prod():
    # One reduction per fusion: each compiles to one reduction kernel.
    x = cuda(300, 777)

    def define_var_mean(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        var, mean = fd.ops.var_mean(t0, [1])
        fd.add_output(var)
        fd.add_output(mean)

    _, (var, mean) = run(define_var_mean, [x])
    want_var, want_mean = torch.var_mean(x, 1)
    torch.testing.assert_close(var, want_var)
    torch.testing.assert_close(mean, want_mean)

    def define_var(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        fd.add_output(fd.ops.var(t0, [0], correction=0, keepdim=True))

    _, (var0,) = run(define_var, [x])
    torch.testing.assert_close(var0, x.var(0, correction=0, keepdim=True))

    def define_welford(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        avg, var_sum, n = fd.ops.welford(t0, [1])
        fd.add_output(var_sum)
        fd.add_output(n)

    _, (var_sum, n) = run(define_welford, [x])
    torch.testing.assert_close(var_sum, want_var * 776, rtol=1e-4, atol=1e-3)
    assert n.dtype == torch.int64 and bool((n == 777).all())

    def define_prod(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        fd.add_output(fd.ops.prod(t0, 1))

    y = 1.0 + 0.01 * cuda(64, 500)
    _, (p,) = run(define_prod, [y])
    torch.testing.assert_close(p, y.prod(1), rtol=1e-4, atol=1e-5)


def test_sum_of_half_accumulates_in_float():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True, dtype=DataType.Half)
        fd.add_output(fd.ops.sum(t0, [1]))
        fd.add_output(fd.ops.sum(t0, [1], dtype=DataType.Float))

    x = cuda(4, 2048, dtype=torch.float16)
    _, (half_sum, float_sum) = run(define, [x])
    assert half_sum.dtype == torch.float16 and float_sum.dtype == torch.float32
    torch.testing.assert_close(float_sum, x.float().sum(1), rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(half_sum, x.float().sum(1).half(), rtol=1e-3, atol=1e-2)


def test_clamp_addcmul_lerp():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        fd.add_output(fd.ops.clamp(t0, min=-0.5, max=0.25))
        fd.add_output(fd.ops.addcmul(t0, t1, t1, value=0.5))
        fd.add_output(fd.ops.lerp(t0, t1, t1))

    x, y = cuda(33, 70), cuda(33, 70)
    x[3, 5] = float("nan")
    _, (clamped, added, lerped) = run(define, [x, y])
    torch.testing.assert_close(clamped, x.clamp(-0.5, 0.25), equal_nan=True)
    torch.testing.assert_close(added, torch.addcmul(x, y, y, value=0.5), equal_nan=True)
    torch.testing.assert_close(lerped, torch.lerp(x, y, y), equal_nan=True)


def test_squeeze_between_kernels():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, 1, -1], contiguity=[True, None, True])
        t1 = fd.ops.squeeze(fd.ops.relu(t0), [1])
        fd.add_output(fd.ops.unsqueeze(fd.ops.sum(t1, [1]), 1))

    x = cuda(40, 1, 300)
    fd, (out,) = run(define, [x])
    torch.testing.assert_close(out, x.relu().squeeze(1).sum(1).unsqueeze(1))
    assert "ExprEval" in fd.last_scheduler_types()


def test_permute_and_reshape():
    def define(fd):
        t0 = fd.define_tensor(shape=[4, 6, 8], contiguity=True)
        fd.add_output(fd.ops.permute(t0, [2, 0, 1]))
        fd.add_output(fd.ops.relu(fd.ops.reshape(t0, [24, -1])))

    x = cuda(4, 6, 8)
    _, (permuted, reshaped) = run(define, [x])
    torch.testing.assert_close(permuted, x.permute(2, 0, 1))
    torch.testing.assert_close(reshaped, x.reshape(24, 8).relu())


def test_channels_last_input_from_pytorch():
    x = cuda(2, 8, 4, 6).to(memory_format=torch.channels_last)

    def define(fd):
        t0 = fd.from_pytorch(x)
        fd.add_output(fd.ops.mul(t0, 2.0))

    fd, (out,) = run(define, [x])
    torch.testing.assert_close(out, x * 2.0)
    assert "stride_order=[3, 0, 2, 1]" in str(fd)
    with pytest.raises(FuserError, match="is marked contiguous"):
        fd.execute([x.contiguous()])


def test_python_operators_and_constants():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1], contiguity=[True])
        t1 = fd.define_tensor(shape=[-1], contiguity=[True])
        fd.add_output(-((t0 + t1) * 2.0 - 1) / (abs(t1) + 1) ** 2)

    a, b = cuda(100), cuda(100)
    _, (out,) = run(define, [a, b])
    torch.testing.assert_close(out, -((a + b) * 2.0 - 1) / (b.abs() + 1) ** 2)


def test_cache_reuse_and_inspection():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.relu(t0))

    with FusionDefinition() as fd:
        define(fd)
    x = cuda(64, 64)
    (out1,) = fd.execute([x])
    (out2,) = fd.execute([x])
    torch.testing.assert_close(out1, x.relu())
    torch.testing.assert_close(out2, x.relu())
    assert fd._executor.num_runtimes() == 1
    fd.execute([cuda(3, 5)])
    assert fd._executor.num_runtimes() == 2
    code = fd.last_cuda_code()
    assert "__global__" in code and "relu(" in code
    assert "T1" in fd.last_scheduled_fusion_ir()


def test_execute_device_argument():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1], contiguity=[True])
        fd.add_output(fd.ops.exp(t0))

    with FusionDefinition() as fd:
        define(fd)
    x = cuda(10)
    (out,) = fd.execute([x], device=0)
    torch.testing.assert_close(out, x.exp())
    (out,) = fd.execute([x], device="cuda:0")
    assert out.device == x.device
    with pytest.raises(FuserError, match="CUDA devices"):
        fd.execute([x], device="cpu")


def test_expanded_input_declared_with_contiguity_none():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[None, True])
        fd.add_output(fd.ops.relu(t0))

    x = torch.randn(1, 70, device="cuda").expand(33, 70)
    _, (out,) = run(define, [x])
    torch.testing.assert_close(out, x.relu())


def test_expand_and_broadcast_in_dim_to_sizes_equal_torchs():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1], contiguity=True)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        n = fd.define_scalar(dtype=DataType.Int)
        row = fd.ops.broadcast_in_dim(t0, shape=t1.shape(), broadcast_dims=[1])
        fd.add_output(fd.ops.add(t1, row))
        wide = fd.ops.expand(fd.ops.broadcast(t0, [False, True]), shape=[-1, n])
        fd.add_output(fd.ops.sum(fd.ops.mul(wide, 2.0), [1]))
        fd.add_output(fd.ops.expand(fd.ops.broadcast(t0, [True, False]), shape=[3, -1]))

    w, x = cuda(70), cuda(33, 70)
    fd, (added, summed, expanded) = run(define, [w, x, 500])
    torch.testing.assert_close(added, x + w)
    torch.testing.assert_close(summed, w * 1000.0)
    assert torch.equal(expanded, w.expand(3, 70))
    # A size given at run time must agree with the axes it is joined to.
    with pytest.raises(FuserError, match="has size 71 along axis 1"):
        fd.execute([w, cuda(32, 71), 500])


def test_output_stride_order_gives_that_layout():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=True)
        fd.add_output(fd.ops.mul(t0, 2.0), stride_order=[1, 2, 0])

    x = cuda(4, 6, 8)
    _, (out,) = run(define, [x])
    torch.testing.assert_close(out, x * 2.0)
    # Dimension 2 innermost, then 0, then 1.
    assert out.stride() == x.permute(1, 0, 2).contiguous().permute(1, 0, 2).stride() == (8, 32, 1)


def test_stride_order_op_lays_out_outputs_and_intermediates():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=True)
        t1 = fd.ops.stride_order(fd.ops.mul(t0, 2.0), [1, 2, 0])
        fd.add_output(t1)
        # An intermediate in column-major order, read by a pointwise op.
        t2 = fd.ops.stride_order(fd.ops.neg(t0), [0, 1, 2])
        fd.add_output(fd.ops.add(t2, 1.0))

    x = cuda(4, 6, 8)
    _, (a, b) = run(define, [x])
    torch.testing.assert_close(a, x * 2.0)
    assert a.stride() == (8, 32, 1)
    torch.testing.assert_close(b, -x + 1.0)


def test_reshape_to_define_vector_and_shape_of_another_tensor():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        t1 = fd.define_tensor(shape=[-1], contiguity=True)
        rows = fd.define_scalar(None, dtype=DataType.Int)
        fd.add_output(fd.ops.reshape(fd.ops.relu(t0), fd.define_vector([rows, -1])))
        fd.add_output(fd.ops.reshape(fd.ops.neg(t1), fd.ops.shape(t0)))

    x, y = cuda(6, 10), cuda(60)
    _, (a, b) = run(define, [x, y, 3])
    torch.testing.assert_close(a, x.relu().reshape(3, -1))
    torch.testing.assert_close(b, (-y).reshape(6, 10))


def test_vector_inputs_give_sizes_at_each_run():
    # A random op after the vector: its seed and offset inputs come after
    # the vector's entries among the fusion's inputs.
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        v0 = fd.define_vector(2)
        t1 = fd.ops.reshape(fd.ops.relu(t0), v0)
        fd.add_output(t1)
        fd.add_output(fd.ops.mul(fd.ops.rand_like(t1), 0.0))
        fd.add_output(fd.ops.reshape(t0, [v0[1], v0[0]]))

    x = cuda(6, 10)
    fd, (a, b, c) = run(define, [x, [3, 20]])
    torch.testing.assert_close(a, x.relu().reshape(3, 20))
    assert b.shape == (3, 20) and not b.any()
    torch.testing.assert_close(c, x.reshape(20, 3))
    a, _, c = fd.execute([x, torch.Size([12, 5])])
    torch.testing.assert_close(a, x.relu().reshape(12, 5))
    torch.testing.assert_close(c, x.reshape(5, 12))
    with pytest.raises(FuserError, match="cannot be reshaped|elements"):
        fd.execute([x, [7, 9]])


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_complex_arithmetic_matches_torch(layout):
    def define(fd):
        a = fd.define_tensor(shape=[-1, -1], contiguity=True, dtype=DataType.ComplexFloat)
        b = fd.from_pytorch(b_in)
        x = fd.define_tensor(shape=[-1, -1], contiguity=True)
        fd.add_output(fd.ops.div(fd.ops.sub(fd.ops.mul(a, b), fd.ops.conj(a)), fd.ops.add(b, x)))
        fd.add_output(fd.ops.abs(b))
        fd.add_output(fd.ops.add(fd.ops.real(a), fd.ops.imag(b)))
        fd.add_output(fd.ops.eq(a, b))
        fd.add_output(fd.ops.add(fd.ops.cast(b, DataType.ComplexDouble), fd.ops.mul(x, 2.0)))
        fd.add_output(fd.ops.cast(a, DataType.Float))

    a = torch.randn(96, 130, dtype=torch.complex64, device="cuda")
    b_in = {
        "contiguous": torch.randn(96, 130, dtype=torch.complex64, device="cuda"),
        "transposed": torch.randn(130, 96, dtype=torch.complex64, device="cuda").t(),
        "sliced": torch.randn(96, 260, dtype=torch.complex64, device="cuda")[:, ::2],
    }[layout]
    x = cuda(96, 130)
    fd, out = run(define, [a, b_in, x])
    b = b_in
    torch.testing.assert_close(out[0], (a * b - a.conj()) / (b + x))
    torch.testing.assert_close(out[1], b.abs())
    torch.testing.assert_close(out[2], a.real + b.imag)
    assert torch.equal(out[3], a == b)
    torch.testing.assert_close(out[4], b.to(torch.complex128) + x * 2.0)
    assert out[4].dtype == torch.complex128
    torch.testing.assert_close(out[5], a.real)
    assert fd.last_scheduler_types() == ["PointWise"]


def test_cummax_and_cummin_match_torch():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        for t in fd.ops.cummax(fd.ops.mul(t0, 2.0), 0) + fd.ops.cummin(t0, 1):
            fd.add_output(t)

    x = cuda(64, 33)
    _, (a, ai, b, bi) = run(define, [x])
    want_a, want_ai = torch.cummax(x * 2.0, 0)
    want_b, want_bi = torch.cummin(x, 1)
    assert torch.equal(a, want_a) and torch.equal(ai, want_ai)
    assert torch.equal(b, want_b) and torch.equal(bi, want_bi)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16])
def test_narrow_integers_wrap_and_sum_as_torch(dtype):
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True, dtype=dtype)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=True, dtype=dtype)
        fd.add_output(fd.ops.add(t0, t1))
        fd.add_output(fd.ops.sum(t0, [1]))

    low = 0 if dtype == torch.uint8 else -128
    a = torch.randint(low, 127, (40, 300), device="cuda", dtype=dtype)
    b = torch.randint(low, 127, (40, 300), device="cuda", dtype=dtype)
    _, (added, summed) = run(define, [a, b])
    assert torch.equal(added, a + b)
    assert torch.equal(summed, a.sum(1))


FLOAT8 = {torch.float8_e4m3fn: DataType.Float8_e4m3fn, torch.float8_e5m2: DataType.Float8_e5m2}


@pytest.mark.parametrize("dtype", list(FLOAT8))
def test_float8_casts_equal_torchs(dtype):
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        t1 = fd.ops.cast(t0, FLOAT8[dtype])
        fd.add_output(t1)
        fd.add_output(fd.ops.mul(fd.ops.cast(t1, DataType.Float), 2.0))

    x = torch.randn(40, 300, device="cuda") * 300
    x[0, :4] = torch.tensor([float("nan"), float("inf"), 470.0, 61440.0])
    _, (x8, doubled) = run(define, [x])
    assert x8.dtype == dtype
    assert torch.equal(x8.view(torch.uint8), x.to(dtype).view(torch.uint8))
    torch.testing.assert_close(doubled, x.to(dtype).float() * 2, equal_nan=True)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("op", ["triu", "tril"])
def test_triangles_of_every_layout_equal_torchs(layout, op):
    x = {
        "contiguous": lambda: cuda(67, 130),
        "transposed": lambda: cuda(130, 67).t(),
        "strided": lambda: cuda(67, 260)[:, ::2],
    }[layout]()
    for diagonal in (-2, 0, 3):
        with FusionDefinition() as fd:
            t0 = fd.from_pytorch(x)
            fd.add_output(getattr(fd.ops, op)(t0, diagonal))
        (out,) = fd.execute([x])
        assert torch.equal(out, getattr(torch, op)(x, diagonal))


def test_factories_without_tensor_inputs_run_on_the_gpu():
    with FusionDefinition() as fd:
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.iota(n, 5, 3, DataType.Int))
        fd.add_output(fd.ops.full([2, n], -0.5, DataType.Float))
        fd.add_output(fd.ops.ones([n], DataType.BFloat16))
    counted, filled, ones = fd.execute([1000])
    assert counted.is_cuda and filled.is_cuda and ones.is_cuda
    assert torch.equal(counted, torch.arange(5, 3005, 3, device="cuda"))
    assert torch.equal(filled, torch.full((2, 1000), -0.5, device="cuda"))
    assert torch.equal(ones, torch.ones(1000, dtype=torch.bfloat16, device="cuda"))


def test_random_values_do_not_depend_on_the_layout():
    x = torch.zeros(129, 257, device="cuda")
    outs = []
    for t in (x, x.t().contiguous().t()):
        with FusionDefinition() as fd:
            t0 = fd.from_pytorch(t)
            fd.add_output(fd.ops.add(t0, fd.ops.rand_like(t0, rng_seed=7, rng_offset=4)))
            fd.add_output(fd.ops.add(t0, fd.ops.randn_like(t0, rng_seed=7, rng_offset=4)))
        outs.append(fd.execute([t]))
    assert torch.equal(outs[0][0], outs[1][0])
    assert torch.equal(outs[0][1], outs[1][1])
    uniform = outs[0][0]
    assert 0.0 <= uniform.min().item() and uniform.max().item() < 1.0


def test_random_without_a_seed_follows_torchs_generator():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=True)
        fd.add_output(fd.ops.mul(t0, fd.ops.rand_like(t0)))
    x = torch.ones(100_000, device="cuda")
    torch.manual_seed(1234)
    (a,) = fd.execute([x])
    (b,) = fd.execute([x])
    torch.manual_seed(1234)
    (c,) = fd.execute([x])
    assert torch.equal(a, c)
    assert not torch.equal(a, b)
    assert abs(a.mean().item() - 0.5) < 0.01


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_cumsum_inside_a_fusion_equals_torchs(layout):
    x = cuda(65, 300) if layout == "contiguous" else cuda(300, 65).t()
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        fd.add_output(fd.ops.add(fd.ops.cumsum(fd.ops.mul(t0, 2.0), 1), 1.0))
        fd.add_output(fd.ops.cumprod(t0, 0))
    total, product = fd.execute([x])
    torch.testing.assert_close(total, torch.cumsum(x * 2, 1) + 1)
    torch.testing.assert_close(product, torch.cumprod(x, 0))


def test_indexing_ops_inside_a_fusion_equal_torchs():
    x = cuda(300, 200).t()
    rows = torch.randint(0, 200, (50,), device="cuda")
    # Distinct columns per row: CUDA's scatter of duplicates keeps any one.
    cols = torch.stack([torch.randperm(300, device="cuda")[:7] for _ in range(200)])
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        r = fd.from_pytorch(rows)
        c = fd.from_pytorch(cols)
        y = fd.ops.mul(t0, 2.0)
        fd.add_output(fd.ops.add(fd.ops.index_select(y, r, 0), 1.0))
        fd.add_output(fd.ops.take_along_axis(y, c, 1))
        fd.add_output(fd.ops.select(y, -1, 0))
        fd.add_output(fd.ops.scatter(y, c, fd.ops.neg(y), 1))
    picked, gathered, one, scattered = fd.execute([x, rows, cols])
    y = x * 2
    assert torch.equal(picked, torch.index_select(y, 0, rows) + 1)
    assert torch.equal(gathered, torch.gather(y, 1, cols))
    assert torch.equal(one, y.select(0, -1))
    assert torch.equal(scattered, y.scatter(1, cols, -y))
    with pytest.raises(FuserError, match="index_select: the index holds"):
        fd.execute([x, rows + 200, cols])
    # The fusion (and the device) stay usable.
    assert torch.equal(fd.execute([x, rows, cols])[1], torch.gather(y, 1, cols))


def test_slice_pad_cat_inside_a_fusion_equal_torchs():
    x = cuda(300, 200).t()
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        y = fd.ops.mul(t0, 2.0)
        head = fd.ops.slice(y, [0, 0], [200, 64])
        tail = fd.ops.slice(y, [0, 64], [200, 300])
        fd.add_output(fd.ops.add(fd.ops.cat([tail, head], 1), 1.0))
        fd.add_output(fd.ops.pad(y, [3, -2], -1.0))
        fd.add_output(fd.ops.slice(y, [-5, 1], [200, -1], [2, 3]))
    rotated, padded, strided = fd.execute([x])
    y = x * 2
    assert torch.equal(rotated, torch.cat([y[:, 64:], y[:, :64]], 1) + 1)
    assert torch.equal(padded, torch.nn.functional.pad(y, [3, -2], value=-1.0))
    assert torch.equal(strided, y[-5:200:2, 1:-1:3])


def test_pad_and_cat_are_read_in_place_by_one_kernel():
    # doc/ops.md "Slicing, padding and concatenation": the kernel loops
    # over the output and reads each input where the position falls in it.
    x = cuda(64, 300).to(torch.bfloat16)
    y = cuda(300, 40).to(torch.bfloat16).t()
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        t1 = fd.from_pytorch(y)
        padded = fd.ops.pad(t0, [2, 3, 0, 0], 0.5)
        joined = fd.ops.cat([t0, t1], 0)
        fd.add_output(fd.ops.cast(fd.ops.mul(padded, 2.0), DataType.BFloat16))
        fd.add_output(fd.ops.cast(fd.ops.neg(joined), DataType.BFloat16))
    padded_out, joined_out = fd.execute([x, y])
    assert torch.equal(
        padded_out, (torch.nn.functional.pad(x, [2, 3], value=0.5).float() * 2).bfloat16()
    )
    assert torch.equal(joined_out, -torch.cat([x, y], 0))
    # Two loops of different shapes: one pointwise kernel each.
    assert fd.last_scheduler_types() == ["PointWise", "PointWise"]


def test_rotary_rotation_is_one_kernel():
    # cat of computed parts, rewritten over shifted reads of x
    # (doc/ops.md "Slicing, padding and concatenation").
    x, cos, sin = cuda(32, 128), cuda(32, 128), cuda(32, 128)
    with FusionDefinition() as fd:
        t, c, s = (fd.from_pytorch(v) for v in (x, cos, sin))
        x1 = fd.ops.slice(t, [0, 0], [32, 64])
        x2 = fd.ops.slice(t, [0, 64], [32, 128])
        rotated = fd.ops.cat([fd.ops.neg(x2), x1], 1)
        fd.add_output(fd.ops.add(fd.ops.mul(t, c), fd.ops.mul(rotated, s)))
    (out,) = fd.execute([x, cos, sin])
    expected = x * cos + torch.cat([-x[:, 64:], x[:, :64]], 1) * sin
    torch.testing.assert_close(out, expected)
    assert fd.last_scheduler_types() == ["PointWise"]


def test_an_output_aliasing_an_input_updates_it_in_place():
    with FusionDefinition() as fd:
        p = fd.define_tensor(shape=[-1], contiguity=True)
        g = fd.define_tensor(shape=[-1], contiguity=True)
        fd.add_output(fd.ops.sub(p, fd.ops.mul(g, 0.1)), alias_input=p)
        fd.add_output(fd.ops.mul(g, 2.0))
    param = cuda(1000)
    grad = cuda(1000)
    expected = param - grad * 0.1
    pointer = param.data_ptr()
    (doubled,) = fd.execute([param, grad])
    assert param.data_ptr() == pointer
    torch.testing.assert_close(param, expected)
    torch.testing.assert_close(doubled, grad * 2)
