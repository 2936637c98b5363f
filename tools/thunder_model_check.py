#!/usr/bin/env python3
"""Runs Thunder's nanoGPT and litgpt Llama-style block (small, float32)
forward and backward through thunder.jit on fuser and prints how far the
output and every parameter's gradient are from eager's, and how many
segments fell back to ATen: the first look at a model that goes wrong on
fuser. With FUSER_ENABLE=validate_runs (every fusion and every kernel
segment checked against ATen) and FUSER_DUMP=failure_repro (a repro
script for each failure), it names the fusion at fault
(doc/thunder.md §8). Needs a GPU, Thunder and fuser on PYTHONPATH, as
tools/gpu_thunder.sh's "models" stage sets them.

    python3 tools/thunder_model_check.py nanogpt|llama
"""

import sys


def make_model(which, torch):
    if which == "llama":
        from thunder.tests import litgpt_model

        config = litgpt_model.Config.from_name(
            "Llama-2-7b-hf", n_layer=1, n_embd=256, n_head=8, n_query_groups=8,
            intermediate_size=688, padded_vocab_size=512, block_size=128,
        )
        return litgpt_model.GPT(config).cuda(), torch.randint(0, 512, (2, 128), device="cuda")
    from thunder.tests import nanogpt_model

    config = nanogpt_model.GPTConfig(
        n_layer=2, n_head=4, n_embd=128, block_size=64, vocab_size=512, dropout=0.0, bias=True
    )
    return nanogpt_model.GPT(config).cuda(), torch.randint(0, 512, (4, 64), device="cuda")


def first(result):
    return result[0] if isinstance(result, tuple) else result


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "llama"
    if which not in ("llama", "nanogpt"):
        sys.exit(f"usage: {sys.argv[0]} nanogpt|llama (got {which!r})")
    import torch

    import fuser.nvfuser_compat

    fuser.nvfuser_compat.enable()
    import thunder
    from fuser import _C

    torch.manual_seed(0)
    model, idx = make_model(which, torch)
    fallbacks = _C.kernel_fallback_count()
    reference = first(model(idx))
    grad_out = torch.randn_like(reference)
    reference.backward(grad_out)
    expected = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    out = first(thunder.jit(model)(idx))
    print(f"{which}: output max |difference| {(out - reference).abs().max().item():.3g}")
    out.backward(grad_out)
    for name, p in model.named_parameters():
        if name in expected:
            print(f"  grad {name}: max |difference| {(p.grad - expected[name]).abs().max().item():.3g}")
    print(f"segments that fell back to ATen: {_C.kernel_fallback_count() - fallbacks}")


if __name__ == "__main__":
    main()
