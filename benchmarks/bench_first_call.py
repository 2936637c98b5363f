"""First-call latency: the time from execute() on a new definition to its
result (define, schedule, lower, generate, compile with NVRTC, launch), for
pointwise chains of 5, 20 and 80 ops, a row sum and a layer norm, for fuser
and nvFuser. Each measurement runs in a fresh Python process so that no
compiled kernel is reused: fuser's on-disk kernel cache is off
(FUSER_KERNEL_CACHE_DIR=off) for the cold figures; a second fuser row per
program ("fuser_disk") measures a new process whose kernel is in a warm
on-disk cache, as a user's second run of a script finds it. fuser's cache
miss is also split into its stages with FUSER_DUMP=compile_time.

    python3 benchmarks/bench_first_call.py [--out benchmarks/results]
"""

import argparse
import csv
import json
import os
import re
import subprocess
import sys

CHILD = r"""
import json, sys, time
import torch
sys.path.insert(0, {bench_dir!r})
from harness import define_input, frontends
program = {program!r}
name = {name!r}
module = dict(frontends())[name]
x = torch.randn(1024, 1024, device="cuda")
y = torch.randn(1024, 1024, device="cuda")
torch.cuda.synchronize()
start = time.perf_counter()
with module.FusionDefinition() as fd:
    a = define_input(fd, module, x)
    b = define_input(fd, module, y)
    if program == "row_sum":
        fd.add_output(fd.ops.sum(fd.ops.mul(a, b), [1]))
    elif program == "layer_norm":
        mean = fd.ops.mul(fd.ops.sum(a, [1]), 1.0 / 1024)
        centered = fd.ops.sub(a, fd.ops.broadcast_in_dim(mean, [1024, 1024], [0]))
        var = fd.ops.mul(fd.ops.sum(fd.ops.mul(centered, centered), [1]), 1.0 / 1024)
        invstd = fd.ops.rsqrt(fd.ops.add(var, 1e-5))
        fd.add_output(fd.ops.mul(centered, fd.ops.broadcast_in_dim(invstd, [1024, 1024], [0])))
    else:
        t = fd.ops.add(a, b)
        for i in range(int(program) - 1):
            t = [fd.ops.mul, fd.ops.add, fd.ops.sub][i % 3](t, b) if i % 4 else fd.ops.relu(t)
        fd.add_output(t)
out = fd.execute([x, y])
torch.cuda.synchronize()
print("RESULT " + json.dumps({{"ms": (time.perf_counter() - start) * 1e3}}))
"""

STAGE = re.compile(r"\[compile_time\] (\w[\w ]*): (.*) \(total (\d+) us\)")


def measure(name, program, env):
    code = CHILD.format(
        bench_dir=os.path.dirname(os.path.abspath(__file__)), program=program, name=name
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0:
        print(f"{name} {program} failed:\n{result.stderr[-2000:]}")
        return None, {}
    ms = None
    stages = {}
    for line in result.stdout.splitlines():
        if line.startswith("RESULT "):
            ms = json.loads(line[len("RESULT ") :])["ms"]
        match = STAGE.search(line)
        if match:
            for part in match.group(2).split(", "):
                stage, us, _ = part.rsplit(" ", 2)
                stages[stage] = stages.get(stage, 0) + int(us) / 1e3
    return ms, stages


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("bench_first_call: no CUDA device, nothing measured")
        return 0
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from harness import frontends

    import tempfile

    names = [name for name, _ in frontends()]
    disk_dir = tempfile.mkdtemp(prefix="fuser_first_call_cache_")
    rows = []
    for program in ("5", "20", "80", "row_sum", "layer_norm"):
        for runner in names + (["fuser_disk"] if "fuser" in names else []):
            env = dict(os.environ)
            name = "fuser" if runner.startswith("fuser") else runner
            if name == "fuser":
                env["FUSER_DUMP"] = "compile_time"
                env["FUSER_KERNEL_CACHE_DIR"] = disk_dir if runner == "fuser_disk" else "off"
                if runner == "fuser_disk":
                    measure(name, program, env)  # fills the cache
            # Median of three fresh processes.
            runs = [measure(name, program, env) for _ in range(3)]
            runs = [r for r in runs if r[0] is not None]
            if not runs:
                continue
            runs.sort(key=lambda r: r[0])
            ms, stages = runs[len(runs) // 2]
            ops = f"{program} ops" if program.isdigit() else program
            row = {"runner": runner, "program": ops, "first_call_ms": round(ms, 1)}
            for stage in ("schedule", "lower", "codegen", "nvrtc", "load", "plan"):
                row[f"{stage}_ms"] = round(stages[stage], 2) if stage in stages else ""
            rows.append(row)
            print(
                f"first_call: {runner:>10} {ops:>10}: {ms:8.1f} ms"
                + "".join(
                    f"  {k[:-3]} {v}"
                    for k, v in row.items()
                    if k.endswith("_ms") and v != "" and k != "first_call_ms"
                ),
                flush=True,
            )
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "first_call.csv")
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
