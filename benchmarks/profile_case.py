"""Runs one benchmark case with one frontend a few times, for a profiler
(Nsight Compute) to measure its kernel: compiles first, then runs
`--runs` times, synchronizing after each. `--frontend eager` runs the
case's eager function, `--frontend compile` torch.compile of it.

    python3 benchmarks/profile_case.py --bench reduction \\
        --case row_sum_8192xN --mib 256 --frontend fuser

tools/gpu_profile.sh runs it under ncu for fuser and nvFuser.
"""

import argparse
import sys

import torch

import bench_matmul
import bench_normalization
import bench_pointwise
import bench_reduction
from harness import frontends, fusion_of


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--bench",
        choices=["pointwise", "reduction", "normalization", "matmul", "transformer"],
        required=True,
    )
    parser.add_argument("--case", required=True)
    parser.add_argument("--mib", type=int, default=256, help="(not for matmul)")
    parser.add_argument("--frontend", default="fuser")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--dirty-l2",
        action="store_true",
        help="zero 256 MiB before each run, as the benchmark clears the L2 "
        "(profile with ncu --cache-control none to keep that state)",
    )
    args = parser.parse_args()
    if args.bench == "transformer":
        return run_transformer(args)
    module = {
        "pointwise": bench_pointwise,
        "reduction": bench_reduction,
        "normalization": bench_normalization,
        "matmul": bench_matmul,
    }[args.bench]
    cases = {c.name: c for c in module.case_list()}
    if args.case not in cases:
        print(f"unknown case {args.case}; cases: {', '.join(cases)}")
        return 2
    case = cases[args.case]
    if args.frontend in ("compile", "eager"):
        return run_torch(case, args)
    found = dict(frontends())
    if args.frontend not in found:
        print(f"frontend {args.frontend} is not available")
        return 2
    if args.bench == "matmul":
        # A matmul case makes its own operands; the definition may take
        # them in another form (linear's weight).
        operands = case.inputs()
        fd = fusion_of(found[args.frontend], case.define, operands)
        inputs = case.fd_inputs(operands)
    else:
        inputs = case.make_inputs(args.mib)
        fd = fusion_of(found[args.frontend], case.define, inputs)
    run_profiled(lambda: fd.execute(inputs), args)
    return 0


def run_profiled(call, args):
    """One warm-up call outside the profiled range, then `--runs` calls in
    it (tools/gpu_profile.sh starts ncu with --profile-from-start off)."""
    cache = None
    if args.dirty_l2:
        cache = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")
    call()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for _ in range(args.runs):
        if args.dirty_l2:
            cache.zero_()
        call()
        torch.cuda.synchronize()
    torch.cuda.profiler.stop()


def run_transformer(args):
    """One of the transformer block's fusions (bench_transformer.py, its
    shape; --mib is not used)."""
    import bench_transformer as bt

    names = ["qkv_heads", "causal_softmax_dropout", "residual_dropout_add"]
    if args.case not in names:
        print(f"unknown case {args.case}; cases: {', '.join(names)}")
        return 2
    k = names.index(args.case)
    inputs = bt.fusion_inputs(bt.SHAPE)[k]
    if args.frontend in ("compile", "eager"):
        fn = bt.eager_fusions(bt.SHAPE, bt.P)[k]
        if args.frontend == "compile":
            fn = torch.compile(fn, dynamic=False)
            fn(*inputs)
        run_profiled(lambda: fn(*inputs), args)
        return 0
    found = dict(frontends())
    if args.frontend not in found:
        print(f"frontend {args.frontend} is not available")
        return 2
    fd = bt.Block(found[args.frontend], bt.SHAPE, bt.P).fusions[k]
    run_profiled(lambda: fd.execute(inputs), args)
    return 0


def run_torch(case, args):
    """The case's eager function, or torch.compile of it (Inductor's Triton
    kernels, compiled and autotuned before the profiled range)."""
    if args.bench == "matmul":
        inputs = case.inputs()
    else:
        inputs = case.make_inputs(args.mib)
    fn = case.torch_fn
    if args.frontend == "compile":
        fn = torch.compile(case.torch_fn, dynamic=False)
        fn(*inputs)
    run_profiled(lambda: fn(*inputs), args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
