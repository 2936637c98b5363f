"""Runs one benchmark case with one frontend a few times, for a profiler
(Nsight Compute) to measure its kernel: compiles first, then runs
`--runs` times, synchronizing after each.

    python3 benchmarks/profile_case.py --bench reduction \\
        --case row_sum_8192xN --mib 256 --frontend fuser

tools/gpu_profile.sh runs it under ncu for fuser and nvFuser.
"""

import argparse
import sys

import torch

import bench_pointwise
import bench_reduction
from harness import frontends, fusion_of


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", choices=["pointwise", "reduction"], required=True)
    parser.add_argument("--case", required=True)
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--frontend", default="fuser")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    module = {"pointwise": bench_pointwise, "reduction": bench_reduction}[args.bench]
    cases = {c.name: c for c in module.case_list()}
    if args.case not in cases:
        print(f"unknown case {args.case}; cases: {', '.join(cases)}")
        return 2
    case = cases[args.case]
    found = dict(frontends())
    if args.frontend not in found:
        print(f"frontend {args.frontend} is not available")
        return 2
    inputs = case.make_inputs(args.mib)
    fd = fusion_of(found[args.frontend], case.define, inputs)
    for _ in range(args.runs):
        fd.execute(inputs)
        torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
