"""Real PyTorch models through Lightning Thunder (thunder.jit) on fuser,
beside Thunder on nVFuser 0.2.36, Thunder's torch executor, torch.compile
and eager, in one run: ms per step, kernels per step, the fusions Thunder
handed to the nvFuser executor, and the largest difference from eager.

Models (bf16): nanoGPT (thunder/tests/nanogpt_model.py) and a Llama-style
decoder block (litgpt's, thunder/tests/litgpt_model.py, when litgpt
imports; else Thunder's llama2 model), each forward and forward+backward.

fuser and nvFuser both answer to the module name `nvfuser_direct`, so each
configuration runs in a process of its own, started by this script with
its environment (doc/thunder.md): run it once, it runs them all.

    python3 benchmarks/bench_thunder.py --csv out.csv [--quick]

Environment: FUSER_PYTHONPATH (fuser's package and extension), and for
the peer NVFUSER_PYTHONPATH (nvFuser 0.2.36 and tools/nvfuser_legacy_shim)
and NVFUSER_PRELOAD (its ABI shim), as tools/gpu_thunder.sh sets them.
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

CONFIGS = ["fuser", "nvfuser", "thunder-torch", "torch.compile", "eager"]
CASES = [
    ("nanogpt", "forward"),
    ("nanogpt", "forward+backward"),
    ("llama_block", "forward"),
    ("llama_block", "forward+backward"),
]


# --- models ---------------------------------------------------------------------
def make_nanogpt(device, quick):
    from thunder.tests import nanogpt_model

    config = nanogpt_model.GPTConfig(
        n_layer=2 if quick else 4,
        n_head=12,
        n_embd=768,
        block_size=1024,
        vocab_size=50304,
        dropout=0.0,
        bias=True,
    )
    model = nanogpt_model.GPT(config).to(device=device, dtype=torch.bfloat16)
    batch, seq = (2, 256) if quick else (8, 1024)
    idx = torch.randint(0, config.vocab_size, (batch, seq), device=device)
    return model, (idx,), "nanoGPT (4 layers, 768 wide, 12 heads), batch 8 x 1024"


def make_llama_block(device, quick):
    try:
        from thunder.tests import litgpt_model

        config = litgpt_model.Config.from_name(
            "Llama-2-7b-hf",
            n_layer=1,
            n_embd=1024 if quick else 4096,
            n_head=8 if quick else 32,
            n_query_groups=8 if quick else 32,
            intermediate_size=2816 if quick else 11008,
            padded_vocab_size=32000,
            block_size=2048,
        )
        model = litgpt_model.GPT(config).to(device=device, dtype=torch.bfloat16)
        label = "litgpt Llama-2 block (4096 wide, 32 heads, SwiGLU 11008), batch 2 x 2048"
        batch, seq = (1, 256) if quick else (2, 2048)
        idx = torch.randint(0, 32000, (batch, seq), device=device)
        return model, (idx,), label
    except ImportError:
        from thunder.tests import llama2_model

        args = llama2_model.ModelArgs(
            dim=1024 if quick else 4096,
            n_layers=1,
            n_heads=8 if quick else 32,
            vocab_size=32000,
            multiple_of=256,
            max_seq_len=2048,
            dropout=0.0,
        )
        model = llama2_model.Transformer(args).to(device=device, dtype=torch.bfloat16)
        batch, seq = (1, 256) if quick else (2, 2048)
        idx = torch.randint(0, 32000, (batch, seq), device=device)
        label = "Thunder's llama2 block (litgpt did not import), batch 2 x 2048"
        return model, (idx, idx), label


MODELS = {"nanogpt": make_nanogpt, "llama_block": make_llama_block}


def logits_of(result):
    return result[0] if isinstance(result, (tuple, list)) else result


# --- one configuration, in this process ---------------------------------------
def compiled(config, model):
    if config == "eager":
        return model
    if config == "torch.compile":
        return torch.compile(model)
    import thunder

    if config == "thunder-torch":
        return thunder.jit(model, executors=["sdpa", "torch"])
    return thunder.jit(model)  # Thunder's defaults, nvFuser among them


def count_fusions(config, jitted, backward):
    if config not in ("fuser", "nvfuser"):
        return ""
    import thunder
    from thunder.examine import get_fusion_symbols

    traces = thunder.last_backward_traces(jitted) if backward else thunder.last_traces(jitted)
    if not traces:
        return 0
    return sum(
        1 for bsym in get_fusion_symbols(traces[-1], False) if "nvFusion" in bsym.sym.name
    )


def time_fusions(step, steps=5):
    """GPU time (ms, median over `steps` steps) of each call of a fusion
    Thunder handed to the nvFuser executor, from CUDA events around the
    call, keyed by the call's place in the step and the fusion's name
    (Thunder names a fusion by its ops: "nvFusion1: (slice_prim, ...)"):
    the same keys for fuser and nvFuser (one trace), so that a slower case
    is traced to the fusions that lose."""
    import statistics

    import torch
    from thunder.executors import nvfuserex_impl

    wrapper = nvfuserex_impl.FusionDefinitionWrapper
    original = wrapper.__call__
    calls = []

    def timed(self, *args):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        out = original(self, *args)
        end.record()
        calls.append((self.name, start, end))
        return out

    wrapper.__call__ = timed
    per_step = []
    try:
        for _ in range(steps):
            calls.clear()
            step()
            torch.cuda.synchronize()
            per_step.append(
                {f"{i:03d} {name}": s.elapsed_time(e) for i, (name, s, e) in enumerate(calls)}
            )
    finally:
        wrapper.__call__ = original
    return {k: round(statistics.median(t.get(k, 0.0) for t in per_step), 4) for k in per_step[0]}


def run_one(config, model_name, mode, quick):
    if config == "fuser":
        import fuser.nvfuser_compat

        fuser.nvfuser_compat.enable()
    global torch
    import torch

    torch.manual_seed(0)
    device = "cuda"
    model, inputs, label = MODELS[model_name](device, quick)
    backward = mode == "forward+backward"
    with torch.no_grad():
        reference = logits_of(model(*inputs)).float()
    first = time.perf_counter()
    fn = compiled(config, model)
    if backward:
        model.train()

        def step():
            out = logits_of(fn(*inputs))
            out.float().pow(2).mean().backward()
            return out

    else:

        def step():
            with torch.no_grad():
                return logits_of(fn(*inputs))

    out = step()
    torch.cuda.synchronize()
    first = time.perf_counter() - first
    diff = (out.float() - reference).abs().max().item()
    ms = median_step_ms(step, 10 if quick else 20)
    kernels, profile = profile_step(step)
    fusions = count_fusions(config, fn, backward)
    fusion_ms = time_fusions(step) if config in ("fuser", "nvfuser") else {}
    return {
        "model": model_name,
        "label": label,
        "mode": mode,
        "config": config,
        "ms_per_step": round(ms, 3),
        "kernels_per_step": kernels,
        "fusions": fusions,
        "first_step_s": round(first, 2),
        "max_abs_diff_vs_eager": diff,
        "device": torch.cuda.get_device_name(),
        "profile": profile,
        "fusion_ms": fusion_ms,
    }


# --- the run: every configuration in its own process ---------------------------
def child_env(config):
    env = dict(os.environ)
    thunder_site = env.get("THUNDER_SITE", "")
    if config == "fuser":
        path = env.get("FUSER_PYTHONPATH", "")
    elif config == "nvfuser":
        path = env.get("NVFUSER_PYTHONPATH", "")
        if env.get("NVFUSER_PRELOAD"):
            env["LD_PRELOAD"] = env["NVFUSER_PRELOAD"]
    else:
        path = ""
    env["PYTHONPATH"] = os.pathsep.join(p for p in (path, thunder_site) if p)
    return env


def run_all(args):
    rows = []
    cases = [(m, mode) for m, mode in CASES if not args.models or m in args.models]
    for model_name, mode in cases:
        for config in CONFIGS:
            cmd = [sys.executable, __file__, "--one", config, model_name, mode]
            if args.quick:
                cmd.append("--quick")
            keys = {"model": model_name, "mode": mode, "config": config}
            row = row_of_child(cmd, keys, env=child_env(config), timeout=args.timeout)
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.csv:
        write_rows_csv(args.csv, rows)
        groups = [{"model": m, "mode": mode} for m, mode in cases]
        plot_step_times(os.path.splitext(args.csv)[0] + ".png", rows, groups, CONFIGS)
    print_table(rows, cases)
    print("\n".join(fusion_losses(rows)))


def print_table(rows, cases):
    print(f"\n{'model':12} {'mode':17} " + " ".join(f"{c:>14}" for c in CONFIGS))
    for model_name, mode in cases:
        cells = []
        for config in CONFIGS:
            row = next(
                (r for r in rows if (r["model"], r["mode"], r["config"]) == (model_name, mode, config)),
                None,
            )
            if row is None or "error" in row:
                cells.append(f"{'error':>14}")
            else:
                cells.append(f"{row['ms_per_step']:>8.2f}ms/{row['kernels_per_step']:<4}")
        print(f"{model_name:12} {mode:17} " + " ".join(cells))


def fusion_losses(rows, top=8):
    """Per case, the fusions where fuser loses most time to nvFuser (ms,
    from each row's fusion_ms): the lines an analysis starts from."""
    lines = []
    cases = sorted({(r["model"], r["mode"]) for r in rows})
    for model_name, mode in cases:
        by_config = {
            r["config"]: r.get("fusion_ms") or {}
            for r in rows
            if (r["model"], r["mode"]) == (model_name, mode) and "error" not in r
        }
        ours, theirs = by_config.get("fuser"), by_config.get("nvfuser")
        if not ours or not theirs:
            continue
        common = [k for k in ours if k in theirs]
        lines.append(
            f"{model_name} {mode}: {len(ours)} fusion calls on fuser, {len(theirs)} on nvFuser; "
            f"{sum(ours[k] for k in common):.3f} ms against {sum(theirs[k] for k in common):.3f} ms"
        )
        for k in sorted(common, key=lambda k: theirs[k] - ours[k])[:top]:
            lines.append(f"  {k:24} fuser {ours[k]:8.4f} ms  nvFuser {theirs[k]:8.4f} ms")
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--one", nargs=3, metavar=("CONFIG", "MODEL", "MODE"))
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--csv")
    parser.add_argument("--losses", metavar="CSV", help="print the per-fusion losses of a CSV this script wrote")
    parser.add_argument(
        "--models", nargs="+", choices=sorted(MODELS), help="only these models (a run per model fits a short GPU session)"
    )
    parser.add_argument(
        "--timeout", type=int, default=900, help="seconds one (configuration, case) may take"
    )
    args = parser.parse_args()
    if args.losses:
        import csv

        with open(args.losses) as f:
            rows = [
                {k: json.loads(v) if k == "fusion_ms" and v else v for k, v in r.items()}
                for r in csv.DictReader(f)
            ]
        print("\n".join(fusion_losses([r for r in rows if not r.get("error")])))
    elif args.one:
        print(json.dumps(run_one(*args.one, args.quick)), flush=True)
    else:
        run_all(args)


if __name__ == "__main__":
    main()
