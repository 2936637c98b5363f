# The non-matmul fusions of a transformer block's attention, written with
# nvFuser's Python frontend API (the same definitions run on nvFuser: see
# benchmarks/bench_transformer.py), between the block's matmuls, which
# PyTorch runs:
#
#   qkv = x @ w_qkv                         [B, S, 3E]
#   q, k, v = qkv_heads(qkv)                slice, reshape, permute: [B, H, S, D]
#   scores = q @ k^T                        [B, H, S, S]
#   probs = causal_softmax_dropout(scores)  triu/where mask, softmax, dropout
#   attn = (probs @ v) as [B, S, E]
#   x += dropout(attn @ w_o)                residual add, written into x in place
#
#   PYTHONPATH=python:build/python python3 examples/transformer_block.py
# (needs a CUDA GPU)
import math

import torch


def define_qkv_heads(fd, module, shape):
    """q, k, v as [B, H, S, D] from qkv [B, S, 3E]: a slice of E columns
    each, its heads split off and moved before the sequence."""
    batch, seq, heads, head_dim = shape
    embed = heads * head_dim
    qkv = fd.define_tensor(
        shape=[-1, -1, -1], contiguity=[True, True, True], dtype=module.DataType.BFloat16
    )
    for part in range(3):
        t = fd.ops.slice(qkv, [0, 0, part * embed], [batch, seq, (part + 1) * embed], [1, 1, 1])
        t = fd.ops.reshape(t, [batch, seq, heads, head_dim])
        fd.add_output(fd.ops.permute(t, [0, 2, 1, 3]))


def define_causal_softmax_dropout(fd, module, shape, p):
    """softmax(scores / sqrt(D) with the future masked) with dropout p, in
    float, as bf16: the mask is triu of ones, the future above the
    diagonal."""
    batch, seq, heads, head_dim = shape
    dt = module.DataType
    scores = fd.define_tensor(
        shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=dt.BFloat16
    )
    full = [batch, heads, seq, seq]
    x = fd.ops.mul(fd.ops.cast(scores, dt.Float), 1.0 / math.sqrt(head_dim))
    # Ones above the diagonal of each [S, S] matrix: no memory, two iotas.
    future = fd.ops.triu(fd.ops.full(full, 1.0, dt.Float), 1)
    x = fd.ops.where(fd.ops.gt(future, 0.0), float("-inf"), x)
    row_max = fd.ops.broadcast_in_dim(fd.ops.max(x, [3]), full, [0, 1, 2])
    e = fd.ops.exp(fd.ops.sub(x, row_max))
    row_sum = fd.ops.broadcast_in_dim(fd.ops.sum(e, [3]), full, [0, 1, 2])
    probs = fd.ops.div(e, row_sum)
    fd.add_output(fd.ops.cast(_dropout(fd, module, probs, full, p), dt.BFloat16))


def define_residual_dropout_add(fd, module, shape, p):
    """x + dropout(y), written into x (in place): x and y are [B, S, E]."""
    dt = module.DataType
    x = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=dt.BFloat16)
    y = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=dt.BFloat16)
    batch, seq, heads, head_dim = shape
    dropped = _dropout(fd, module, fd.ops.cast(y, dt.Float), [batch, seq, heads * head_dim], p)
    out = fd.ops.cast(fd.ops.add(fd.ops.cast(x, dt.Float), dropped), dt.BFloat16)
    fd.add_output(out, alias_input=x)


def _dropout(fd, module, t, shape, p):
    dt = module.DataType
    lo = fd.define_scalar(0.0, dtype=dt.Float)
    hi = fd.define_scalar(1.0, dtype=dt.Float)
    keep = fd.ops.lt(fd.ops.uniform(lo, hi, shape, dtype=dt.Float), 1.0 - p)
    return fd.ops.where(keep, fd.ops.mul(t, 1.0 / (1.0 - p)), 0.0)


