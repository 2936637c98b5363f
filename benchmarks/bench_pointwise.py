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

import argparse
import csv
import math
import os
import sys
import time

import torch
import torch.nn.functional as F


from harness import define_input, frontends, fusion_of, median_ms

L2_BYTES = 60 * 1024 * 1024  # H200: 60 MiB of L2


class Case:
    def __init__(self, name, make_inputs, torch_fn, define, bytes_moved):
        self.name = name
        self.make_inputs = make_inputs  # numel -> list of tensors
        self.torch_fn = torch_fn
        self.define = define  # (fd, module, inputs) -> None, adds outputs
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
    compilers = frontends()
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

            expected = case.torch_fn(*inputs)
            times = {}
            for name, module in compilers:
                try:
                    fd = fusion_of(module, case.define, inputs)
                    got = fd.execute(inputs)[0]
                except Exception as error:  # noqa: BLE001
                    if name == "fuser":
                        raise
                    print(f"  {name} cannot run {case.name}: {error}")
                    continue
                torch.testing.assert_close(got, expected, rtol=1e-2, atol=1e-2)
                times[name] = median_ms(lambda *a, fd=fd: fd.execute(list(a)), input_sets)

            compiled = torch.compile(case.torch_fn, dynamic=False)
            torch.testing.assert_close(compiled(*inputs), expected, rtol=1e-2, atol=1e-2)

            src = torch.empty(moved // 2, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            times["copy"] = median_ms(lambda s, d: d.copy_(s), [[src, dst]])
            times["eager"] = median_ms(case.torch_fn, input_sets)
            times["compile"] = median_ms(compiled, input_sets)
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
                "nvfuser_gbps": round(gbps["nvfuser"], 1) if "nvfuser" in gbps else "",
                "fuser_vs_nvfuser": (
                    round(gbps["fuser"] / gbps["nvfuser"], 3) if "nvfuser" in gbps else ""
                ),
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
                f"  compile {row['compile_gbps']:>7}  nvfuser {row['nvfuser_gbps']:>7}"
                f"  x{row['fuser_vs_eager']} eager  x{row['fuser_vs_compile']} compile"
                f"  x{row['fuser_vs_nvfuser']} nvfuser",
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
            "| case | MiB | fuser GB/s | % of copy | nvFuser GB/s | eager GB/s "
            "| compile GB/s | fuser/nvFuser | fuser/eager | fuser/compile |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n"
        )
        for r in rows:
            f.write(
                f"| {r['case']} | {r['size_mib']} | {r['fuser_gbps']} | "
                f"{r['fuser_pct_of_copy']} | {r['nvfuser_gbps']} | {r['eager_gbps']} | "
                f"{r['compile_gbps']} | {r['fuser_vs_nvfuser']} | "
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
                ("nvfuser_gbps", "nvFuser"),
                ("eager_gbps", "eager"),
                ("compile_gbps", "torch.compile"),
                ("copy_gbps", "copy"),
            ]:
                ys = [r[key] for r in rs]
                if all(y != "" for y in ys):
                    ax.plot(x, ys, marker="o", label=label)
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
