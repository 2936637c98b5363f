"""What the Python benchmarks share: the frontends to compare (fuser, and
nVFuser when `nvfuser_direct` imports: ../shared/peer/README.md describes how
it is installed beside fuser on the GPU machine), defining an input from an
example tensor in the form both frontends accept, and timing with CUDA
events."""

import torch


def frontends():
    """[(name, module)] for fuser and, when it imports, nvFuser. Both
    modules have FusionDefinition and DataType with the same API."""
    import fuser

    found = [("fuser", fuser)]
    try:
        import nvfuser_direct

        found.append(("nvfuser", nvfuser_direct))
    except Exception as error:  # noqa: BLE001 - any failure means "absent"
        print(f"nvFuser not available ({type(error).__name__}: {error}); no nvFuser column")
    return found


def data_type(module, dtype):
    return {
        torch.float32: module.DataType.Float,
        torch.bfloat16: module.DataType.BFloat16,
        torch.float16: module.DataType.Half,
    }[dtype]


def define_input(fd, module, t):
    """An input matching `t`'s sizes, dtype and layout, written with
    define_tensor(shape, contiguity, dtype, stride_order), which both
    frontends take."""
    rank = t.dim()
    # stride_order[i] ranks axis i's stride, 0 the innermost.
    by_stride = sorted(range(rank), key=lambda i: (t.stride(i), i))
    stride_order = [0] * rank
    for rank_of_axis, axis in enumerate(by_stride):
        stride_order[axis] = rank_of_axis
    # Contiguity in allocation order (outermost first).
    allocation = list(reversed(by_stride))
    contiguity = []
    expected = 1
    for axis in reversed(allocation):
        if t.size(axis) == 1:
            contiguity.append(None)
            continue
        contiguity.append(t.stride(axis) == expected)
        expected = t.stride(axis) * t.size(axis)
    contiguity.reverse()
    shape = [1 if s == 1 else -1 for s in t.shape]
    return fd.define_tensor(
        shape=shape,
        contiguity=contiguity,
        dtype=data_type(module, t.dtype),
        stride_order=stride_order,
    )


def fusion_of(module, define, inputs):
    """A FusionDefinition of `module` built by define(fd, module, inputs)."""
    with module.FusionDefinition() as fd:
        define(fd, module, inputs)
    return fd


def median_ms(fn, input_sets):
    """Median time of fn over rotating input sets (CUDA events; L2 flushed
    between runs by triton.testing.do_bench)."""
    from triton.testing import do_bench

    state = {"i": 0}

    def call():
        args = input_sets[state["i"] % len(input_sets)]
        state["i"] += 1
        fn(*args)

    return do_bench(call, warmup=25, rep=200, return_mode="median")


L2_BYTES = 60 * 1024 * 1024  # H200: 60 MiB of L2


class Case:
    """One benchmark: inputs made for a size in MiB, the eager function,
    the definition for the FusionDefinition frontends and the bytes a run
    moves (read + written)."""

    def __init__(self, name, make_inputs, torch_fn, define, bytes_moved, tol=1e-2, check=None):
        self.name = name
        self.make_inputs = make_inputs  # size in MiB -> list of tensors
        self.torch_fn = torch_fn
        self.define = define  # (fd, module, inputs) -> None, adds outputs
        self.bytes_moved = bytes_moved  # inputs -> bytes read + written
        self.tol = tol
        # (got, inputs) -> None, raising on a wrong result: for a random
        # output, which no other run's equals.
        self.check = check

    def check_outputs(self, got, expected, inputs):
        if self.check is not None:
            self.check(got, inputs)
            return
        for g, e in zip(got, expected):
            torch.testing.assert_close(g, e, rtol=self.tol, atol=self.tol)


def _first(outputs):
    return outputs[0] if isinstance(outputs, (list, tuple)) else outputs


def rotating_input_sets(inputs, moved):
    """`inputs` and enough copies of them (same layout) that a rotation
    through them, `moved` bytes a run, does not fit in L2."""
    import math

    copies = max(1, math.ceil(2 * L2_BYTES / max(moved, 1)))
    return [inputs] + [
        [t.clone(memory_format=torch.preserve_format) for t in inputs] for _ in range(copies - 1)
    ]


