"""Pointwise bandwidth of fuser against PyTorch eager and torch.compile.

One run measures, for each fusion and size, the achieved bandwidth
(bytes read + bytes written, over the median time) of fuser, eager PyTorch
and torch.compile, plus a device-to-device copy of the same bytes as the
ceiling. Times are CUDA-event medians from triton.testing.do_bench (which
clears the L2 between runs); inputs are also rotated among several copies
when a size fits in L2. Results go to benchmarks/results/ as CSV, a
markdown table and, when matplotlib is there, a plot.

    python3 benchmarks/bench_pointwise.py [--sizes-mib 1,16,64,256,1024]
"""

import argparse
import csv
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

from fuser import DataType, FusionDefinition

L2_BYTES = 60 * 1024 * 1024  # H200: 60 MiB of L2


def fuser_dtype(dtype):
    return {
        torch.float32: DataType.Float,
        torch.bfloat16: DataType.BFloat16,
        torch.float16: DataType.Half,
    }[dtype]


def define_input(fd, t):
    """A fuser input matching tensor `t`'s sizes, dtype and layout."""
    return fd.define_tensor(
        sizes=list(t.shape), strides=list(t.stride()), dtype=fuser_dtype(t.dtype)
    )


class Case:
    def __init__(self, name, make_inputs, torch_fn, define, bytes_moved):
        self.name = name
        self.make_inputs = make_inputs  # numel -> list of tensors
        self.torch_fn = torch_fn
        self.define = define  # (fd, inputs) -> None, adds outputs
        self.bytes_moved = bytes_moved  # inputs -> bytes read + written


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

    def d_copy(fd, ins):
        fd.add_output(fd.ops.set(define_input(fd, ins[0])))

    def d_add(fd, ins):
        fd.add_output(fd.ops.add(define_input(fd, ins[0]), define_input(fd, ins[1])))

    def d_seed(fd, ins):
        # The seed layout: allocation [i/2, 2] of a 1-D input, loop untouched.
        t = define_input(fd, ins[0])
        outer, inner = fd.split(t.axis(0), 2)
        t.set_allocation_domain([outer, inner], [True, True])
        fd.add_output(fd.ops.set(t))

    def d_relu(fd, ins):
        fd.add_output(fd.ops.relu(define_input(fd, ins[0])))

    def d_gelu(fd, ins):
        t = define_input(fd, ins[0])
        fd.add_output(fd.ops.cast(fd.ops.gelu(t), DataType.BFloat16))

    def d_bias(fd, ins):
        x = define_input(fd, ins[0])
        b = define_input(fd, ins[1])
        bb = fd.ops.broadcast_in_dim(b, list(ins[0].shape), [1])
        fd.add_output(fd.ops.add(x, bb))

    def d_cast(fd, ins):
        fd.add_output(fd.ops.cast(define_input(fd, ins[0]), DataType.BFloat16))

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


