"""torch.compile(model, backend="fuser") on the GPU (doc/torch_compile.md):
nanoGPT, a Llama-style block and a ResNet-style block, forward and backward
against eager; a few training steps; dropout's mask and PyTorch's
generator; graph breaks, recompilations and dynamic shapes; the options.
The models are in torch_compile_models.py. Skipped without a GPU."""

import copy
import glob
import os
import warnings

import pytest
import torch
import torch.nn.functional as F

import fuser.dynamo  # noqa: F401 - registers the backend "fuser"
import torch_compile_models as models
from helpers import requires_gpu

pytestmark = requires_gpu

requires_nanogpt = pytest.mark.skipif(
    not models.have_nanogpt(), reason="nanoGPT comes with lightning-thunder, not installed"
)

FLOAT32 = dict(rtol=1e-4, atol=1e-4)
BFLOAT16 = dict(rtol=2e-2, atol=2e-2)


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Each test compiles from scratch and counts from zero."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    yield
    torch._dynamo.reset()


def fuser_counts():
    from torch._dynamo.utils import counters

    return counters["fuser"]


def no_fallback_warnings(caught):
    messages = [str(w.message) for w in caught if "fuser backend" in str(w.message)]
    assert not messages, messages


def first_tensor(result):
    return result[0] if isinstance(result, (tuple, list)) else result


def check_forward_and_backward(make, tolerance, **kwargs):
    torch.manual_seed(0)
    model, inputs, loss_of = make(**kwargs)
    reference_model = copy.deepcopy(model)
    expected = reference_model(*inputs)
    loss_of(expected).backward()

    compiled = torch.compile(model, backend="fuser")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = compiled(*inputs)
        loss_of(result).backward()
    no_fallback_warnings(caught)
    torch.testing.assert_close(
        first_tensor(result).float(), first_tensor(expected).float(), **tolerance
    )
    for (name, p), (_, q) in zip(model.named_parameters(), reference_model.named_parameters()):
        torch.testing.assert_close(p.grad.float(), q.grad.float(), **tolerance, msg=name)
    for (name, b), (_, c) in zip(model.named_buffers(), reference_model.named_buffers()):
        torch.testing.assert_close(b.float(), c.float(), **tolerance, msg=name)
    assert fuser_counts()["fused_runs"] > 0, dict(fuser_counts())


# --- models against eager --------------------------------------------------------------
@requires_nanogpt
def test_nanogpt_forward_and_backward_match_eager():
    check_forward_and_backward(models.make_nanogpt, FLOAT32)


@requires_nanogpt
def test_nanogpt_bfloat16_forward_and_backward_match_eager():
    check_forward_and_backward(models.make_nanogpt, BFLOAT16, dtype=torch.bfloat16)


def test_llama_style_block_forward_and_backward_match_eager():
    check_forward_and_backward(models.make_llama_block, BFLOAT16)


def test_resnet_style_block_matches_eager_and_fuses_around_the_convolutions(tmp_path):
    # The convolutions run in cuDNN on both sides; with TF32 they round
    # their inputs to 10 bits, which turns the batch norms' last-bit
    # differences (another summation order) into 1e-4 ones downstream.
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        check_forward_and_backward(models.make_resnet_block, FLOAT32)
    torch._dynamo.reset()
    model, inputs, _ = models.make_resnet_block()
    options = {"fuser.dump": ["partitions"], "fuser.dump_dir": str(tmp_path)}
    torch.compile(model, backend="fuser", options=options)(*inputs)
    (dump,) = glob.glob(str(tmp_path / "graph*.forward.txt"))
    text = open(dump).read()
    fused, eager = text.split("# aten nodes outside the partitions:")
    assert "aten.convolution.default has no translation" in eager
    assert "torch.ops.aten.var_mean.correction" in fused
    assert "torch.ops.aten.relu.default" in fused


@requires_nanogpt
def test_nanogpt_training_steps_follow_eager():
    torch.manual_seed(0)
    model, (idx, targets), _ = models.make_nanogpt()
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="fuser")
    optimizers = [torch.optim.AdamW(m.parameters(), lr=1e-3) for m in (model, reference)]
    compiled_losses = []
    for step in range(5):
        losses = []
        for module, optimizer in zip((compiled, reference), optimizers):
            optimizer.zero_grad(set_to_none=True)
            _, loss = module(idx, targets)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        assert losses[0] == pytest.approx(losses[1], rel=1e-3), (step, losses)
        compiled_losses.append(losses[0])
    assert compiled_losses[-1] < compiled_losses[0]  # it learns the batch, as eager


# --- dropout and PyTorch's generator ---------------------------------------------------------
def dropout_program(x):
    return F.dropout(torch.relu(x) * 2, p=0.3, training=True) + 1


def test_dropout_backward_reads_the_forward_mask():
    x = (torch.rand(1024, 1024, device="cuda") + 0.5).requires_grad_()
    compiled = torch.compile(dropout_program, backend="fuser")
    out = compiled(x)
    out.sum().backward()
    kept = x.grad != 0
    # out = 2x * mask / 0.7 + 1 and d out / dx = 2 * mask / 0.7: one mask.
    torch.testing.assert_close(out - 1, x.detach() * x.grad)
    torch.testing.assert_close(x.grad[kept], torch.full_like(x.grad[kept], 2 / 0.7))
    assert abs(1 - kept.float().mean().item() - 0.3) < 0.01
    assert fuser_counts()["fused_runs"] >= 1


