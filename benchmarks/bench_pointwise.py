"""Pointwise bandwidth of fuser against nvFuser, PyTorch eager and
torch.compile.

One run measures, for each fusion and size, the achieved bandwidth
(bytes read + bytes written, over the median time) of fuser, nvFuser (the
same definition code, through nvfuser_direct, when it imports), eager
PyTorch and torch.compile, plus a device-to-device copy of the same bytes
as the ceiling. Times are CUDA-event medians from triton.testing.do_bench (which
clears the L2 between runs); inputs are also rotated among several copies
when a size fits in L2. Results go to benchmarks/results/ as CSV, a
markdown table and, when matplotlib is there, a plot.

    python3 benchmarks/bench_pointwise.py [--sizes-mib 1,16,64,256,1024]
"""

import sys

import torch

from harness import Case, define_input, run_benchmark


def elements(size_mib, dtype):
    return size_mib * 1024 * 1024 // torch.tensor([], dtype=dtype).element_size()


def rows_of(numel, width=1024):
    return max(1, numel // width), width


def nbytes(t):
    return t.numel() * t.element_size()


def to_float(fd, m, t):
    return fd.ops.cast(t, m.DataType.Float)


def tanh_gelu_torch(x):
    xf = x.float()
    inner = 0.7978845608028654 * (xf + 0.044715 * xf * xf * xf)
    return (0.5 * xf * (1.0 + torch.tanh(inner))).to(x.dtype)


DROPOUT_P = 0.1


def case_list():
    """The cases of issue 18's table and its additions. 2-D inputs are
    [rows, 1024] (bias add: [8192, N]); NHWC inputs are channels-last
    [N, 64, 32, 32]."""
    f32, bf16 = torch.float32, torch.bfloat16
    dev = "cuda"

    def matrices(dtype, count):
        def make(mib):
            shape = rows_of(elements(mib, dtype))
            return [torch.randn(*shape, device=dev, dtype=dtype) for _ in range(count)]

        return make

    def nhwc(with_channel_vectors):
        def make(mib):
            n = max(1, elements(mib, f32) // (64 * 32 * 32))
            x = torch.randn(n, 64, 32, 32, device=dev).contiguous(memory_format=torch.channels_last)
            if not with_channel_vectors:
                return [x]
            return [x, torch.randn(64, device=dev), torch.randn(64, device=dev)]

        return make

    def bias(mib):
        numel = elements(mib, f32)
        return [
            torch.randn(8192, numel // 8192, device=dev),
            torch.randn(numel // 8192, device=dev),
        ]

    def d_copy(fd, m, ins):
        fd.add_output(fd.ops.set(define_input(fd, m, ins[0])))

    def d_add(fd, m, ins):
        fd.add_output(fd.ops.add(define_input(fd, m, ins[0]), define_input(fd, m, ins[1])))

    def d_relu_add_mul(fd, m, ins):
        a, b = (define_input(fd, m, t) for t in ins)
        fd.add_output(fd.ops.mul(fd.ops.relu(fd.ops.add(a, b)), 2.0))

    def d_seed(fd, m, ins):
        # The seed layout: allocation [i/2, 2] of the inner axis, loop
        # untouched. (fuser's domain API: nvFuser runs the plain copy of the
        # same bytes.)
        t = define_input(fd, m, ins[0])
        if hasattr(fd, "split"):
            outer, inner = fd.split(t.axis(1), 2)
            t.set_allocation_domain([t.axis(0), outer, inner], [True, True, True])
        fd.add_output(fd.ops.set(t))

    def d_relu(fd, m, ins):
        fd.add_output(fd.ops.relu(define_input(fd, m, ins[0])))

    def d_tanh_gelu(fd, m, ins):
        x = to_float(fd, m, define_input(fd, m, ins[0]))
        cube = fd.ops.mul(fd.ops.mul(x, x), x)
        inner = fd.ops.mul(fd.ops.add(x, fd.ops.mul(cube, 0.044715)), 0.7978845608028654)
        y = fd.ops.mul(fd.ops.mul(x, 0.5), fd.ops.add(fd.ops.tanh(inner), 1.0))
        fd.add_output(fd.ops.cast(y, m.DataType.BFloat16))

    def d_bias(fd, m, ins):
        x = define_input(fd, m, ins[0])
        b = define_input(fd, m, ins[1])
        fd.add_output(fd.ops.add(x, fd.ops.broadcast_in_dim(b, list(ins[0].shape), [1])))

    def d_fma3(fd, m, ins):
        a, b, c = (to_float(fd, m, define_input(fd, m, t)) for t in ins)
        fd.add_output(fd.ops.cast(fd.ops.add(fd.ops.mul(a, b), c), m.DataType.BFloat16))

    def d_scale_shift(fd, m, ins):
        x = define_input(fd, m, ins[0])
        shape = list(ins[0].shape)
        scale = fd.ops.broadcast_in_dim(define_input(fd, m, ins[1]), shape, [1])
        shift = fd.ops.broadcast_in_dim(define_input(fd, m, ins[2]), shape, [1])
        fd.add_output(fd.ops.add(fd.ops.mul(x, scale), shift))

    def d_cast(fd, m, ins):
        fd.add_output(fd.ops.cast(define_input(fd, m, ins[0]), m.DataType.BFloat16))

    def d_cast_chain(fd, m, ins):
        # fp32 -> bf16 -> fp32 (rounding kept), scaled, -> fp16.
        x = fd.ops.cast(
            fd.ops.cast(define_input(fd, m, ins[0]), m.DataType.BFloat16), m.DataType.Float
        )
        fd.add_output(fd.ops.cast(fd.ops.mul(x, 0.5), m.DataType.Half))

    def d_dropout(fd, m, ins):
        # nn.functional.dropout(x, DROPOUT_P) of a bf16 x, drawn in float.
        x = to_float(fd, m, define_input(fd, m, ins[0]))
        lo = fd.define_scalar(0.0, dtype=m.DataType.Float)
        hi = fd.define_scalar(1.0, dtype=m.DataType.Float)
        keep = fd.ops.lt(
            fd.ops.uniform(lo, hi, list(ins[0].shape), dtype=m.DataType.Float), 1.0 - DROPOUT_P
        )
        dropped = fd.ops.where(keep, fd.ops.mul(x, 1.0 / (1.0 - DROPOUT_P)), 0.0)
        fd.add_output(fd.ops.cast(dropped, m.DataType.BFloat16))

    def check_dropout(got, ins):
        kept = got[0] != 0
        torch.testing.assert_close(
            got[0][kept].float(), ins[0][kept].float() / (1 - DROPOUT_P), rtol=2e-2, atol=2e-2
        )
        dropped = 1 - kept[ins[0] != 0].float().mean().item()
        assert abs(dropped - DROPOUT_P) < 0.01, f"dropped {dropped:.4f}, not {DROPOUT_P}"

    def d_pad_add(fd, m, ins):
        # Each row padded by one element on each side (doc/ops.md: read in
        # place through a predicate), plus one.
        fd.add_output(fd.ops.add(fd.ops.pad(define_input(fd, m, ins[0]), [1, 1], 0.0), 1.0))

    def d_cat_mul(fd, m, ins):
        a, b = (define_input(fd, m, t) for t in ins)
        fd.add_output(fd.ops.mul(fd.ops.cat([a, b], 1), 2.0))

    def d_slice_mul(fd, m, ins):
        x = define_input(fd, m, ins[0])
        rows, cols = ins[0].shape
        fd.add_output(fd.ops.mul(fd.ops.slice(x, [0, cols // 4], [rows, 3 * cols // 4]), 2.0))

    def d_rope(fd, m, ins):
        # Rotary embeddings' rotation: x * cos + cat(-x2, x1) * sin.
        x, cos, sin = (define_input(fd, m, t) for t in ins)
        rows, cols = ins[0].shape
        x1 = fd.ops.slice(x, [0, 0], [rows, cols // 2])
        x2 = fd.ops.slice(x, [0, cols // 2], [rows, cols])
        rotated = fd.ops.cat([fd.ops.neg(x2), x1], 1)
        fd.add_output(fd.ops.add(fd.ops.mul(x, cos), fd.ops.mul(rotated, sin)))

    def t_rope(x, cos, sin):
        half = x.shape[1] // 2
        return x * cos + torch.cat([-x[:, half:], x[:, :half]], 1) * sin

    one_f32, two_f32 = matrices(f32, 1), matrices(f32, 2)
    return [
        Case("copy", one_f32, lambda x: x.clone(), d_copy, lambda i: 2 * nbytes(i[0])),
        Case("add", two_f32, lambda a, b: a + b, d_add, lambda i: 3 * nbytes(i[0])),
        Case(
            "relu_add_mul2",
            two_f32,
            lambda a, b: torch.relu(a + b) * 2,
            d_relu_add_mul,
            lambda i: 3 * nbytes(i[0]),
        ),
        Case(
            "bf16_tanh_gelu",
            matrices(bf16, 1),
            tanh_gelu_torch,
            d_tanh_gelu,
            lambda i: 2 * nbytes(i[0]),
            tol=2e-2,
        ),
        Case(
            "bias_add_8192xN",
            bias,
            lambda x, b: x + b,
            d_bias,
            lambda i: 2 * nbytes(i[0]) + nbytes(i[1]),
        ),
        Case("nhwc_relu", nhwc(False), torch.relu, d_relu, lambda i: 2 * nbytes(i[0])),
        Case(
            "bf16_a_times_b_plus_c",
            matrices(bf16, 3),
            lambda a, b, c: (a.float() * b.float() + c.float()).to(torch.bfloat16),
            d_fma3,
            lambda i: 4 * nbytes(i[0]),
            tol=2e-2,
        ),
        Case(
            "nhwc_scale_shift",
            nhwc(True),
            lambda x, s, b: x * s[:, None, None] + b[:, None, None],
            d_scale_shift,
            lambda i: 2 * nbytes(i[0]) + 2 * nbytes(i[1]),
        ),
        Case(
            "cast_f32_bf16",
            one_f32,
            lambda x: x.to(torch.bfloat16),
            d_cast,
            lambda i: nbytes(i[0]) + nbytes(i[0]) // 2,
        ),
        Case(
            "cast_chain_f32_bf16_f32_f16",
            one_f32,
            lambda x: (x.to(torch.bfloat16).float() * 0.5).to(torch.float16),
            d_cast_chain,
            lambda i: nbytes(i[0]) + nbytes(i[0]) // 2,
        ),
        Case(
            "pad_rows_add1",
            one_f32,
            lambda x: torch.nn.functional.pad(x, [1, 1]) + 1,
            d_pad_add,
            lambda i: nbytes(i[0]) + i[0].shape[0] * (i[0].shape[1] + 2) * 4,
        ),
        Case(
            "cat_cols_mul2",
            two_f32,
            lambda a, b: torch.cat([a, b], 1) * 2,
            d_cat_mul,
            lambda i: 4 * nbytes(i[0]),
        ),
        Case(
            "slice_half_cols_mul2",
            one_f32,
            lambda x: x[:, x.shape[1] // 4 : 3 * x.shape[1] // 4] * 2,
            d_slice_mul,
            lambda i: nbytes(i[0]),
        ),
        Case("rope_rotate_half", matrices(f32, 3), t_rope, d_rope, lambda i: 4 * nbytes(i[0])),
        Case(
            "dropout_bf16",
            matrices(bf16, 1),
            lambda x: torch.nn.functional.dropout(x, DROPOUT_P),
            d_dropout,
            lambda i: 2 * nbytes(i[0]),
            check=check_dropout,
        ),
        Case(
            "seed_split_alloc_copy",
            one_f32,
            lambda x: x.clone(),
            d_seed,
            lambda i: 2 * nbytes(i[0]),
        ),
    ]


def main():
    return run_benchmark(
        "pointwise",
        "Pointwise bandwidth",
        "GB/s = (bytes read + bytes written) / median time. `copy` is a "
        "device-to-device copy of the same number of bytes in the same run.",
        case_list,
        "1,16,64,256,1024",
    )


if __name__ == "__main__":
    sys.exit(main())
