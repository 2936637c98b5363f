"""The models the torch.compile tests (test_torch_compile_models.py) and
benchmark (benchmarks/bench_torch_compile.py) run through the "fuser"
backend: nanoGPT (Thunder's copy of it), a Llama-style decoder block and a
ResNet-style basic block. Each maker returns (model, example inputs, a
function of the model's result that gives a scalar loss)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


# --- nanoGPT ------------------------------------------------------------------------
def have_nanogpt():
    try:
        from thunder.tests import nanogpt_model  # noqa: F401
    except ImportError:
        return False
    return True


def make_nanogpt(
    device="cuda",
    dtype=torch.float32,
    n_layer=2,
    n_head=4,
    n_embd=128,
    block_size=64,
    vocab_size=512,
    batch=4,
    dropout=0.0,
):
    """nanoGPT with its loss: model(idx, targets) returns (logits, loss)."""
    from thunder.tests import nanogpt_model

    config = nanogpt_model.GPTConfig(
        n_layer=n_layer,
        n_head=n_head,
        n_embd=n_embd,
        block_size=block_size,
        vocab_size=vocab_size,
        dropout=dropout,
        bias=True,
    )
    model = nanogpt_model.GPT(config).to(device=device, dtype=dtype)
    idx = torch.randint(0, vocab_size, (batch, block_size), device=device)
    targets = torch.randint(0, vocab_size, (batch, block_size), device=device)
    return model, (idx, targets), lambda result: result[1]


# --- a Llama-style decoder block ---------------------------------------------------------
class RotaryEmbedding(nn.Module):
    """Real-valued rotary position embedding of the last axis (halves
    rotated), as Llama applies it to queries and keys."""

    def __init__(self, head_size, max_len, base=10000.0):
        super().__init__()
        inverse = 1.0 / (base ** (torch.arange(0, head_size, 2).float() / head_size))
        angles = torch.outer(torch.arange(max_len).float(), inverse)
        angles = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, x):
        length = x.shape[-2]
        half = x.shape[-1] // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        cos = self.cos[:length].to(x.dtype)
        sin = self.sin[:length].to(x.dtype)
        return x * cos + rotated * sin


class LlamaBlock(nn.Module):
    """RMSNorm, causal self-attention with rotary embeddings (flash
    attention through scaled_dot_product_attention), RMSNorm, SwiGLU MLP."""

    def __init__(self, dim=256, n_head=8, hidden=688, max_len=128):
        super().__init__()
        self.n_head = n_head
        self.attention_norm = nn.RMSNorm(dim, eps=1e-5)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.rope = RotaryEmbedding(dim // n_head, max_len)
        self.mlp_norm = nn.RMSNorm(dim, eps=1e-5)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.attention_norm(x)).split(c, dim=-1)
        q, k, v = (y.view(b, t, self.n_head, c // self.n_head).transpose(1, 2) for y in (q, k, v))
        q, k = self.rope(q), self.rope(k)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def make_llama_block(
    device="cuda", dtype=torch.bfloat16, dim=256, n_head=8, hidden=688, batch=2, length=128
):
    model = LlamaBlock(dim, n_head, hidden, max_len=length).to(device=device, dtype=dtype)
    x = torch.randn(batch, length, dim, device=device, dtype=dtype)
    return model, (x,), lambda y: y.float().pow(2).mean()


# --- a ResNet-style basic block -----------------------------------------------------------
class BasicBlock(nn.Module):
    """conv3x3, batch norm, ReLU, conv3x3, batch norm, the skip, ReLU: the
    convolutions stay with ATen (cuDNN), the normalizations and ReLUs
    around them are what fuser fuses."""

    def __init__(self, channels=64):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + x)


def make_resnet_block(device="cuda", dtype=torch.float32, channels=64, batch=8, size=32):
    model = BasicBlock(channels).to(device=device, dtype=dtype)
    x = torch.randn(batch, channels, size, size, device=device, dtype=dtype)
    return model, (x,), lambda y: y.float().pow(2).mean()
