"""Reduction bandwidth of fuser against nvFuser, PyTorch eager and
torch.compile (doc/reduction.md).

For each case and size (the bytes of the inputs), one run measures the
achieved bandwidth, (bytes read + bytes written) / median time, of fuser,
nvFuser (the same definition code, through nvfuser_direct, when it imports),
eager PyTorch and torch.compile, plus a device-to-device copy that moves the
same number of bytes (half read, half written) as the ceiling. A reduction
only reads, so more than 100% of the copy is possible. Results go to
benchmarks/results/reduction.{csv,md,png}.

    python3 benchmarks/bench_reduction.py [--sizes-mib 64,256,1024] [--cases a,b]
"""

import sys

import torch

from harness import Case, define_input, run_benchmark


def elements(size_mib, dtype):
    return size_mib * 1024 * 1024 // torch.tensor([], dtype=dtype).element_size()


def nbytes(t):
    return t.numel() * t.element_size()


def case_list():
    f32, bf16 = torch.float32, torch.bfloat16

    def matrix(shape_of, dtype=f32, count=1):
        """Inputs of shape shape_of(numel) for a size in MiB."""

        def make(mib):
            shape = shape_of(elements(mib, dtype))
            return [torch.randn(*shape, device="cuda", dtype=dtype) for _ in range(count)]

        return make

    def nhwc(channels):
        def make(mib):
            n = max(1, elements(mib, f32) // (channels * 32 * 32))
            x = torch.randn(n, channels, 32, 32, device="cuda")
            return [x.contiguous(memory_format=torch.channels_last)]

        return make

    def read_and_write(inputs, outputs_numel, out_bytes=4):
        return sum(nbytes(t) for t in inputs) + outputs_numel * out_bytes

    def d_sum(dims, dtype=None):
        def define(fd, m, ins):
            t = define_input(fd, m, ins[0])
            if dtype is None:
                fd.add_output(fd.ops.sum(t, dims))
            else:
                fd.add_output(fd.ops.sum(t, dims, dtype=m.DataType.Float))

        return define

    def d_var_mean(dims):
        def define(fd, m, ins):
            var, mean = fd.ops.var_mean(define_input(fd, m, ins[0]), dims)
            fd.add_output(var)
            fd.add_output(mean)

        return define

    def d_sum_xy(fd, m, ins):
        x = define_input(fd, m, ins[0])
        y = define_input(fd, m, ins[1])
        fd.add_output(fd.ops.sum(fd.ops.mul(x, y), [1]))

    shapes = {
        "8192xN": lambda n: (8192, max(1, n // 8192)),
        "Nx1024": lambda n: (max(1, n // 1024), 1024),
        "Nx128": lambda n: (max(1, n // 128), 128),
        "64xN": lambda n: (64, max(1, n // 64)),
    }
    cases = []
    for label, shape_of in shapes.items():
        for axis, kind in ((1, "row"), (0, "column")):
            cases.append(
                Case(
                    f"{kind}_sum_{label}",
                    matrix(shape_of),
                    lambda x, a=axis: x.sum(a),
                    d_sum([axis]),
                    lambda i, a=axis: read_and_write(i, i[0].shape[1 - a]),
                )
            )
    for channels in (64, 256):
        cases.append(
            Case(
                f"nhwc_sum_C{channels}",
                nhwc(channels),
                lambda x: x.sum((0, 2, 3)),
                d_sum([0, 2, 3]),
                lambda i: read_and_write(i, i[0].shape[1]),
            )
        )
        cases.append(
            Case(
                f"nhwc_var_mean_C{channels}",
                nhwc(channels),
                lambda x: torch.var_mean(x, (0, 2, 3)),
                d_var_mean([0, 2, 3]),
                lambda i: read_and_write(i, 2 * i[0].shape[1]),
            )
        )
    cases.append(
        Case(
            "bf16_row_sum_8192xN",
            matrix(shapes["8192xN"], bf16),
            lambda x: x.sum(1, dtype=torch.float32),
            d_sum([1], dtype="float"),
            lambda i: read_and_write(i, i[0].shape[0]),
        )
    )
    cases.append(
        Case(
            "sum_x_times_y_8192xN",
            matrix(shapes["8192xN"], count=2),
            lambda x, y: (x * y).sum(1),
            d_sum_xy,
            lambda i: read_and_write(i, i[0].shape[0]),
        )
    )
    return cases


def main():
    return run_benchmark(
        "reduction",
        "Reduction bandwidth",
        "GB/s = (bytes read + bytes written) / median time; `copy` is a "
        "device-to-device copy moving the same number of bytes (half read, "
        "half written) in the same run, so a reduction, which only reads, can "
        "exceed 100%. MiB is the size of the inputs.",
        case_list,
        "64,256,1024",
    )


if __name__ == "__main__":
    sys.exit(main())