def measure(case, mib, compilers):
    """One row: GB/s of every frontend, eager, torch.compile and a copy of
    the same bytes, measured in this process. The outputs are checked
    against eager first (rtol = atol = case.tol)."""
    inputs = case.make_inputs(mib)
    moved = case.bytes_moved(inputs)
    input_sets = rotating_input_sets(inputs, moved)
    expected = case.torch_fn(*inputs)
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    times = {}
    for name, module in compilers:
        try:
            fd = fusion_of(module, case.define, inputs)
            got = fd.execute(inputs)
            case.check_outputs(got, expected, inputs)
            if any(g.data_ptr() == t.data_ptr() for g in got for t in inputs):
                # nvFuser returns its input for a plain copy: no kernel runs,
                # so there is no bandwidth to compare.
                print(f"  {name} returns an input as {case.name}'s output: no column")
                continue
        except Exception as error:  # noqa: BLE001
            print(f"  {name} cannot run {case.name} at {mib} MiB: {error}", flush=True)
            continue
        times[name] = median_ms(lambda *a, fd=fd: fd.execute(list(a)), input_sets)
    # A fresh compile per row: dynamo caches by function, and after 8 shapes
    # of one case's function (config.recompile_limit) it would silently run
    # the rest eagerly.
    torch._dynamo.reset()
    compiled = torch.compile(case.torch_fn, dynamic=False)
    compiled(*inputs)
    src = torch.empty(moved // 2, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    times["copy"] = median_ms(lambda s, d: d.copy_(s), [[src, dst]])
    times["eager"] = median_ms(case.torch_fn, input_sets)
    times["compile"] = median_ms(compiled, input_sets)
    gbps = {k: moved / (v * 1e-3) / 1e9 for k, v in times.items()}

    def ratio(a, b):
        return round(gbps[a] / gbps[b], 3) if a in gbps and b in gbps else ""

    def rate(k):
        return round(gbps[k], 1) if k in gbps else ""

    row = {
        "case": case.name,
        "size_mib": mib,
        "bytes_moved": moved,
        "copy_gbps": rate("copy"),
        "fuser_gbps": rate("fuser"),
        "eager_gbps": rate("eager"),
        "compile_gbps": rate("compile"),
        "fuser_pct_of_copy": (
            round(100 * gbps["fuser"] / gbps["copy"], 1) if "fuser" in gbps else ""
        ),
        "fuser_vs_eager": ratio("fuser", "eager"),
        "fuser_vs_compile": ratio("fuser", "compile"),
        "nvfuser_gbps": rate("nvfuser"),
        "fuser_vs_nvfuser": ratio("fuser", "nvfuser"),
        "fuser_ms": round(times["fuser"], 4) if "fuser" in times else "",
        "nvfuser_pct_of_copy": (
            round(100 * gbps["nvfuser"] / gbps["copy"], 1) if "nvfuser" in gbps else ""
        ),
    }
    print(
        f"{case.name:>26} {mib:>5} MiB  fuser {row['fuser_gbps']:>7} GB/s"
        f" ({row['fuser_pct_of_copy']:>5}% of copy)  nvfuser {row['nvfuser_gbps']:>7}"
        f" ({row['nvfuser_pct_of_copy']:>5}%)  eager {row['eager_gbps']:>7}"
        f"  compile {row['compile_gbps']:>7}  x{row['fuser_vs_nvfuser']} nvfuser"
        f"  x{row['fuser_vs_eager']} eager  x{row['fuser_vs_compile']} compile",
        flush=True,
    )
    del input_sets, inputs, src, dst
    torch.cuda.empty_cache()
    return row


class ResultWriter:
    """Rows to <out>/<stem>.csv as they are measured (a run cut short keeps
    what it has), then a markdown table and, with matplotlib, a plot."""

    def __init__(self, out_dir, stem):
        import csv
        import os

        os.makedirs(out_dir, exist_ok=True)
        self.out_dir = out_dir
        self.stem = stem
        self.rows = []
        self.csv_path = os.path.join(out_dir, f"{stem}.csv")
        self._file = open(self.csv_path, "w", newline="")
        self._csv = csv
        self._writer = None

    def add(self, row):
        self.rows.append(row)
        if self._writer is None:
            self._writer = self._csv.DictWriter(self._file, fieldnames=list(row.keys()))
            self._writer.writeheader()
        self._writer.writerow(row)
        self._file.flush()

    def finish(self, title, description):
        import os
        import time

        self._file.close()
        stamp = time.strftime("%Y-%m-%d")
        device = torch.cuda.get_device_name()
        md_path = os.path.join(self.out_dir, f"{self.stem}.md")
        with open(md_path, "w") as f:
            f.write(f"# {title} ({device}, torch {torch.__version__}, {stamp})\n\n")
            f.write(description + "\n\n")
            f.write(
                "| case | MiB | fuser GB/s | % of copy | nvFuser GB/s | nvFuser % of copy "
                "| eager GB/s | compile GB/s | fuser/nvFuser | fuser/eager | fuser/compile |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|\n"
            )
            for r in self.rows:
                f.write(
                    f"| {r['case']} | {r['size_mib']} | {r['fuser_gbps']} | "
                    f"{r['fuser_pct_of_copy']} | {r['nvfuser_gbps']} | "
                    f"{r['nvfuser_pct_of_copy']} | {r['eager_gbps']} | "
                    f"{r['compile_gbps']} | {r['fuser_vs_nvfuser']} | "
                    f"{r['fuser_vs_eager']} | {r['fuser_vs_compile']} |\n"
                )
        self._plot()
        print(f"wrote {self.csv_path} and {md_path}")

    def _plot(self):
        import os

        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib not available: no plot")
            return
        names = list(dict.fromkeys(r["case"] for r in self.rows))
        if not names:
            return
        series = [
            ("fuser_gbps", "fuser", "tab:blue"),
            ("nvfuser_gbps", "nvFuser", "tab:orange"),
            ("eager_gbps", "eager", "tab:green"),
            ("compile_gbps", "torch.compile", "tab:red"),
            ("copy_gbps", "copy", "tab:gray"),
        ]
        if len({r["size_mib"] for r in self.rows}) == 1:
            # One size: grouped bars, one group per case.
            fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(names)), 4))
            width = 0.8 / len(series)
            for k, (key, label, color) in enumerate(series):
                ys = [next(r[key] for r in self.rows if r["case"] == n) for n in names]
                ax.bar(
                    [i + k * width for i in range(len(names))],
                    [y if y != "" else 0 for y in ys],
                    width,
                    label=label,
                    color=color,
                )
            ax.set_xticks([i + 0.4 - width / 2 for i in range(len(names))])
            ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
            ax.set_ylabel(f"GB/s at {self.rows[0]['size_mib']} MiB")
            ax.legend(fontsize=7, ncol=len(series))
            fig.tight_layout()
            fig.savefig(os.path.join(self.out_dir, f"{self.stem}.png"), dpi=80)
            return
        columns = min(4, len(names))
        lines = (len(names) + columns - 1) // columns
        fig, axes = plt.subplots(lines, columns, figsize=(4 * columns, 3.2 * lines), squeeze=False)
        for ax, name in zip(axes.flat, names):
            rs = [r for r in self.rows if r["case"] == name]
            x = [r["size_mib"] for r in rs]
            for key, label, color in series:
                ys = [r[key] for r in rs]
                if all(y != "" for y in ys):
                    ax.plot(x, ys, marker="o", label=label, color=color)
            ax.set_xscale("log", base=2)
            ax.set_title(name, fontsize=9)
            ax.set_xlabel("MiB")
            ax.set_ylabel("GB/s")
        for ax in list(axes.flat)[len(names) :]:
            ax.axis("off")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(self.out_dir, f"{self.stem}.png"), dpi=80)


def run_benchmark(stem, title, description, case_list, default_sizes):
    """The command line both bandwidth benchmarks share: --sizes-mib,
    --cases (names, comma-separated), --out; measures every case at every
    size and writes <out>/<stem>.{csv,md,png}."""
    import argparse
    import os

    parser = argparse.ArgumentParser(description=title)
    parser.add_argument("--sizes-mib", default=default_sizes)
    parser.add_argument("--cases", default="")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print(f"{stem}: no CUDA device, nothing measured")
        return 0
    sizes = [int(s) for s in args.sizes_mib.split(",")]
    compilers = frontends()
    wanted = set(args.cases.split(",")) if args.cases else None
    results = ResultWriter(args.out, stem)
    for case in case_list():
        if wanted and case.name not in wanted:
            continue
        for mib in sizes:
            results.add(measure(case, mib, compilers))
    results.finish(title, description)
    return 0
