"""Matmul throughput of fuser against nvFuser, cuBLAS (torch.matmul) and
torch.compile (default mode, max-autotune off) in one run (doc/matmul.md).

bf16 operands, float accumulation. TFLOP/s = 2 M N K / median time
(triton.testing.do_bench, CUDA events, L2 cleared between runs). Layouts by
nvFuser's names: TN is x @ w.T (A [M, K] and B stored [N, K], both
K-contiguous, a linear layer), NN stores A as [K, M] and B as [N, K], TT is
a @ b of two row-major matrices. With the bias + GELU epilogue (tanh form,
written with the same ops in both frontends) the cuBLAS column is eager
PyTorch: addmm (bias in cuBLAS's epilogue) followed by a separate GELU
kernel. Results go to benchmarks/results/matmul.{csv,md,png}.

    python3 benchmarks/bench_matmul.py [--cases tn_4096,...] [--out DIR]
"""

import argparse
import csv
import os
import sys
import time

import torch
import torch.nn.functional as F

from harness import define_input, frontends, fusion_of


def operands(layout, m, n, k):
    """(a [M, K], b [K, N]) with the memory order of `layout`."""
    a = (
        torch.randn(k, m, device="cuda", dtype=torch.bfloat16).t()
        if layout[0] == "N"
        else torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    )
    b = (
        torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
        if layout[1] == "N"
        else torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    )
    return a, b


def gelu_tanh(fd, m, y):
    """0.5 y (1 + tanh(sqrt(2 / pi) (y + 0.044715 y^3))) in float."""
    y = fd.ops.cast(y, m.DataType.Float)
    cube = fd.ops.mul(fd.ops.mul(y, y), y)
    inner = fd.ops.mul(fd.ops.add(y, fd.ops.mul(cube, 0.044715)), 0.7978845608028654)
    out = fd.ops.mul(fd.ops.mul(y, 0.5), fd.ops.add(fd.ops.tanh(inner), 1.0))
    return fd.ops.cast(out, m.DataType.BFloat16)


class MatmulCase:
    def __init__(self, name, layout, m, n, k, epilogue=False):
        self.name, self.layout = name, layout
        self.m, self.n, self.k, self.epilogue = m, n, k, epilogue

    def inputs(self):
        a, b = operands(self.layout, self.m, self.n, self.k)
        if not self.epilogue:
            return [a, b]
        return [a, b, torch.randn(self.n, device="cuda", dtype=torch.bfloat16)]

    def torch_fn(self, a, b, bias=None):
        if bias is None:
            return torch.matmul(a, b)
        return F.gelu(torch.addmm(bias, a, b), approximate="tanh")

    def define(self, fd, m, ins):
        a = define_input(fd, m, ins[0])
        if not self.epilogue:
            fd.add_output(fd.ops.matmul(a, define_input(fd, m, ins[1])))
            return
        # linear takes the weight as [N, K]: the transpose of b, as stored.
        w = define_input(fd, m, ins[1].t())
        bias = define_input(fd, m, ins[2])
        fd.add_output(gelu_tanh(fd, m, fd.ops.linear(a, w, bias)))

    def fd_inputs(self, ins):
        return ins if not self.epilogue else [ins[0], ins[1].t(), ins[2]]


def case_list():
    cases = []
    for size in (2048, 4096, 8192):
        for layout in ("TN", "NN", "TT"):
            cases.append(MatmulCase(f"{layout.lower()}_{size}", layout, size, size, size))
    for n, k in ((4096, 4096), (14336, 4096), (4096, 14336)):
        for layout in ("TN", "NN"):
            cases.append(MatmulCase(f"{layout.lower()}_8192x{n}x{k}", layout, 8192, n, k))
    for size in (4096, 8192):
        cases.append(MatmulCase(f"tn_bias_gelu_{size}", "TN", size, size, size, True))
    cases.append(MatmulCase("tn_bias_gelu_8192x14336x4096", "TN", 8192, 14336, 4096, True))
    return cases


def median_ms(fn):
    from triton.testing import do_bench

    return do_bench(fn, warmup=25, rep=200, return_mode="median")


def relative_error(got, expected):
    return ((got.float() - expected.float()).norm() / expected.float().norm()).item()