def median_ms(fn, input_sets):
    """Median time of fn over rotating input sets (CUDA events)."""
    from triton.testing import do_bench

    state = {"i": 0}

    def call():
        args = input_sets[state["i"] % len(input_sets)]
        state["i"] += 1
        fn(*args)

    return do_bench(call, warmup=25, rep=200, return_mode="median")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes-mib", default="1,16,64,256,1024")
    parser.add_argument("--cases", default="")
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results")
    )
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench_pointwise: no CUDA device, nothing measured")
        return 0
    sizes = [int(s) for s in args.sizes_mib.split(",")]
    wanted = set(args.cases.split(",")) if args.cases else None
    os.makedirs(args.out, exist_ok=True)
    device_name = torch.cuda.get_device_name()
    rows = []
    csv_path = os.path.join(args.out, "pointwise.csv")
    csv_file = open(csv_path, "w", newline="")
    writer = None
    for case in case_list():
        if wanted and case.name not in wanted:
            continue
        for mib in sizes:
            inputs = case.make_inputs(mib)
            moved = case.bytes_moved(inputs)
            # Enough copies that the rotation does not fit in L2.
            copies = max(1, math.ceil(2 * L2_BYTES / max(moved, 1)))
            input_sets = [inputs] + [
                [t.clone(memory_format=torch.preserve_format) for t in inputs]
                for _ in range(copies - 1)
            ]

            with FusionDefinition() as fd:
                case.define(fd, inputs)
            expected = case.torch_fn(*inputs)
            got = fd.execute(inputs)[0]
            torch.testing.assert_close(got, expected, rtol=1e-2, atol=1e-2)

            compiled = torch.compile(case.torch_fn, dynamic=False)
            torch.testing.assert_close(compiled(*inputs), expected, rtol=1e-2, atol=1e-2)

            src = torch.empty(moved // 2, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            times = {
                "copy": median_ms(lambda s, d: d.copy_(s), [[src, dst]]),
                "fuser": median_ms(lambda *a: fd.execute(list(a)), input_sets),
                "eager": median_ms(case.torch_fn, input_sets),
                "compile": median_ms(compiled, input_sets),
            }
            gbps = {k: moved / (v * 1e-3) / 1e9 for k, v in times.items()}
            row = {
                "case": case.name,
                "size_mib": mib,
                "bytes_moved": moved,
                "copy_gbps": round(gbps["copy"], 1),
                "fuser_gbps": round(gbps["fuser"], 1),
                "eager_gbps": round(gbps["eager"], 1),
                "compile_gbps": round(gbps["compile"], 1),
                "fuser_pct_of_copy": round(100 * gbps["fuser"] / gbps["copy"], 1),
                "fuser_vs_eager": round(gbps["fuser"] / gbps["eager"], 3),
                "fuser_vs_compile": round(gbps["fuser"] / gbps["compile"], 3),
                "fuser_ms": round(times["fuser"], 4),
            }
            rows.append(row)
            # Written as measured, so a run cut short keeps what it has.
            if writer is None:
                writer = csv.DictWriter(csv_file, fieldnames=list(row.keys()))
                writer.writeheader()
            writer.writerow(row)
            csv_file.flush()
            print(
                f"{case.name:>22} {mib:>5} MiB  fuser {row['fuser_gbps']:>7} GB/s"
                f" ({row['fuser_pct_of_copy']:>5}% of copy)  eager {row['eager_gbps']:>7}"
                f"  compile {row['compile_gbps']:>7}  x{row['fuser_vs_eager']} eager"
                f"  x{row['fuser_vs_compile']} compile",
                flush=True,
            )
            del input_sets, inputs, src, dst
            torch.cuda.empty_cache()

    csv_file.close()
    stamp = time.strftime("%Y-%m-%d")
    md_path = os.path.join(args.out, "pointwise.md")
    with open(md_path, "w") as f:
        f.write(f"# Pointwise bandwidth ({device_name}, torch {torch.__version__}, {stamp})\n\n")
        f.write(
            "GB/s = (bytes read + bytes written) / median time. `copy` is a "
            "device-to-device copy of the same number of bytes in the same run.\n\n"
        )
        f.write(
            "| case | MiB | fuser GB/s | % of copy | eager GB/s | compile GB/s "
            "| fuser/eager | fuser/compile |\n|---|---|---|---|---|---|---|---|\n"
        )
        for r in rows:
            f.write(
                f"| {r['case']} | {r['size_mib']} | {r['fuser_gbps']} | "
                f"{r['fuser_pct_of_copy']} | {r['eager_gbps']} | {r['compile_gbps']} | "
                f"{r['fuser_vs_eager']} | {r['fuser_vs_compile']} |\n"
            )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        names = sorted({r["case"] for r in rows})
        fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.5), squeeze=False)
        for ax, name in zip(axes[0], names):
            rs = [r for r in rows if r["case"] == name]
            x = [r["size_mib"] for r in rs]
            for key, label in [
                ("fuser_gbps", "fuser"),
                ("eager_gbps", "eager"),
                ("compile_gbps", "torch.compile"),
                ("copy_gbps", "copy"),
            ]:
                ax.plot(x, [r[key] for r in rs], marker="o", label=label)
            ax.set_xscale("log", base=2)
            ax.set_title(name)
            ax.set_xlabel("MiB")
            ax.set_ylabel("GB/s")
        axes[0][0].legend()
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, "pointwise.png"), dpi=80)
    except ImportError:
        print("matplotlib not available: no plot")
    print(f"wrote {csv_path} and {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
