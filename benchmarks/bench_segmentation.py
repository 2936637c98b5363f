"""Segmented fusions: the kernels each frontend launches and its time, for
fusions no single kernel of fuser takes (doc/segmentation.md), against
nvFuser, PyTorch eager and torch.compile measured in the same run.

Each row: the number of GPU kernels one call launches (counted with
torch.profiler; copies and memsets left out), the median time
(triton.testing.do_bench, CUDA events, inputs rotated past L2), and GB/s of
the fewest bytes the fusion must move (every input read once, every output
written once). A last table is the host time of a cache hit from Python on
tiny inputs: a fusion of three reduction segments against a single
reduction kernel. Results go to benchmarks/results/segmentation.{csv,md,png}.

    python3 benchmarks/bench_segmentation.py [--cases a,b] [--out DIR]
"""

import argparse
import math
import os
import sys
import time

import torch

from harness import L2_BYTES, define_input, frontends, fusion_of
from kernel_table import kernel_table, kernels_per_call, plot_times, timed_row, write_csv

EPS = 1e-5


def nbytes(t):
    return t.numel() * t.element_size()


def along(fd, t, like, dims):
    return fd.ops.broadcast_in_dim(t, list(like.shape), dims)


def d_softmax(fd, x, like, dim):
    """softmax of x along `dim` (0 or 1) of a 2-D tensor."""
    keep = [1 - dim]
    mx = along(fd, fd.ops.max(x, [dim]), like, keep)
    e = fd.ops.exp(fd.ops.sub(x, mx))
    s = along(fd, fd.ops.sum(e, [dim]), like, keep)
    return fd.ops.div(e, s)


class Case:
    def __init__(self, name, make_inputs, torch_fn, define, tol=1e-3):
        self.name = name
        self.make_inputs = make_inputs
        self.torch_fn = torch_fn
        self.define = define
        self.tol = tol