def measure(case, compilers):
    ins = case.inputs()
    expected = case.torch_fn(*ins)
    flops = 2.0 * case.m * case.n * case.k
    times = {}
    for name, module in compilers:
        try:
            fd = fusion_of(module, case.define, ins)
            args = case.fd_inputs(ins)
            (got,) = fd.execute(args)
            error = relative_error(got, expected)
            if not error < 2e-2:
                raise RuntimeError(f"relative error {error:.3g}")
        except Exception as error:  # noqa: BLE001
            print(f"  {name} cannot run {case.name}: {error}", flush=True)
            continue
        times[name] = median_ms(lambda fd=fd, args=args: fd.execute(args))
    times["cublas"] = median_ms(lambda: case.torch_fn(*ins))
    torch._dynamo.reset()
    compiled = torch.compile(case.torch_fn, dynamic=False)
    compiled(*ins)
    times["compile"] = median_ms(lambda: compiled(*ins))
    tflops = {k: flops / (v * 1e-3) / 1e12 for k, v in times.items()}

    def ratio(a, b):
        return round(tflops[a] / tflops[b], 3) if a in tflops and b in tflops else ""

    def rate(k):
        return round(tflops[k], 1) if k in tflops else ""

    row = {
        "case": case.name,
        "layout": case.layout,
        "m": case.m,
        "n": case.n,
        "k": case.k,
        "epilogue": "bias+gelu" if case.epilogue else "",
        "fuser_tflops": rate("fuser"),
        "nvfuser_tflops": rate("nvfuser"),
        "cublas_tflops": rate("cublas"),
        "compile_tflops": rate("compile"),
        "fuser_vs_nvfuser": ratio("fuser", "nvfuser"),
        "fuser_vs_cublas": ratio("fuser", "cublas"),
        "fuser_vs_compile": ratio("fuser", "compile"),
        "fuser_ms": round(times["fuser"], 4) if "fuser" in times else "",
    }
    print(
        f"{case.name:>30}  fuser {row['fuser_tflops']:>6}  nvfuser {row['nvfuser_tflops']:>6}"
        f"  cublas {row['cublas_tflops']:>6}  compile {row['compile_tflops']:>6} TFLOP/s"
        f"  x{row['fuser_vs_nvfuser']} nvfuser  x{row['fuser_vs_cublas']} cublas"
        f"  x{row['fuser_vs_compile']} compile",
        flush=True,
    )
    del ins, expected
    torch.cuda.empty_cache()
    return row


def write_results(rows, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "matmul.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    with open(os.path.join(out_dir, "matmul.md"), "w") as f:
        f.write(
            f"# Matmul throughput ({torch.cuda.get_device_name()}, torch "
            f"{torch.__version__}, {time.strftime('%Y-%m-%d')})\n\n"
            "TFLOP/s = 2 M N K / median time; bf16 operands, float "
            "accumulation. With the bias+GELU epilogue the cuBLAS column is "
            "eager PyTorch (addmm, then a GELU kernel).\n\n"
            "| case | layout | M x N x K | epilogue | fuser | nvFuser | cuBLAS | "
            "compile | fuser/nvFuser | fuser/cuBLAS | fuser/compile |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|\n"
        )
        for r in rows:
            f.write(
                f"| {r['case']} | {r['layout']} | {r['m']} x {r['n']} x {r['k']} | "
                f"{r['epilogue']} | {r['fuser_tflops']} | {r['nvfuser_tflops']} | "
                f"{r['cublas_tflops']} | {r['compile_tflops']} | {r['fuser_vs_nvfuser']} | "
                f"{r['fuser_vs_cublas']} | {r['fuser_vs_compile']} |\n"
            )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    names = [r["case"] for r in rows]
    fig, ax = plt.subplots(figsize=(max(8, len(names) * 0.6), 4))
    width = 0.2
    for i, (key, label) in enumerate(
        [
            ("fuser_tflops", "fuser"),
            ("nvfuser_tflops", "nvFuser"),
            ("cublas_tflops", "cuBLAS / eager"),
            ("compile_tflops", "torch.compile"),
        ]
    ):
        ys = [r[key] if r[key] != "" else 0 for r in rows]
        ax.bar([x + (i - 1.5) * width for x in range(len(names))], ys, width, label=label)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("TFLOP/s")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "matmul.png"), dpi=80)


def main():
    parser = argparse.ArgumentParser(description="Matmul throughput")
    parser.add_argument("--cases", default="")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench_matmul: no CUDA device, nothing measured")
        return 0
    compilers = frontends()
    wanted = set(args.cases.split(",")) if args.cases else None
    rows = []
    for case in case_list():
        if wanted and case.name not in wanted:
            continue
        rows.append(measure(case, compilers))
    if rows:
        write_results(rows, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
