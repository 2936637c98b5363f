"""What one call of a benchmark case puts on the GPU, per frontend: the
operations (kernels, copies, memsets) of `--runs` timed calls as the
benchmark makes them (L2 cleared before each), with their mean durations
and the mean idle time between clearing the L2 and the call's first
operation. Explains a per-call difference that the kernels' own profiles
(tools/gpu_profile.sh) do not show.

    python3 benchmarks/trace_case.py --bench reduction \\
        --case row_sum_8192xN --mib 64
"""

import argparse
import sys
from collections import defaultdict

import torch
from torch.profiler import ProfilerActivity, profile

import bench_pointwise
import bench_reduction
from harness import frontends, fusion_of

CLEAR_BYTES = 256 * 1024 * 1024  # as triton.testing.do_bench clears the L2


def trace(fn, runs):
    cache = torch.empty(CLEAR_BYTES, dtype=torch.int8, device="cuda")
    for _ in range(5):
        cache.zero_()
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            cache.zero_()
            fn()
        torch.cuda.synchronize()
    events = sorted(
        (e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
        key=lambda e: e.time_range.start,
    )
    durations = defaultdict(list)
    gaps = []
    previous_clear_end = None
    for e in events:
        name = e.name
        is_clear = "fill" in name.lower() or "zero" in name.lower()
        if is_clear and e.time_range.elapsed_us() > 20:
            previous_clear_end = e.time_range.end
            continue
        durations[name].append(e.time_range.elapsed_us())
        if previous_clear_end is not None:
            gaps.append(e.time_range.start - previous_clear_end)
            previous_clear_end = None
    return durations, gaps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", choices=["pointwise", "reduction"], required=True)
    parser.add_argument("--case", required=True)
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    module = {"pointwise": bench_pointwise, "reduction": bench_reduction}[args.bench]
    case = {c.name: c for c in module.case_list()}[args.case]
    inputs = case.make_inputs(args.mib)
    calls = {}
    for name, frontend in frontends():
        fd = fusion_of(frontend, case.define, inputs)
        calls[name] = lambda fd=fd: fd.execute(inputs)
    calls["eager"] = lambda: case.torch_fn(*inputs)
    compiled = torch.compile(case.torch_fn, dynamic=False)
    compiled(*inputs)
    calls["compile"] = lambda: compiled(*inputs)
    for name, fn in calls.items():
        durations, gaps = trace(fn, args.runs)
        mean_gap = sum(gaps) / len(gaps) if gaps else float("nan")
        print(
            f"== {args.case} {args.mib} MiB {name}: idle after the L2 clear "
            f"{mean_gap:.2f} us (mean of {len(gaps)})"
        )
        for op, times in durations.items():
            print(
                f"   {len(times) / args.runs:4.1f}/call  {sum(times) / len(times):8.2f} us"
                f"  {op[:110]}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