def test_dropout_follows_torch_manual_seed_and_advances_the_generator():
    x = torch.rand(4096, device="cuda") + 0.5
    compiled = torch.compile(dropout_program, backend="fuser")
    torch.manual_seed(1)
    first = compiled(x)
    after_first = torch.rand(8, device="cuda")
    torch.manual_seed(1)
    again = compiled(x)
    third = compiled(x)
    torch.testing.assert_close(first, again)  # same seed, same mask
    assert not torch.equal(again, third)  # the generator moved on
    torch.manual_seed(1)
    fresh = torch.rand(8, device="cuda")
    assert not torch.equal(after_first, fresh)  # the fusion drew from it
    assert fuser_counts()["fused_runs"] >= 3


# --- graph breaks, recompilation, dynamic shapes -------------------------------------------------
def two_graphs(x):
    y = torch.relu(x) * 2
    torch._dynamo.graph_break()
    return torch.exp(y).sum(-1) + 1


def unique_graphs():
    from torch._dynamo.utils import counters

    return counters["stats"]["unique_graphs"]


def test_graph_breaks_give_one_compilation_per_graph():
    x = torch.randn(64, 32, device="cuda")
    torch.testing.assert_close(torch.compile(two_graphs, backend="fuser")(x), two_graphs(x))
    assert unique_graphs() == 2
    assert fuser_counts()["fused_runs"] == 2  # one partition in each graph
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(two_graphs)(x)
    assert explanation.graph_break_count == 1


def test_a_new_dtype_recompiles_and_a_seen_one_does_not():
    compiled = torch.compile(lambda x: (torch.tanh(x) * 3).sum(0), backend="fuser")
    x = torch.randn(64, 32, device="cuda")
    compiled(x)
    compiled(x.half())
    compiled(x)
    assert unique_graphs() == 2


@pytest.mark.parametrize("how", ["dynamic=True", "mark_dynamic"])
def test_new_batch_sizes_reuse_the_graph_and_the_definitions(how):
    from torch._dynamo.testing import CompileCounterWithBackend

    torch.manual_seed(0)
    model, _, _ = models.make_llama_block(dim=128, n_head=4, hidden=256, length=64)
    counter = CompileCounterWithBackend("fuser")
    compiled = torch.compile(
        model, backend=counter, dynamic=True if how == "dynamic=True" else None
    )
    frames, definitions = [], []
    for batch in (2, 3, 5):
        x = torch.randn(batch, 64, 128, device="cuda", dtype=torch.bfloat16)
        if how == "mark_dynamic":
            torch._dynamo.mark_dynamic(x, 0)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x).float(), model(x).float(), **BFLOAT16)
        frames.append(counter.frame_count)
        definitions.append(fuser_counts()["definitions"])
    assert frames[1:] == [frames[0]] * 2, frames  # no recompilation
    assert definitions[1:] == [definitions[0]] * 2, definitions  # one definition for all
    assert fuser_counts()["fused_runs"] > 0


def test_symbolic_view_sizes_are_passed_at_run_time():
    def split_heads(x):
        b, t, c = x.shape
        return (torch.relu(x) * 2).view(b, t, 4, c // 4).transpose(1, 2).sum(-1) + 1

    compiled = torch.compile(split_heads, backend="fuser", dynamic=True)
    for batch, length in ((2, 8), (3, 5), (4, 16)):
        x = torch.randn(batch, length, 32, device="cuda")
        torch.testing.assert_close(compiled(x), split_heads(x))
    assert fuser_counts()["definitions"] >= 1 and fuser_counts()["fused_runs"] >= 3


# --- options ---------------------------------------------------------------------------------
def test_dump_writes_the_cuda_of_each_definition(tmp_path):
    options = {"fuser.dump": ["definitions", "cuda"], "fuser.dump_dir": str(tmp_path)}
    compiled = torch.compile(dropout_program, backend="fuser", options=options)
    compiled(torch.randn(256, 64, device="cuda"))
    (cuda,) = glob.glob(os.path.join(tmp_path, "*.cu"))
    assert "__global__" in open(cuda).read()
    assert glob.glob(os.path.join(tmp_path, "*.py"))


def test_eager_partitions_run_with_aten():
    compiled = torch.compile(
        dropout_program, backend="fuser", options={"fuser.eager_partitions": lambda info: True}
    )
    x = torch.rand(256, 64, device="cuda") + 0.5
    out = compiled(x)
    assert ((out == 1) | (out > 1)).all()
    assert fuser_counts()["fused_runs"] == 0


def test_run_options_reach_execute():
    def fn(x, w):
        return F.gelu(x @ w) + 1

    x = torch.randn(64, 32, device="cuda")
    w = torch.randn(32, 16, device="cuda")
    # float32 products run with ATen inside the fusion (the Matmul
    # scheduler takes half and bfloat16): forbidding that must fail.
    strict = torch.compile(
        fn,
        backend="fuser",
        options={"fuser.fuse_matmul": True, "fuser.disable_options": ["matmul_expr_eval"]},
    )
    with pytest.raises(Exception, match="scheduler"):
        strict(x, w)
    torch._dynamo.reset()
    allowed = torch.compile(fn, backend="fuser", options={"fuser.fuse_matmul": False})
    torch.testing.assert_close(allowed(x, w), fn(x, w))
