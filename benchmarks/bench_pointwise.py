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
import torch.nn.functional as F

from harness import Case, define_input, run_benchmark


def elements(size_mib, dtype):
    return size_mib * 1024 * 1024 // torch.tensor([], dtype=dtype).element_size()


def rows_of(numel, width=1024):
    return max(1, numel // width), width


def case_list():
    f32, bf16 = torch.float32, torch.bfloat16
    dev = "cuda"

    def one(dtype):
        return lambda mib: [torch.randn(elements(mib, dtype), device=dev, dtype=dtype)]

    def two(dtype):
        return lambda mib: [
            torch.randn(elements(mib, dtype), device=dev, dtype=dtype) for _ in range(2)
        ]

    def nhwc(mib):
        n = max(1, elements(mib, f32) // (64 * 32 * 32))
        return [
            torch.randn(n, 64, 32, 32, device=dev).contiguous(
                memory_format=torch.channels_last
            )
        ]

    def bias(mib):
        m, n = rows_of(elements(mib, f32))
        return [torch.randn(m, n, device=dev), torch.randn(n, device=dev)]

    def nbytes(t):
        return t.numel() * t.element_size()

    def d_copy(fd, m, ins):
        fd.add_output(fd.ops.set(define_input(fd, m, ins[0])))

    def d_add(fd, m, ins):
        fd.add_output(
            fd.ops.add(define_input(fd, m, ins[0]), define_input(fd, m, ins[1]))
        )

    def d_seed(fd, m, ins):
        # The seed layout: allocation [i/2, 2] of a 1-D input, loop untouched.
        # (fuser's domain API: nvFuser runs the plain copy of the same bytes.)
        t = define_input(fd, m, ins[0])
        if hasattr(fd, "split"):
            outer, inner = fd.split(t.axis(0), 2)
            t.set_allocation_domain([outer, inner], [True, True])
        fd.add_output(fd.ops.set(t))

    def d_relu(fd, m, ins):
        fd.add_output(fd.ops.relu(define_input(fd, m, ins[0])))

    def d_gelu(fd, m, ins):
        t = define_input(fd, m, ins[0])
        fd.add_output(fd.ops.cast(fd.ops.gelu(t), m.DataType.BFloat16))

    def d_bias(fd, m, ins):
        x = define_input(fd, m, ins[0])
        b = define_input(fd, m, ins[1])
        bb = fd.ops.broadcast_in_dim(b, list(ins[0].shape), [1])
        fd.add_output(fd.ops.add(x, bb))

    def d_cast(fd, m, ins):
        fd.add_output(fd.ops.cast(define_input(fd, m, ins[0]), m.DataType.BFloat16))

    return [
        Case("copy", one(f32), lambda x: x.clone(), d_copy, lambda i: 2 * nbytes(i[0])),
        Case("add", two(f32), lambda a, b: a + b, d_add, lambda i: 3 * nbytes(i[0])),
        Case(
            "seed_split_alloc_copy",
            one(f32),
            lambda x: x.clone(),
            d_seed,
            lambda i: 2 * nbytes(i[0]),
        ),
        Case("nhwc_relu", nhwc, torch.relu, d_relu, lambda i: 2 * nbytes(i[0])),
        Case(
            "bf16_gelu",
            one(bf16),
            lambda x: F.gelu(x),
            d_gelu,
            lambda i: 2 * nbytes(i[0]),
        ),
        Case(
            "bias_add",
            bias,
            lambda x, b: x + b,
            d_bias,
            lambda i: 2 * nbytes(i[0]) + nbytes(i[1]),
        ),
        Case(
            "cast_f32_bf16",
            one(f32),
            lambda x: x.to(torch.bfloat16),
            d_cast,
            lambda i: nbytes(i[0]) + nbytes(i[0]) // 2,
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