class Block:
    """The attention of a transformer block: PyTorch's matmuls around the
    three fusions of `module` (fuser or nvfuser_direct)."""

    def __init__(self, module, shape, p):
        self.shape = shape
        self.fusions = []
        for define, args in (
            (define_qkv_heads, ()),
            (define_causal_softmax_dropout, (p,)),
            (define_residual_dropout_add, (p,)),
        ):
            with module.FusionDefinition() as fd:
                define(fd, module, shape, *args)
            self.fusions.append(fd)

    def __call__(self, x, w_qkv, w_o):
        batch, seq, heads, head_dim = self.shape
        heads_fd, softmax_fd, residual_fd = self.fusions
        q, k, v = heads_fd.execute([x @ w_qkv])
        (probs,) = softmax_fd.execute([q @ k.transpose(-1, -2)])
        attn = (probs @ v).transpose(1, 2).reshape(batch, seq, heads * head_dim)
        residual_fd.execute([x, attn @ w_o])
        return x


def eager_block(x, w_qkv, w_o, shape, p):
    """The same block in PyTorch."""
    batch, seq, heads, head_dim = shape
    q, k, v = (
        t.view(batch, seq, heads, head_dim).transpose(1, 2) for t in (x @ w_qkv).chunk(3, dim=-1)
    )
    scores = (q @ k.transpose(-1, -2)).float() / math.sqrt(head_dim)
    future = torch.ones(seq, seq, dtype=torch.bool, device=x.device).triu(1)
    probs = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    probs = torch.nn.functional.dropout(probs, p).to(torch.bfloat16)
    attn = (probs @ v).transpose(1, 2).reshape(batch, seq, heads * head_dim)
    dropped = torch.nn.functional.dropout((attn @ w_o).float(), p)
    x.copy_((x.float() + dropped).to(torch.bfloat16))
    return x


def check_dropout(got, expected, p):
    """`got` is `expected` with a fraction p of its elements zeroed and the
    rest scaled by 1 / (1 - p)."""
    kept = got != 0
    torch.testing.assert_close(
        got[kept].float(), expected[kept].float() / (1 - p), rtol=2e-2, atol=2e-2
    )
    dropped = 1 - kept[expected != 0].float().mean().item()
    assert abs(dropped - p) < 0.01, f"dropped {dropped:.4f} of the elements, expected {p}"


def main():
    import fuser

    shape = (2, 256, 8, 64)  # B, S, H, D
    batch, seq, heads, head_dim = shape
    embed = heads * head_dim
    p = 0.1
    torch.manual_seed(0)
    x = torch.randn(batch, seq, embed, device="cuda", dtype=torch.bfloat16)
    w_qkv = torch.randn(embed, 3 * embed, device="cuda", dtype=torch.bfloat16) / math.sqrt(embed)
    block = Block(fuser, shape, p)
    heads_fd, softmax_fd, residual_fd = block.fusions

    qkv = x @ w_qkv
    q, k, v = heads_fd.execute([qkv])
    for got, want in zip((q, k, v), qkv.chunk(3, dim=-1)):
        torch.testing.assert_close(got, want.view(batch, seq, heads, head_dim).transpose(1, 2))
    scores = q @ k.transpose(-1, -2)
    (probs,) = softmax_fd.execute([scores])
    future = torch.ones(seq, seq, dtype=torch.bool, device="cuda").triu(1)
    expected = torch.softmax(
        (scores.float() / math.sqrt(head_dim)).masked_fill(future, float("-inf")), dim=-1
    )
    check_dropout(probs, expected, p)
    assert not probs[..., future].any(), "a future position got a probability"
    y = torch.randn_like(x)
    before = x.clone()
    outputs = residual_fd.execute([x, y])
    assert outputs == [], "the residual is written into x, not returned"
    check_dropout(x.float() - before.float(), y.float(), p)

    w_o = torch.randn(embed, embed, device="cuda", dtype=torch.bfloat16) / math.sqrt(embed)
    block(x, w_qkv, w_o)
    for name, fd in zip(
        ("qkv_heads", "causal_softmax_dropout", "residual_dropout_add"), block.fusions
    ):
        kernels = fd.last_scheduler_types()
        print(f"{name}: {len(kernels)} segment(s): {' + '.join(kernels)}")
    print("transformer block fusions match torch")


if __name__ == "__main__":
    main()
