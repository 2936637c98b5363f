"""The attention of a transformer block (examples/transformer_block.py):
its three non-matmul fusions one by one, and the whole block with
PyTorch's matmuls between them, for fuser and nvFuser (the same
FusionDefinition code), PyTorch eager and torch.compile, measured in the
same run.

Each row: the GPU kernels one call launches (torch.profiler; copies and
memsets left out), the median time (triton.testing.do_bench, CUDA events)
and, for a fusion, GB/s of the fewest bytes it must move (inputs read
once, outputs written once). Eager's head split is written with
.contiguous(), the same copies the fusion makes; the block row uses
eager's views instead, as a PyTorch program would. Results go to
benchmarks/results/transformer.{csv,md,png}.

    python3 benchmarks/bench_transformer.py [--out DIR]
"""

import argparse
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))

from harness import frontends  # noqa: E402
from kernel_table import kernel_table, plot_times, timed_row, write_csv  # noqa: E402
from transformer_block import Block, check_dropout, eager_block  # noqa: E402

SHAPE = (8, 1024, 16, 64)  # batch, sequence, heads, head size
P = 0.1


def nbytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def eager_fusions(shape, p):
    """The three fusions in PyTorch, as fuser's fusions compute them."""
    batch, seq, heads, head_dim = shape

    def qkv_heads(qkv):
        return [
            t.view(batch, seq, heads, head_dim).transpose(1, 2).contiguous()
            for t in qkv.chunk(3, dim=-1)
        ]

    def causal_softmax_dropout(scores):
        future = torch.ones(seq, seq, dtype=torch.bool, device=scores.device).triu(1)
        x = (scores.float() / math.sqrt(head_dim)).masked_fill(future, float("-inf"))
        probs = torch.nn.functional.dropout(torch.softmax(x, dim=-1), p)
        return [probs.to(torch.bfloat16)]

    def residual_dropout_add(x, y):
        x.copy_((x.float() + torch.nn.functional.dropout(y.float(), p)).to(torch.bfloat16))
        return []

    return [qkv_heads, causal_softmax_dropout, residual_dropout_add]


def fusion_inputs(shape):
    batch, seq, heads, head_dim = shape
    embed = heads * head_dim
    bf16 = dict(device="cuda", dtype=torch.bfloat16)
    return [
        [torch.randn(batch, seq, 3 * embed, **bf16)],
        [torch.randn(batch, heads, seq, seq, **bf16) * 8.0],
        [torch.randn(batch, seq, embed, **bf16), torch.randn(batch, seq, embed, **bf16)],
    ]


def check(name, got, inputs, args, shape, p):
    """The frontend's outputs (`got`, and `args` updated in place) against
    PyTorch (dropout: kept elements scaled, the fraction dropped within 1%
    of p)."""
    batch, seq, heads, head_dim = shape
    if name == "qkv_heads":
        for g, t in zip(got, inputs[0].chunk(3, dim=-1)):
            torch.testing.assert_close(g, t.view(batch, seq, heads, head_dim).transpose(1, 2))
    elif name == "causal_softmax_dropout":
        future = torch.ones(seq, seq, dtype=torch.bool, device="cuda").triu(1)
        x = (inputs[0].float() / math.sqrt(head_dim)).masked_fill(future, float("-inf"))
        check_dropout(got[0], torch.softmax(x, dim=-1), p)
    else:  # x += dropout(y), in place
        check_dropout(args[0].float() - inputs[0].float(), inputs[1].float(), p)


def row_for(name, runners, inputs, moved, rotate):
    sets = [inputs] + [[t.clone() for t in inputs] for _ in range(rotate - 1)]
    return timed_row(name, runners, inputs, sets, moved)