def case_list():
    cases = []

    # Sum over columns, scale the rows by it, sum over rows.
    def d_two_axes(fd, m, ins):
        x = define_input(fd, m, ins[0])
        rows = along(fd, fd.ops.sum(x, [1]), ins[0], [0])
        fd.add_output(fd.ops.sum(fd.ops.mul(x, rows), [0]))

    cases.append(
        Case(
            "two_axes_sum_8192x8192",
            lambda: [torch.randn(8192, 8192, device="cuda")],
            lambda x: (x * x.sum(1, keepdim=True)).sum(0),
            d_two_axes,
            tol=5e-2,
        )
    )

    # softmax along rows, then along columns of the result.
    def d_softmax_twice(fd, m, ins):
        x = define_input(fd, m, ins[0])
        fd.add_output(d_softmax(fd, d_softmax(fd, x, ins[0], 1), ins[0], 0))

    cases.append(
        Case(
            "softmax_rows_then_columns_8192x8192",
            lambda: [torch.randn(8192, 8192, device="cuda")],
            lambda x: torch.softmax(torch.softmax(x, 1), 0),
            d_softmax_twice,
            tol=1e-5,
        )
    )

    # A softmax whose rows (4 MiB each) no block holds.
    def d_softmax_rows(fd, m, ins):
        x = define_input(fd, m, ins[0])
        fd.add_output(d_softmax(fd, x, ins[0], 1))

    cases.append(
        Case(
            "softmax_huge_rows_64x1M",
            lambda: [torch.randn(64, 1 << 20, device="cuda")],
            lambda x: torch.softmax(x, 1),
            d_softmax_rows,
            tol=1e-5,
        )
    )

    # layer_norm(a @ b) over the last axis, bf16 with float statistics.
    def d_matmul_ln(fd, m, ins):
        a = define_input(fd, m, ins[0])
        b = define_input(fd, m, ins[1])
        y = fd.ops.cast(fd.ops.matmul(a, b), m.DataType.Float)
        var, mean = fd.ops.var_mean(y, [1], 0)
        invstd = fd.ops.rsqrt(fd.ops.add(var, EPS))
        shape = [ins[0].shape[0], ins[1].shape[1]]
        centered = fd.ops.sub(y, fd.ops.broadcast_in_dim(mean, shape, [0]))
        out = fd.ops.mul(centered, fd.ops.broadcast_in_dim(invstd, shape, [0]))
        fd.add_output(fd.ops.cast(out, m.DataType.BFloat16))

    def t_matmul_ln(a, b):
        y = (a @ b).float()
        return torch.nn.functional.layer_norm(y, [y.shape[1]], eps=EPS).to(a.dtype)

    cases.append(
        Case(
            "matmul_layer_norm_8192x4096x4096",
            lambda: [
                torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16),
                torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16),
            ],
            t_matmul_ln,
            d_matmul_ln,
            tol=5e-2,
        )
    )

    # Sum over the last axis, view [B, S] as [B, S / 8, 8], sum the middle.
    def d_reshape(fd, m, ins):
        x = define_input(fd, m, ins[0])
        b, s, _ = ins[0].shape
        r = fd.ops.reshape(fd.ops.sum(x, [2]), [b, s // 8, 8])
        fd.add_output(fd.ops.sum(r, [1]))

    cases.append(
        Case(
            "sum_reshape_sum_64x4096x256",
            lambda: [torch.randn(64, 4096, 256, device="cuda")],
            lambda x: x.sum(2).reshape(64, -1, 8).sum(1),
            d_reshape,
            tol=5e-2,
        )
    )

    # relu(x + 1) * 2 cut after the add.
    def d_cut(fd, m, ins):
        x = define_input(fd, m, ins[0])
        cut = fd.ops.segment_set(fd.ops.add(x, 1.0))
        fd.add_output(fd.ops.mul(fd.ops.relu(cut), 2.0))

    cases.append(
        Case(
            "segment_set_pointwise_8192x8192",
            lambda: [torch.randn(8192, 8192, device="cuda")],
            lambda x: torch.relu(x + 1.0) * 2.0,
            d_cut,
        )
    )
    return cases


def prepare(case):
    """The inputs of `case`, eager's outputs, the fewest bytes a call moves
    and the input sets to rotate through (at most 4)."""
    inputs = case.make_inputs()
    outputs = case.torch_fn(*inputs)
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    moved = sum(nbytes(t) for t in inputs) + sum(nbytes(t) for t in outputs)
    copies = max(1, math.ceil(2 * L2_BYTES / max(moved, 1)))
    input_sets = [inputs] + [[t.clone() for t in inputs] for _ in range(min(copies, 4) - 1)]
    return inputs, outputs, moved, input_sets


def measure(case, compilers):
    inputs, outputs, moved, input_sets = prepare(case)
    row = {"case": case.name, "bytes_moved": moved}
    runners = {}
    for name, module in compilers:
        try:
            fd = fusion_of(module, case.define, inputs)
            got = fd.execute(inputs)
            for g, e in zip(got, outputs):
                torch.testing.assert_close(g, e, rtol=case.tol, atol=case.tol)
        except Exception as error:  # noqa: BLE001
            print(f"  {name} cannot run {case.name}: {error}", flush=True)
            continue
        runners[name] = lambda *a, fd=fd: fd.execute(list(a))
        if name == "fuser":
            row["fuser_segments"] = "+".join(fd.last_scheduler_types())
    torch._dynamo.reset()
    compiled = torch.compile(case.torch_fn, dynamic=False)
    compiled(*inputs)
    runners["eager"] = case.torch_fn
    runners["compile"] = compiled
    row.update(timed_row(case.name, runners, inputs, input_sets, moved))
    del input_sets, inputs
    torch.cuda.empty_cache()
    return row


def host_hit_us(fd, inputs, batches=300, calls=20):
    """Median host time per call over batches small enough that their
    launches never wait for the device (synchronized between batches)."""
    fd.execute(inputs)
    times = []
    for _ in range(batches):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fd.execute(inputs)
        times.append((time.perf_counter() - start) / calls * 1e6)
    times.sort()
    return times[len(times) // 2]


def host_overhead(compilers):
    """Host time of a hit: three reduction segments against one kernel."""

    def d_one(fd, m, ins):
        fd.add_output(fd.ops.sum(define_input(fd, m, ins[0]), [1]))

    def d_three(fd, m, ins):
        x = define_input(fd, m, ins[0])
        y = fd.ops.mul(x, along(fd, fd.ops.sum(x, [1]), ins[0], [0]))
        z = fd.ops.mul(y, along(fd, fd.ops.sum(y, [0]), ins[0], [1]))
        fd.add_output(fd.ops.sum(z, [1]))

    x = torch.randn(64, 64, device="cuda")
    rows = []
    for name, module in compilers:
        try:
            one = fusion_of(module, d_one, [x])
            three = fusion_of(module, d_three, [x])
            row = {"frontend": name}
            row["one_kernel_us"] = round(host_hit_us(one, [x]), 2)
            row["three_segments_us"] = round(host_hit_us(three, [x]), 2)
            row["ratio"] = round(row["three_segments_us"] / row["one_kernel_us"], 2)
            row["kernels"] = kernels_per_call(lambda t, fd=three: fd.execute([t]), [x])
            if name == "fuser":
                row["segments"] = "+".join(three.last_scheduler_types())
            rows.append(row)
            print(f"host hit {name}: {row}", flush=True)
        except Exception as error:  # noqa: BLE001
            print(f"  {name} cannot run the host case: {error}", flush=True)
    return rows


def write(out_dir, rows, host_rows):
    os.makedirs(out_dir, exist_ok=True)
    write_csv(os.path.join(out_dir, "segmentation.csv"), rows)
    stamp = time.strftime("%Y-%m-%d")
    with open(os.path.join(out_dir, "segmentation.md"), "w") as f:
        f.write(
            f"# Segmented fusions ({torch.cuda.get_device_name()}, torch "
            f"{torch.__version__}, {stamp})\n\n"
            "Kernels per call (torch.profiler, copies and memsets left out) and "
            "median time; GB/s of the fewest bytes the fusion must move. "
            "fuser/x is x's time over fuser's (above 1: fuser is faster).\n\n"
        )
        f.write(kernel_table(rows))
        f.write(
            "\nHost time of a cache hit from Python (tiny inputs; batches of "
            "20 calls, synchronized between batches so that no launch waits "
            "for the device): three reduction segments against one reduction "
            "kernel.\n\n| frontend | one kernel µs | three segments µs | ratio "
            "| kernels | segments |\n|---|---|---|---|---|---|\n"
        )
        for r in host_rows:
            f.write(
                f"| {r['frontend']} | {r['one_kernel_us']} | {r['three_segments_us']} | "
                f"{r['ratio']} | {r['kernels']} | {r.get('segments', '')} |\n"
            )
    plot_times(os.path.join(out_dir, "segmentation.png"), rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", default="")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench_segmentation: no CUDA device, nothing measured")
        return 0
    compilers = frontends()
    wanted = set(args.cases.split(",")) if args.cases else None
    rows = [measure(c, compilers) for c in case_list() if not wanted or c.name in wanted]
    host_rows = host_overhead(compilers)
    write(args.out, rows, host_rows)
    print(f"wrote {args.out}/segmentation.{{csv,md,png}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
