"""torch.compile with backend="fuser" against TorchInductor (its default
mode and mode="max-autotune-no-cudagraphs") and eager, on one training
step (forward, backward, AdamW step) of the models of
tests/python/torch_compile_models.py: nanoGPT, a Llama-style decoder block
and a ResNet-style basic block. GPU only.

Per model and configuration: ms per step (median of CUDA-event timings),
CUDA kernels per step (torch.profiler), the time of the first step (for
the compiled configurations, compilation included: the kernel caches of
both compilers are off for it) and the largest difference of the first
step's loss from eager's.

Each (model, configuration) runs in a process of its own, so that the
first step of one does not profit from another's imports, warm-ups or
caches: run the script once, it starts them all.

    PYTHONPATH=python:build-gpu/python python3 benchmarks/bench_torch_compile.py \\
        --csv benchmarks/results/torch_compile.csv [--quick]
"""

import argparse
import json
import os
import sys
import time

from kernel_table import (
    median_step_ms,
    plot_step_times,
    profile_step,
    row_of_child,
    write_rows_csv,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = ["eager", "fuser", "inductor", "inductor-max-autotune"]
MODELS = ["nanogpt", "llama_block", "resnet_block"]


# --- one (model, configuration), in this process -------------------------------------
def make_model(name, quick):
    import torch

    sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
    import torch_compile_models as models

    if name == "nanogpt":
        size = (
            dict(n_layer=2, n_head=4, n_embd=256, block_size=128, batch=4)
            if quick
            else dict(n_layer=6, n_head=12, n_embd=768, block_size=1024, batch=8)
        )
        vocab = 512 if quick else 50304
        return models.make_nanogpt(dtype=torch.bfloat16, vocab_size=vocab, **size)
    if name == "llama_block":
        size = (
            dict(dim=256, n_head=8, hidden=688, batch=2, length=128)
            if quick
            else dict(dim=4096, n_head=32, hidden=11008, batch=2, length=2048)
        )
        return models.make_llama_block(dtype=torch.bfloat16, **size)
    size = dict(channels=64, batch=8, size=32) if quick else dict(channels=256, batch=32, size=56)
    return models.make_resnet_block(dtype=torch.float32, **size)


def compiled(config, model):
    import torch

    if config == "eager":
        return model
    if config == "fuser":
        import fuser.dynamo  # noqa: F401 - registers the backend

        return torch.compile(model, backend="fuser")
    if config == "inductor":
        return torch.compile(model)
    return torch.compile(model, mode="max-autotune-no-cudagraphs")


def run_one(config, model_name, quick):
    # Compile from nothing: no kernel cache of an earlier run helps the
    # first step (inductor's FX graph and autotuning caches, fuser's cubins).
    os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
    os.environ["FUSER_KERNEL_CACHE_DIR"] = "off"
    import copy

    import torch

    torch.manual_seed(0)
    model, inputs, loss_of = make_model(model_name, quick)
    reference = copy.deepcopy(model)
    expected = loss_of(reference(*inputs)).item()
    fn = compiled(config, model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of(fn(*inputs))
        loss.backward()
        optimizer.step()
        return loss

    torch.cuda.synchronize()
    start = time.perf_counter()
    first_loss = step().item()
    torch.cuda.synchronize()
    first_s = time.perf_counter() - start
    ms = median_step_ms(step, 10 if quick else 30)
    kernels, profile = profile_step(step)
    row = {
        "model": model_name,
        "config": config,
        "ms_per_step": round(ms, 3),
        "kernels_per_step": kernels,
        "first_step_s": round(first_s, 2),
        "first_loss_diff_vs_eager": abs(first_loss - expected),
        "device": torch.cuda.get_device_name(),
        "quick": quick,
        "profile": profile,
    }
    if config == "fuser":
        from torch._dynamo.utils import counters

        row["fuser_definitions"] = counters["fuser"]["definitions"]
        row["fuser_eager_partition_runs"] = counters["fuser"]["eager_runs"]
    return row


# --- the run: each (model, configuration) in its own process --------------------------------
def run_all(args):
    rows = []
    # Inductor's max-autotune compiles for minutes: it runs last, so that a
    # run cut short still has the other columns of every model.
    order = [(m, c) for c in CONFIGS[:-1] for m in MODELS] + [(m, CONFIGS[-1]) for m in MODELS]
    for model_name, config in order:
        cmd = [sys.executable, os.path.abspath(__file__), "--one", config, model_name]
        if args.quick:
            cmd.append("--quick")
        row = row_of_child(cmd, {"model": model_name, "config": config}, timeout=args.timeout)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.csv:
        write_rows_csv(args.csv, rows)
        groups = [{"model": m} for m in MODELS]
        plot_step_times(os.path.splitext(args.csv)[0] + ".png", rows, groups, CONFIGS)
    print_table(rows)


def print_table(rows):
    print("\nms per step / CUDA kernels per step / first step (s), one training step")
    print(f"{'model':14} " + " ".join(f"{c:>26}" for c in CONFIGS))
    for model_name in MODELS:
        cells = []
        for config in CONFIGS:
            row = next((r for r in rows if (r["model"], r["config"]) == (model_name, config)), None)
            if row is None or "error" in row:
                cells.append(f"{'-' if row is None else 'error':>26}")
            else:
                ms, kernels, first = (
                    row["ms_per_step"],
                    row["kernels_per_step"],
                    row["first_step_s"],
                )
                cells.append(f"{f'{ms:.2f} / {kernels} / {first:.1f}':>26}")
        print(f"{model_name:14} " + " ".join(cells))
    errors = [r for r in rows if "error" in r]
    for row in errors:
        print(f"{row['model']} {row['config']}: {row['error']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--one", nargs=2, metavar=("CONFIG", "MODEL"))
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--csv", help="where to write the rows")
    parser.add_argument(
        "--timeout", type=int, default=3600, help="seconds one (model, configuration) may take"
    )
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(*args.one, args.quick)), flush=True)
    else:
        run_all(args)


if __name__ == "__main__":
    main()