def measure_fusions(compilers, shape, p):
    names = ["qkv_heads", "causal_softmax_dropout", "residual_dropout_add"]
    blocks = {}
    for frontend, module in compilers:
        try:
            blocks[frontend] = Block(module, shape, p)
        except Exception as error:  # noqa: BLE001
            print(f"  {frontend} cannot define the block: {error}", flush=True)
    rows = []
    eager = eager_fusions(shape, p)
    for k, (name, inputs) in enumerate(zip(names, fusion_inputs(shape))):
        expected = eager[k](*[t.clone() for t in inputs])
        # The residual fusion writes x in place.
        written = inputs[:1] if name == "residual_dropout_add" else expected
        moved = nbytes(inputs) + nbytes(written)
        runners = {}
        segments = ""
        for frontend, block in blocks.items():
            fd = block.fusions[k]
            try:
                args = [t.clone() for t in inputs]
                got = fd.execute(args)
                check(name, got, inputs, args, shape, p)
                if frontend == "fuser":
                    segments = "+".join(fd.last_scheduler_types())
            except Exception as error:  # noqa: BLE001
                print(f"  {frontend} cannot run {name}: {error}", flush=True)
                continue
            runners[frontend] = lambda *a, fd=fd: fd.execute(list(a))
        torch._dynamo.reset()
        compiled = torch.compile(eager[k], dynamic=False)
        compiled(*[t.clone() for t in inputs])
        runners["eager"] = eager[k]
        runners["compile"] = compiled
        rows.append(row_for(name, runners, inputs, moved, rotate=4))
        rows[-1]["fuser_segments"] = segments
    return rows, blocks


def block_inputs(shape):
    """x [B, S, E] and the block's weights w_qkv [E, 3E] and w_o [E, E]."""
    batch, seq, heads, head_dim = shape
    embed = heads * head_dim
    bf16 = dict(device="cuda", dtype=torch.bfloat16)
    x = torch.randn(batch, seq, embed, **bf16)
    w_qkv = torch.randn(embed, 3 * embed, **bf16) / math.sqrt(embed)
    w_o = torch.randn(embed, embed, **bf16) / math.sqrt(embed)
    return [x, w_qkv, w_o]


def measure_block(blocks, shape, p):
    x, w_qkv, w_o = block_inputs(shape)
    runners = {name: (lambda x, w1, w2, b=b: b(x, w1, w2)) for name, b in blocks.items()}
    runners["eager"] = lambda x, w1, w2: eager_block(x, w1, w2, shape, p)
    torch._dynamo.reset()
    compiled = torch.compile(runners["eager"], dynamic=False)
    compiled(x.clone(), w_qkv, w_o)
    runners["compile"] = compiled
    return row_for("attention_block", runners, [x, w_qkv, w_o], 0, rotate=2)


def write(out_dir, rows, shape):
    os.makedirs(out_dir, exist_ok=True)
    write_csv(os.path.join(out_dir, "transformer.csv"), rows)
    stamp = time.strftime("%Y-%m-%d")
    batch, seq, heads, head_dim = shape
    with open(os.path.join(out_dir, "transformer.md"), "w") as f:
        f.write(
            f"# Transformer block attention ({torch.cuda.get_device_name()}, torch "
            f"{torch.__version__}, {stamp})\n\n"
            f"bf16, batch {batch}, sequence {seq}, {heads} heads of {head_dim}, "
            f"dropout {P}. Kernels per call (torch.profiler, copies and memsets "
            "left out) and median time; GB/s of the fewest bytes a fusion must "
            "move. fuser/x is x's time over fuser's (above 1: fuser is faster).\n\n"
        )
        f.write(kernel_table(rows))
    plot_times(os.path.join(out_dir, "transformer.png"), rows, figsize=(9, 4), rotation=15)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench_transformer: no CUDA device, nothing measured")
        return 0
    compilers = frontends()
    rows, blocks = measure_fusions(compilers, SHAPE, P)
    rows.append(measure_block(blocks, SHAPE, P))
    write(args.out, rows, SHAPE)
    print(f"wrote {args.out}/transformer.{{csv,md,png}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
