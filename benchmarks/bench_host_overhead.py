"""Host time of a cache hit from Python: fd.execute of a two-input add of
1024 floats, per call, for fuser and nvFuser (the same definition), with
eager PyTorch and torch.compile of the same add in the same run. Launches
are asynchronous, so this is host time: the median over batches of calls,
the device synchronized between batches only.

    python3 benchmarks/bench_host_overhead.py [--out benchmarks/results]
"""

import argparse
import csv
import os
import sys
import time

import torch

from harness import define_input, frontends, fusion_of

BATCHES = 50
CALLS = 200


def per_call_us(fn):
    fn()  # compile / warm up
    fn()
    times = []
    for _ in range(BATCHES):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(CALLS):
            fn()
        times.append((time.perf_counter() - start) / CALLS * 1e6)
    times.sort()
    return times[len(times) // 2], times[0], times[-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench_host_overhead: no CUDA device, nothing measured")
        return 0
    a = torch.randn(1024, device="cuda")
    b = torch.randn(1024, device="cuda")

    def d_add(fd, m, ins):
        fd.add_output(fd.ops.add(define_input(fd, m, ins[0]), define_input(fd, m, ins[1])))

    results = {}
    for name, module in frontends():
        inputs = [a, b]
        try:
            fd = fusion_of(module, d_add, inputs)
            results[name] = per_call_us(lambda fd=fd: fd.execute(inputs))
        except Exception as error:  # noqa: BLE001
            if name == "fuser":
                raise
            print(f"{name} cannot run the add: {error}")
    results["eager"] = per_call_us(lambda: a + b)
    compiled = torch.compile(lambda x, y: x + y, dynamic=False)
    results["torch.compile"] = per_call_us(lambda: compiled(a, b))

    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "host_overhead_python.csv")
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["runner", "median_us", "min_us", "max_us"])
        for name, (median, low, high) in results.items():
            writer.writerow([name, round(median, 2), round(low, 2), round(high, 2)])
    for name, (median, low, high) in results.items():
        print(
            f"host_overhead_python: {name:>13} {median:6.2f} us per call "
            f"(min {low:.2f}, max {high:.2f}; {BATCHES} batches of {CALLS})"
        )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
