"""What the benchmarks that count kernels share (bench_segmentation.py,
bench_transformer.py): the GPU kernels one call launches, a row of
kernel counts and median times for every frontend with its ratios to
fuser, and the CSV, Markdown table and bar plot of such rows."""

import csv

from harness import median_ms

FRONTENDS = [
    ("fuser", "fuser"),
    ("nvfuser", "nvFuser"),
    ("eager", "eager"),
    ("compile", "torch.compile"),
]


def kernels_per_call(fn, inputs, names=None):
    """GPU kernels one call launches (copies and memsets left out); their
    names and times (µs) are appended to `names` when given."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn(*inputs)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(*inputs)
        torch.cuda.synchronize()
    count = 0
    for event in prof.events():
        if event.device_type != torch.autograd.DeviceType.CUDA:
            continue
        name = event.name.lower()
        if name.startswith("memcpy") or name.startswith("memset"):
            continue
        count += 1
        if names is not None:
            names.append(f"{event.name[:60]} {event.device_time:.1f}us")
    return count


KERNEL_CLASSES = [  # (class, name fragments), first match wins
    # fuser names a kernel after its scheduler (fuser_pointwise,
    # fuser_matmul, ..., csrc/runtime/fusion_kernel_runtime.h).
    ("matmul", ("fuser_matmul", "gemm", "cublas", "cutlass", "nvjet", "xmma", "sm90_", "sm80_")),
    ("fusion", ("fuser_", "nvfuser", "kernelcodegen", "triton_")),
    ("attention", ("flash", "fmha", "attention", "cudnn")),
]


def kernel_class(name):
    lowered = name.lower()
    for cls, fragments in KERNEL_CLASSES:
        if any(f in lowered for f in fragments):
            return cls
    return "other"


def profile_step(step):
    """Kernels of one step from the CUDA profiler: their count, the GPU time
    per class (fusion, matmul, attention, other; µs) and the twenty kernels
    with the most time (name, calls, µs), for the analysis of a slow case."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    count = 0
    per_class = {}
    per_kernel = {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA or e.name.startswith("Memcpy"):
            continue
        count += 1
        cls = kernel_class(e.name)
        per_class[cls] = per_class.get(cls, 0.0) + e.device_time
        calls, total = per_kernel.get(e.name, (0, 0.0))
        per_kernel[e.name] = (calls + 1, total + e.device_time)
    top = sorted(per_kernel.items(), key=lambda kv: -kv[1][1])[:20]
    return count, {
        "us_per_class": {k: round(v, 1) for k, v in sorted(per_class.items())},
        "top_kernels": [[name[:90], calls, round(us, 1)] for name, (calls, us) in top],
    }


def median_step_ms(step, iters):
    """Median time (ms, CUDA events) of `iters` calls of `step` after 3
    warm-up calls: a whole model step, as bench_thunder.py and
    bench_torch_compile.py time one."""
    import torch

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def row_of_child(cmd, keys, env=None, timeout=3600):
    """Runs one configuration in a process of its own (`cmd`); its row is
    the last JSON line it prints, else `keys` with the error's last lines."""
    import json
    import subprocess

    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(keys, error=f"did not finish in {timeout} s")
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode == 0 and lines:
        return json.loads(lines[-1])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    return dict(keys, error=" | ".join(tail))


def write_rows_csv(path, rows):
    """Rows of differing keys as one CSV; nested values (a profile) as JSON."""
    import json

    fields = sorted({k for r in rows for k in r})
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(
            {k: json.dumps(v) if isinstance(v, dict) else v for k, v in r.items()}
            for r in rows
        )


def timed_row(name, runners, inputs, input_sets, moved):
    """{case, bytes_moved, <frontend>_kernels, _ms, _gbps (when `moved`),
    fuser_vs_<other>} for `runners` ({frontend: fn}), timed over
    `input_sets`; fuser's and nvFuser's kernels are printed."""
    row = {"case": name, "bytes_moved": moved}
    for frontend, fn in runners.items():
        names = []
        row[f"{frontend}_kernels"] = kernels_per_call(fn, inputs, names)
        if frontend in ("fuser", "nvfuser"):
            print(f"  {frontend} kernels: {'; '.join(names)}", flush=True)
        ms = median_ms(fn, input_sets)
        row[f"{frontend}_ms"] = round(ms, 4)
        if moved:
            row[f"{frontend}_gbps"] = round(moved / (ms * 1e-3) / 1e9, 1)
    for other, _ in FRONTENDS[1:]:
        if "fuser_ms" in row and f"{other}_ms" in row:
            row[f"fuser_vs_{other}"] = round(row[f"{other}_ms"] / row["fuser_ms"], 3)
    print(
        f"{name:>36}  "
        + "  ".join(
            f"{n} {row.get(n + '_ms', '-')} ms/{row.get(n + '_kernels', '-')}k"
            for n, _ in FRONTENDS
        ),
        flush=True,
    )
    return row


def write_csv(path, rows):
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


def kernel_table(rows):
    """The Markdown table of `rows`: segments, kernels, times, fuser's
    GB/s and its ratios."""
    lines = [
        "| case | fuser segments | fuser kernels | nvFuser kernels | eager kernels "
        "| compile kernels | fuser ms | nvFuser ms | eager ms | compile ms "
        "| fuser GB/s | fuser/nvFuser | fuser/eager | fuser/compile |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    keys = ["case", "fuser_segments"]
    keys += [f"{n}_kernels" for n, _ in FRONTENDS] + [f"{n}_ms" for n, _ in FRONTENDS]
    keys += ["fuser_gbps"] + [f"fuser_vs_{n}" for n, _ in FRONTENDS[1:]]
    for r in rows:
        lines.append("| " + " | ".join(str(r.get(k, "")) for k in keys) + " |")
    return "\n".join(lines) + "\n"


def plot_times(path, rows, figsize=(10, 4), rotation=20):
    """A bar per frontend and row: the median time."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=figsize)
    width = 0.2
    for i, (key, label) in enumerate(FRONTENDS):
        ys = [float(r.get(f"{key}_ms") or 0) for r in rows]
        ax.bar([j + i * width for j in range(len(rows))], ys, width, label=label)
    ax.set_xticks([j + 1.5 * width for j in range(len(rows))])
    ax.set_xticklabels([r["case"] for r in rows], rotation=rotation, ha="right", fontsize=7)
    ax.set_ylabel("ms (lower is better)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def plot_step_times(path, rows, groups, configs):
    """A bar per configuration and group (a model, or a model and mode):
    ms per step; a configuration that failed or timed out has no bar."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(9, 3.5))
    width = 0.8 / len(configs)
    for i, config in enumerate(configs):
        ys = []
        for keys in groups:
            row = next(
                (r for r in rows if all(r.get(k) == v for k, v in keys.items()) and r.get("config") == config),
                None,
            )
            ms = row.get("ms_per_step") if row else None
            ys.append(float(ms) if ms not in (None, "") else 0.0)
        ax.bar([j + i * width for j in range(len(groups))], ys, width, label=config)
    ax.set_xticks([j + width * (len(configs) - 1) / 2 for j in range(len(groups))])
    ax.set_xticklabels([" ".join(str(v) for v in g.values()) for g in groups], fontsize=8)
    ax.set_ylabel("ms per step (lower is better)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
