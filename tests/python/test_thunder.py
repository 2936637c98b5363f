"""Lightning Thunder's programs on fuser (doc/thunder.md), on the GPU:
nanoGPT and a Llama-style decoder block, forward and backward through
thunder.jit, against eager within Thunder's tolerances (as its own
nanoGPT test: assert_close's defaults for the output, 0.1 absolute and
relative for the gradients); and a fusion whose kernel
fails to compile, which must still run (the runtime runs its segment with
ATen). Each test runs in a fresh interpreter: fuser.nvfuser_compat.enable()
changes sys.modules for the whole process."""

import os
import subprocess
import sys
import textwrap

import pytest

import fuser
from helpers import requires_gpu

try:
    import thunder  # noqa: F401

    HAS_THUNDER = True
except ImportError:  # Thunder is a test dependency (tools/setup.sh)
    HAS_THUNDER = False

requires_thunder = pytest.mark.skipif(not HAS_THUNDER, reason="lightning-thunder is not installed")

PRELUDE = """
import torch
import fuser.nvfuser_compat
fuser.nvfuser_compat.enable()
import thunder
from thunder.examine import get_fusion_symbols

def fusions_on_fuser(jitted, backward=False):
    traces = thunder.last_backward_traces(jitted) if backward else thunder.last_traces(jitted)
    return [b for b in get_fusion_symbols(traces[-1]) if b.sym.name.startswith("nvFusion")]

def check_forward_and_backward(model, inputs):
    reference = model(*inputs)
    reference = reference[0] if isinstance(reference, tuple) else reference
    (grad_out,) = [torch.randn_like(reference)]
    reference.backward(grad_out)
    expected = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    jitted = thunder.jit(model)
    out = jitted(*inputs)
    out = out[0] if isinstance(out, tuple) else out
    torch.testing.assert_close(out, reference)
    out.backward(grad_out)
    for name, p in model.named_parameters():
        if name in expected:
            # Thunder's own tolerance for nanoGPT's gradients
            # (test_networks.py, test_nanogpt_complete_autograd).
            torch.testing.assert_close(
                p.grad, expected[name], atol=1e-1, rtol=1e-1,
                msg=lambda m, name=name: f"{name}: {m}")
    assert fusions_on_fuser(jitted), "Thunder gave fuser no fusion"
    assert fusions_on_fuser(jitted, backward=True), "no backward fusion on fuser"
    print("fusions", len(fusions_on_fuser(jitted)), len(fusions_on_fuser(jitted, True)))
"""


def run_with_thunder(body, timeout=900):
    env = dict(os.environ)
    paths = [os.path.dirname(p) for p in fuser.__path__]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    source = PRELUDE + textwrap.dedent(body)
    result = subprocess.run(
        [sys.executable, "-c", source], env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-6000:]
    return result.stdout


@requires_thunder
@requires_gpu
def test_nanogpt_forward_and_backward_match_eager():
    out = run_with_thunder("""
        from thunder.tests import nanogpt_model
        torch.manual_seed(0)
        config = nanogpt_model.GPTConfig(n_layer=2, n_head=4, n_embd=128, block_size=64,
                                         vocab_size=512, dropout=0.0, bias=True)
        model = nanogpt_model.GPT(config).cuda()
        idx = torch.randint(0, 512, (4, 64), device="cuda")
        check_forward_and_backward(model, (idx,))
    """)
    assert "fusions" in out


@requires_thunder
@requires_gpu
def test_llama_style_block_forward_and_backward_match_eager():
    out = run_with_thunder("""
        torch.manual_seed(0)
        try:
            from thunder.tests import litgpt_model
            config = litgpt_model.Config.from_name(
                "Llama-2-7b-hf", n_layer=1, n_embd=256, n_head=8, n_query_groups=8,
                intermediate_size=688, padded_vocab_size=512, block_size=128)
            model = litgpt_model.GPT(config).cuda()
            idx = torch.randint(0, 512, (2, 128), device="cuda")
            check_forward_and_backward(model, (idx,))
            print("litgpt")
        except ImportError:
            from thunder.tests import llama2_model
            args = llama2_model.ModelArgs(dim=256, n_layers=1, n_heads=8, vocab_size=512,
                                          multiple_of=32, max_seq_len=128, dropout=0.0)
            model = llama2_model.Transformer(args).cuda()
            idx = torch.randint(0, 512, (2, 128), device="cuda")
            check_forward_and_backward(model, (idx, idx))
            print("llama2")
    """)
    assert "fusions" in out


@requires_thunder
@requires_gpu
@pytest.mark.kernel_fallback
def test_a_kernel_that_fails_to_compile_does_not_break_the_program():
    out = run_with_thunder("""
        from fuser import _C
        def f(x, y):
            return torch.nn.functional.gelu(x * y).sum(dim=1)
        x = torch.randn(64, 96, device="cuda")
        y = torch.randn(64, 96, device="cuda")
        jitted = thunder.jit(f)
        _C._fail_next_compiles_for_testing(100)
        before = _C.kernel_fallback_count()
        torch.testing.assert_close(jitted(x, y), f(x, y))
        _C._fail_next_compiles_for_testing(0)
        assert fusions_on_fuser(jitted)
        print("fallbacks", _C.kernel_fallback_count() - before)
    """)
    assert int(out.split("fallbacks")[-1].split()[0]) >= 1, out
