"""A whole Llama-style decoder block, bf16, forward and forward+backward:
every part but attention written once as FusionDefinition code that runs
on fuser and on nvFuser, beside eager PyTorch (autograd) and torch.compile
of the eager block, in the same run.

The block (the LlamaBlock of tests/python/torch_compile_models.py, whose
math the fusions follow: RMS norms computed in float, rounded to bf16
between the steps where eager rounds):

    h   = x + Wo . attn(rope(q), rope(k), v),  q, k, v from Wqkv . (rmsnorm(x) * g1)
    out = h + W2 . (silu(W1 . n) * (W3 . n)),  n = rmsnorm(h) * g2

Attention is ATen's causal flash kernel in every column (the
memory-efficient kernel where flash is unavailable); torch's SDPA backend
flags are set so that eager and torch.compile pick the same kernel. The
FusionDefinition columns run, per step:

    forward:  attention_in (rmsnorm, QKV projection, rope, head split to
              q, k, v [B, H, S, D]), SDPA, attention_out_mlp (head merge,
              output projection, residual, rmsnorm, SwiGLU MLP, residual)
    backward: mlp_backward (the gradient of attention_out_mlp), the SDPA
              backward, attention_in_backward (the gradient of
              attention_in), written by hand; the forward returns what they
              need (rmsnorm statistics, matmul operands) as extra outputs.

The upstream gradient is a fixed random tensor; the gradients of x and of
all seven parameters are produced and checked. Before timing, every
column's outputs and gradients are compared with eager autograd
(torch.testing.assert_close, tolerances relative to each tensor's
largest magnitude); a failed check names the tensor and leaves the
configuration out. Per (mode, column): ms per step (median over CUDA-event
timed steps after 3 warm-ups) and CUDA kernels per step (torch.profiler),
each in a process of its own (--timeout seconds at most). Results go to
benchmarks/results/decoder_block.{csv,md,png}.

    python3 benchmarks/bench_decoder_block.py [--out DIR] [--check-cpu]

--check-cpu needs no GPU: it evaluates the fusions op by op with ATen
(fuser's FusionDefinition._evaluate_with_aten) at a tiny float32 shape on
the CPU, compares with eager autograd there, and compiles every
definition off device (segments, schedulers, NVRTC) at that shape.
"""

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass

from harness import data_type
from kernel_table import (
    median_step_ms,
    plot_step_times,
    profile_step,
    row_of_child,
    write_rows_csv,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = ["fuser", "nvfuser", "eager", "torch.compile"]
MODES = ["forward", "forward+backward"]
FRONTEND_MODULES = {"fuser": "fuser", "nvfuser": "nvfuser_direct"}
# Largest difference from eager allowed, relative to the tensor's largest
# magnitude (also the relative tolerance per element). bf16 keeps 8 bits:
# one rounding is 0.4%, and the fusions round in fewer places than eager
# (rope and SwiGLU in float, the two MLP input gradients summed in float).
TOLERANCE = {"bfloat16": 2e-2, "float32": 1e-4}
# stride_order of a [B, H, S, D] tensor laid out as [B, S, H, D]: the layout
# of eager's q and k (views of the QKV projection) and of flash attention's
# output, so that the head split and merge move no data in eager either.
BSHD = [3, 1, 2, 0]


# --- shapes -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Dims:
    batch: int = 2
    seq: int = 2048
    heads: int = 32
    head_dim: int = 128
    hidden: int = 11008
    eps: float = 1e-5  # the LlamaBlock's RMSNorm

    @property
    def width(self):
        return self.heads * self.head_dim

    def label(self):
        return (
            f"width {self.width} ({self.heads} heads of {self.head_dim}), SwiGLU "
            f"{self.hidden}, batch {self.batch} x sequence {self.seq}"
        )


# --- the FusionDefinitions, for either frontend ----------------------------------------------
# Each fusion: its inputs [(name, shape, dtype, stride_order)], where dtype
# "act" is the activation type (bf16, or float32 in the CPU check) and
# "float" float32 always; and a define(fd, module, dims, act, t, train)
# that takes the defined inputs by name (t) and returns its outputs by name.
def attention_in_inputs(d):
    b, s, e = d.batch, d.seq, d.width
    return [
        ("x", (b, s, e), "act", None),
        ("g1", (e,), "act", None),
        ("w_qkv", (3 * e, e), "act", None),
        ("cos", (s, d.head_dim), "act", None),
        ("sin", (s, d.head_dim), "act", None),
    ]


def attention_out_mlp_inputs(d):
    b, s, e = d.batch, d.seq, d.width
    return [
        ("attn", (b, d.heads, s, d.head_dim), "act", BSHD),
        ("x", (b, s, e), "act", None),
        ("w_o", (e, e), "act", None),
        ("g2", (e,), "act", None),
        ("w1", (d.hidden, e), "act", None),
        ("w3", (d.hidden, e), "act", None),
        ("w2", (e, d.hidden), "act", None),
    ]


def mlp_backward_inputs(d):
    b, s, e, f = d.batch, d.seq, d.width, d.hidden
    return [
        ("grad_out", (b, s, e), "act", None),
        ("attn", (b, d.heads, s, d.head_dim), "act", BSHD),
        ("w_o", (e, e), "act", None),
        ("g2", (e,), "act", None),
        ("w1", (f, e), "act", None),
        ("w3", (f, e), "act", None),
        ("w2", (e, f), "act", None),
        ("h", (b, s, e), "act", None),
        ("rstd2", (b, s), "float", None),
        ("n2", (b, s, e), "act", None),
        ("gate", (b, s, f), "act", None),
        ("up", (b, s, f), "act", None),
        ("swiglu", (b, s, f), "act", None),
    ]


def attention_in_backward_inputs(d):
    b, s, e = d.batch, d.seq, d.width
    heads = (b, d.heads, s, d.head_dim)
    return [
        ("d_q", heads, "act", BSHD),
        ("d_k", heads, "act", BSHD),
        ("d_v", heads, "act", BSHD),
        ("d_h", (b, s, e), "act", None),
        ("x", (b, s, e), "act", None),
        ("g1", (e,), "act", None),
        ("w_qkv", (3 * e, e), "act", None),
        ("cos", (s, d.head_dim), "act", None),
        ("sin", (s, d.head_dim), "act", None),
        ("n1", (b, s, e), "act", None),
        ("rstd1", (b, s), "float", None),
    ]


def _rms_norm(fd, module, x, weight, d, act):
    """(rmsnorm(x) * weight as `act`, rstd [B, S] in float) over the last
    axis of x [B, S, E], computed in float."""
    f32 = module.DataType.Float
    full = [d.batch, d.seq, d.width]
    xf = fd.ops.cast(x, f32)
    mean_square = fd.ops.mul(fd.ops.sum(fd.ops.mul(xf, xf), [2]), 1.0 / d.width)
    rstd = fd.ops.rsqrt(fd.ops.add(mean_square, d.eps))
    normed = fd.ops.mul(xf, fd.ops.broadcast_in_dim(rstd, full, [0, 1]))
    scale = fd.ops.broadcast_in_dim(fd.ops.cast(weight, f32), full, [2])
    return fd.ops.cast(fd.ops.mul(normed, scale), act), rstd


def _rms_norm_backward(fd, module, grad, x, weight, rstd, d):
    """The gradients (of x, of weight; float) of y = x * rstd * weight with
    rstd = rsqrt(mean(x^2) + eps), from y's gradient `grad` (float):
    dx = rstd * (dn - n * mean(dn * n)) with n = x * rstd and dn = grad *
    weight; dweight = the sum of grad * n over batch and sequence."""
    f32 = module.DataType.Float
    full = [d.batch, d.seq, d.width]
    rstd_full = fd.ops.broadcast_in_dim(rstd, full, [0, 1])
    normed = fd.ops.mul(fd.ops.cast(x, f32), rstd_full)
    d_weight = fd.ops.sum(fd.ops.mul(grad, normed), [0, 1])
    d_normed = fd.ops.mul(grad, fd.ops.broadcast_in_dim(fd.ops.cast(weight, f32), full, [2]))
    along = fd.ops.mul(fd.ops.sum(fd.ops.mul(d_normed, normed), [2]), 1.0 / d.width)
    along = fd.ops.mul(normed, fd.ops.broadcast_in_dim(along, full, [0, 1]))
    return fd.ops.mul(rstd_full, fd.ops.sub(d_normed, along)), d_weight


def _halves(fd, t, d):
    """The two halves of the last axis of t [B, S, H, D]."""
    b, s, h, dh = d.batch, d.seq, d.heads, d.head_dim
    first = fd.ops.slice(t, [0, 0, 0, 0], [b, s, h, dh // 2], [1, 1, 1, 1])
    second = fd.ops.slice(t, [0, 0, 0, dh // 2], [b, s, h, dh], [1, 1, 1, 1])
    return first, second


def _rope(fd, t, cos, sin, d):
    """t * cos + rotate(t) * sin with rotate(t) = cat(-second half, first
    half), as the LlamaBlock's RotaryEmbedding; t, cos, sin float [B, S, H, D]."""
    first, second = _halves(fd, t, d)
    rotated = fd.ops.cat([fd.ops.neg(second), first], 3)
    return fd.ops.add(fd.ops.mul(t, cos), fd.ops.mul(rotated, sin))


def _rope_backward(fd, grad, cos, sin, d):
    """The gradient of t in _rope: rotate is linear, its transpose maps g
    to cat(second half of g, -first half of g)."""
    first, second = _halves(fd, fd.ops.mul(grad, sin), d)
    return fd.ops.add(fd.ops.mul(grad, cos), fd.ops.cat([second, fd.ops.neg(first)], 3))


def _rope_tables(fd, module, t, d):
    """cos and sin [S, D] as float, broadcast to [B, S, H, D]."""
    full = [d.batch, d.seq, d.heads, d.head_dim]
    f32 = module.DataType.Float
    return [fd.ops.broadcast_in_dim(fd.ops.cast(t[n], f32), full, [1, 3]) for n in ("cos", "sin")]


def _weight_grad(fd, grad, operand, d, n, k):
    """grad^T . operand over all tokens: the weight gradient [N, K] of a
    linear layer, from its output's gradient [B, S, N] and its input [B, S, K]."""
    rows = d.batch * d.seq
    flat_grad = fd.ops.permute(fd.ops.reshape(grad, [rows, n]), [1, 0])
    return fd.ops.matmul(flat_grad, fd.ops.reshape(operand, [rows, k]))


def define_attention_in(fd, module, d, act, t, train):
    """rmsnorm(x) * g1, the QKV projection, rope of q and k, and the heads
    split off: q, k, v [B, H, S, D], laid out as [B, S, H, D]."""
    f32 = module.DataType.Float
    b, s, e, h, dh = d.batch, d.seq, d.width, d.heads, d.head_dim
    n1, rstd1 = _rms_norm(fd, module, t["x"], t["g1"], d, act)
    qkv = fd.ops.linear(n1, t["w_qkv"])  # [B, S, 3E]
    cos, sin = _rope_tables(fd, module, t, d)
    out = {}
    for part, name in enumerate("qkv"):
        y = fd.ops.slice(qkv, [0, 0, part * e], [b, s, (part + 1) * e], [1, 1, 1])
        y = fd.ops.reshape(y, [b, s, h, dh])
        if name != "v":
            y = fd.ops.cast(_rope(fd, fd.ops.cast(y, f32), cos, sin, d), act)
        out[name] = fd.ops.stride_order(fd.ops.permute(y, [0, 2, 1, 3]), BSHD)
    if train:
        out.update(n1=n1, rstd1=rstd1)
    return out


def define_attention_out_mlp(fd, module, d, act, t, train):
    """The heads merged, the output projection and residual, rmsnorm(h) *
    g2, the SwiGLU MLP and its residual."""
    f32 = module.DataType.Float
    b, s, e = d.batch, d.seq, d.width
    merged = fd.ops.reshape(fd.ops.permute(t["attn"], [0, 2, 1, 3]), [b, s, e])
    projected = fd.ops.cast(fd.ops.linear(merged, t["w_o"]), f32)
    h = fd.ops.cast(fd.ops.add(fd.ops.cast(t["x"], f32), projected), act)
    n2, rstd2 = _rms_norm(fd, module, h, t["g2"], d, act)
    gate = fd.ops.linear(n2, t["w1"])
    up = fd.ops.linear(n2, t["w3"])
    gate_f = fd.ops.cast(gate, f32)
    silu = fd.ops.mul(gate_f, fd.ops.sigmoid(gate_f))
    swiglu = fd.ops.cast(fd.ops.mul(silu, fd.ops.cast(up, f32)), act)
    down = fd.ops.cast(fd.ops.linear(swiglu, t["w2"]), f32)
    out = {"out": fd.ops.cast(fd.ops.add(fd.ops.cast(h, f32), down), act)}
    if train:
        out.update(h=h, rstd2=rstd2, n2=n2, gate=gate, up=up, swiglu=swiglu)
    return out


def define_mlp_backward(fd, module, d, act, t, train):
    """The gradient of attention_out_mlp: of its weights and norm weight,
    of x (the residual: d_h) and of the attention output (d_attn, [B, H,
    S, D] laid out as [B, S, H, D], as eager's autograd hands it on)."""
    f32 = module.DataType.Float
    b, s, e, f, h, dh = d.batch, d.seq, d.width, d.hidden, d.heads, d.head_dim
    grad_out = t["grad_out"]
    d_swiglu = fd.ops.cast(fd.ops.matmul(grad_out, t["w2"]), f32)  # [B, S, F]
    d_w2 = _weight_grad(fd, grad_out, t["swiglu"], d, e, f)
    # swiglu = silu(gate) * up, silu(g) = g * sigmoid(g),
    # silu'(g) = sigmoid(g) * (1 + g * (1 - sigmoid(g))).
    gate = fd.ops.cast(t["gate"], f32)
    sig = fd.ops.sigmoid(gate)
    d_up = fd.ops.cast(fd.ops.mul(d_swiglu, fd.ops.mul(gate, sig)), act)
    one_minus_sig = fd.ops.add(fd.ops.neg(sig), 1.0)
    silu_slope = fd.ops.mul(sig, fd.ops.add(fd.ops.mul(gate, one_minus_sig), 1.0))
    d_silu = fd.ops.mul(d_swiglu, fd.ops.cast(t["up"], f32))
    d_gate = fd.ops.cast(fd.ops.mul(d_silu, silu_slope), act)
    d_w1 = _weight_grad(fd, d_gate, t["n2"], d, f, e)
    d_w3 = _weight_grad(fd, d_up, t["n2"], d, f, e)
    d_n2 = fd.ops.add(
        fd.ops.cast(fd.ops.matmul(d_gate, t["w1"]), f32),
        fd.ops.cast(fd.ops.matmul(d_up, t["w3"]), f32),
    )
    d_h_norm, d_g2 = _rms_norm_backward(fd, module, d_n2, t["h"], t["g2"], t["rstd2"], d)
    # h feeds the norm and the residual.
    d_h = fd.ops.cast(fd.ops.add(fd.ops.cast(grad_out, f32), d_h_norm), act)
    merged = fd.ops.reshape(fd.ops.permute(t["attn"], [0, 2, 1, 3]), [b, s, e])
    d_w_o = _weight_grad(fd, d_h, merged, d, e, e)
    d_merged = fd.ops.reshape(fd.ops.matmul(d_h, t["w_o"]), [b, s, h, dh])
    d_attn = fd.ops.stride_order(fd.ops.permute(d_merged, [0, 2, 1, 3]), BSHD)
    return {
        "d_attn": d_attn,
        "d_h": d_h,
        "d_w_o": d_w_o,
        "d_g2": fd.ops.cast(d_g2, act),
        "d_w1": d_w1,
        "d_w3": d_w3,
        "d_w2": d_w2,
    }


def define_attention_in_backward(fd, module, d, act, t, train):
    """The gradient of attention_in, plus the residual's (d_h): of x, of
    w_qkv and of g1."""
    f32 = module.DataType.Float
    b, s, e = d.batch, d.seq, d.width
    cos, sin = _rope_tables(fd, module, t, d)
    parts = []
    for name in ("d_q", "d_k", "d_v"):
        y = fd.ops.permute(t[name], [0, 2, 1, 3])  # [B, S, H, D]
        if name != "d_v":
            y = fd.ops.cast(_rope_backward(fd, fd.ops.cast(y, f32), cos, sin, d), act)
        parts.append(fd.ops.reshape(y, [b, s, e]))
    d_qkv = fd.ops.cat(parts, 2)  # [B, S, 3E]
    d_w_qkv = _weight_grad(fd, d_qkv, t["n1"], d, 3 * e, e)
    d_n1 = fd.ops.cast(fd.ops.matmul(d_qkv, t["w_qkv"]), f32)
    d_x_norm, d_g1 = _rms_norm_backward(fd, module, d_n1, t["x"], t["g1"], t["rstd1"], d)
    d_x = fd.ops.cast(fd.ops.add(fd.ops.cast(t["d_h"], f32), d_x_norm), act)
    return {"d_x": d_x, "d_w_qkv": d_w_qkv, "d_g1": fd.ops.cast(d_g1, act)}


FORWARD_FUSIONS = [
    ("attention_in", define_attention_in, attention_in_inputs),
    ("attention_out_mlp", define_attention_out_mlp, attention_out_mlp_inputs),
]
BACKWARD_FUSIONS = [
    ("mlp_backward", define_mlp_backward, mlp_backward_inputs),
    ("attention_in_backward", define_attention_in_backward, attention_in_backward_inputs),
]


def _define_input(fd, module, spec, act):
    _, shape, kind, stride_order = spec
    rank = len(shape)
    return fd.define_tensor(
        shape=[-1] * rank,
        contiguity=[True] * rank,
        dtype=act if kind == "act" else module.DataType.Float,
        stride_order=stride_order or list(range(rank - 1, -1, -1)),
    )


class Fusion:
    """One FusionDefinition of `module` and the names of its inputs and
    outputs: called with the step's tensors by name, it returns its
    outputs by name."""

    def __init__(self, module, define, inputs, dims, dtype, train):
        act = data_type(module, dtype)
        self.input_names = [spec[0] for spec in inputs(dims)]
        with module.FusionDefinition() as fd:
            defined = {spec[0]: _define_input(fd, module, spec, act) for spec in inputs(dims)}
            outputs = define(fd, module, dims, act, defined, train)
            for value in outputs.values():
                fd.add_output(value)
        self.fd = fd
        self.output_names = list(outputs)

    def __call__(self, run, tensors):
        return dict(zip(self.output_names, run(self.fd, [tensors[n] for n in self.input_names])))


def example_inputs(inputs, dtype, device):
    """Random tensors of the fusion's input specs, laid out as they say."""
    import torch

    tensors = []
    for _, shape, kind, stride_order in inputs:
        t_dtype = dtype if kind == "act" else torch.float32
        if stride_order == BSHD:
            b, h, s, dh = shape
            t = torch.randn(b, s, h, dh, dtype=t_dtype, device=device).transpose(1, 2)
        else:
            t = torch.randn(shape, dtype=t_dtype, device=device)
        tensors.append(t)
    return tensors


# --- attention with ATen's kernels ------------------------------------------------------
def choose_attention_kernel():
    """The kernel of attention: "flash" where ATen's flash attention runs,
    else "efficient", "cpu" without a GPU. Sets torch's SDPA backend flags so
    that scaled_dot_product_attention (eager, torch.compile) picks it too."""
    import torch

    if not torch.cuda.is_available():
        return "cpu"
    backends = torch.backends.cuda
    flash = getattr(backends, "is_flash_attention_available", lambda: True)()
    if flash:
        try:
            q = torch.randn(1, 1, 16, 64, device="cuda", dtype=torch.bfloat16)
            torch.ops.aten._scaled_dot_product_flash_attention(q, q, q, 0.0, True)
        except RuntimeError:
            flash = False
    backends.enable_flash_sdp(flash)
    backends.enable_mem_efficient_sdp(not flash)
    backends.enable_math_sdp(False)
    if hasattr(backends, "enable_cudnn_sdp"):
        backends.enable_cudnn_sdp(False)
    return "flash" if flash else "efficient"


def _as_bshd(t):
    """t [B, H, S, D] laid out as [B, S, H, D] (a copy only if it is not)."""
    if t.transpose(1, 2).is_contiguous():
        return t
    return t.transpose(1, 2).contiguous().transpose(1, 2)


class AtenAttention:
    """Causal attention [B, H, S, D] with ATen's kernels (`kind` from
    choose_attention_kernel). The forward of a training step keeps what
    the backward takes (logsumexp, the RNG state, ...); outputs and
    gradients come laid out as [B, S, H, D], as the fusions define them."""

    def __init__(self, kind):
        self.kind = kind

    def forward(self, q, k, v, train):
        import torch

        aten = torch.ops.aten
        if not train:
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            return _as_bshd(out), None
        if self.kind == "flash":
            saved = aten._scaled_dot_product_flash_attention(q, k, v, 0.0, True)
        elif self.kind == "efficient":
            saved = aten._scaled_dot_product_efficient_attention(q, k, v, None, True, 0.0, True)
        else:
            saved = aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, True)
        return _as_bshd(saved[0]), saved

    def backward(self, d_attn, q, k, v, saved):
        import torch

        aten = torch.ops.aten
        out, lse = saved[0], saved[1]
        if self.kind == "flash":
            _, _, cum_q, cum_k, max_q, max_k, seed, offset, _ = saved
            grads = aten._scaled_dot_product_flash_attention_backward(
                d_attn, q, k, v, out, lse, cum_q, cum_k, max_q, max_k, 0.0, True, seed, offset
            )
        elif self.kind == "efficient":
            seed, offset = saved[2], saved[3]
            grads = aten._scaled_dot_product_efficient_attention_backward(
                d_attn, q, k, v, None, out, lse, seed, offset, 0.0, [True, True, True, False], True
            )[:3]
        else:
            grads = aten._scaled_dot_product_flash_attention_for_cpu_backward(
                d_attn, q, k, v, out, lse, 0.0, True
            )
        return [_as_bshd(g) for g in grads]


# --- the block: FusionDefinitions around attention -------------------------------------------
class FusionBlock:
    """The decoder block as FusionDefinitions of `module` (fuser or
    nvfuser_direct) around ATen's attention. `run(fd, inputs)` runs one
    definition (fd.execute on the GPU; an op-by-op evaluation on the CPU)."""

    def __init__(self, module, dims, dtype, train, attention, run):
        self.train = train
        self.attention = attention
        self.run = run
        fusions = FORWARD_FUSIONS + (BACKWARD_FUSIONS if train else [])
        self.fusions = {
            name: Fusion(module, define, inputs, dims, dtype, train)
            for name, define, inputs in fusions
        }

    def step(self, tensors):
        """One forward (and backward) step; `tensors` holds the inputs by
        name (x, the weights, cos, sin, grad_out); returns it with every
        output and gradient added."""
        t = dict(tensors)
        fusions = self.fusions
        t.update(fusions["attention_in"](self.run, t))
        t["attn"], saved = self.attention.forward(t["q"], t["k"], t["v"], self.train)
        t.update(fusions["attention_out_mlp"](self.run, t))
        if self.train:
            t.update(fusions["mlp_backward"](self.run, t))
            grads = self.attention.backward(t["d_attn"], t["q"], t["k"], t["v"], saved)
            t.update(zip(("d_q", "d_k", "d_v"), grads))
            t.update(fusions["attention_in_backward"](self.run, t))
        return t

    def segments(self):
        """fuser's schedulers of each fusion's last run ("" where the
        frontend does not tell)."""
        found = {}
        for name, fusion in self.fusions.items():
            try:
                found[name] = "+".join(fusion.fd.last_scheduler_types())
            except Exception:  # noqa: BLE001 - nvFuser has no such method
                found[name] = ""
        return found


# --- eager: the LlamaBlock of the torch.compile tests -------------------------------------
PARAMETERS = {  # fusion input name: the LlamaBlock's parameter
    "g1": "attention_norm.weight",
    "w_qkv": "qkv.weight",
    "w_o": "proj.weight",
    "g2": "mlp_norm.weight",
    "w1": "gate.weight",
    "w3": "up.weight",
    "w2": "down.weight",
}
CHECKED = {
    "forward": ["out"],
    "forward+backward": ["out", "d_x"] + [f"d_{name}" for name in PARAMETERS],
}


def make_problem(dims, dtype, device):
    """(the eager LlamaBlock, the step's input tensors by name): x, the
    parameters, the rope tables [S, D] as the block uses them, and a fixed
    random upstream gradient."""
    import torch

    models_dir = os.path.join(ROOT, "tests", "python")
    if models_dir not in sys.path:
        sys.path.insert(0, models_dir)
    import torch_compile_models as models

    torch.manual_seed(0)
    model, (x,), _ = models.make_llama_block(
        device=device,
        dtype=dtype,
        dim=dims.width,
        n_head=dims.heads,
        hidden=dims.hidden,
        batch=dims.batch,
        length=dims.seq,
    )
    assert model.attention_norm.eps == dims.eps
    with torch.no_grad():  # norm weights other than ones, so that their use is checked
        for norm in (model.attention_norm, model.mlp_norm):
            norm.weight.add_(0.1 * torch.randn_like(norm.weight))
    params = dict(model.named_parameters())
    tensors = {name: params[p].detach() for name, p in PARAMETERS.items()}
    tensors.update(
        x=x,
        cos=model.rope.cos[: dims.seq].to(dtype),
        sin=model.rope.sin[: dims.seq].to(dtype),
        grad_out=torch.randn_like(x),
    )
    return model, tensors


def eager_step(model, tensors, train, block=None):
    """A step of the LlamaBlock `model` with autograd, run through `block`
    (torch.compile of it; the model itself by default); returns the output
    and, training, the gradients by the fusions' names."""
    import torch

    # Not `block or model`: truth-testing a compiled module asks its len().
    block = model if block is None else block
    params = dict(model.named_parameters())
    x = tensors["x"].detach().requires_grad_(train)

    def step():
        if not train:
            with torch.no_grad():
                return {"out": block(x)}
        x.grad = None
        model.zero_grad(set_to_none=True)
        out = block(x)
        out.backward(tensors["grad_out"])
        grads = {f"d_{name}": params[p].grad for name, p in PARAMETERS.items()}
        return dict(grads, out=out.detach(), d_x=x.grad)

    return step


def compare(got, expected, names, tol, what):
    """The largest difference of each checked tensor from eager's, relative
    to the largest magnitude of eager's; raises at the first tensor that is
    not close (assert_close: rtol = tol, atol = tol * that magnitude)."""
    import torch

    diffs = {}
    for name in names:
        want = expected[name].float()
        have = got[name].float()
        scale = max(want.abs().max().item(), 1e-30)
        diff = (have - want).abs().max().item() if have.shape == want.shape else float("inf")
        diffs[name] = diff / scale
        try:
            torch.testing.assert_close(have, want, rtol=tol, atol=tol * scale)
        except AssertionError as error:
            reason = str(error).strip().splitlines()[0]
            message = (
                f"check failed: {what}: {name} differs from eager autograd: largest "
                f"difference {diff:.4g} = {diff / scale:.3g} of its scale {scale:.4g} "
                f"(tolerance {tol}); {reason}"
            )
            print(message, flush=True)
            raise AssertionError(message) from None
    return diffs


# --- one (mode, column), in this process ------------------------------------------------
def make_step(config, model, tensors, dims, train, attention):
    """(step, the fusion block or None) of one column."""
    import torch

    if config in FRONTEND_MODULES:
        import importlib

        module = importlib.import_module(FRONTEND_MODULES[config])
        block = FusionBlock(
            module,
            dims,
            tensors["x"].dtype,
            train,
            attention,
            lambda fd, inputs: fd.execute(inputs),
        )
        return (lambda: block.step(tensors)), block
    compiled = torch.compile(model) if config == "torch.compile" else None
    return eager_step(model, tensors, train, compiled), None


def run_one(config, mode, dims, iters):
    import torch

    train = mode == "forward+backward"
    kind = choose_attention_kernel()
    model, tensors = make_problem(dims, torch.bfloat16, "cuda")
    expected = eager_step(model, tensors, train)()
    expected = {name: expected[name].detach().clone() for name in CHECKED[mode]}
    torch.cuda.synchronize()
    first = time.perf_counter()
    step, block = make_step(config, model, tensors, dims, train, AtenAttention(kind))
    got = step()
    torch.cuda.synchronize()
    first = time.perf_counter() - first
    diffs = compare(got, expected, CHECKED[mode], TOLERANCE["bfloat16"], f"{config} {mode}")
    del got, expected
    ms = median_step_ms(step, iters)
    kernels, profile = profile_step(step)
    return {
        "mode": mode,
        "config": config,
        "ms_per_step": round(ms, 3),
        "kernels_per_step": kernels,
        "first_step_s": round(first, 2),
        "attention": kind,
        "segments": block.segments() if block else {},
        "max_rel_diff_vs_eager": {k: float(f"{v:.3g}") for k, v in diffs.items()},
        "shape": dims.label(),
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "profile": profile,
    }


# --- the run: each (mode, column) in its own process ------------------------------------
def dims_args(dims):
    return [
        f"--batch={dims.batch}",
        f"--seq={dims.seq}",
        f"--heads={dims.heads}",
        f"--head-dim={dims.head_dim}",
        f"--hidden={dims.hidden}",
    ]


def run_all(args, dims):
    import importlib.util

    configs = list(args.configs)
    if "nvfuser" in configs and importlib.util.find_spec("nvfuser_direct") is None:
        print("nvFuser not available (nvfuser_direct does not import): no nvFuser column")
        configs.remove("nvfuser")
    rows = []
    for mode in args.modes:
        for config in configs:
            cmd = [sys.executable, os.path.abspath(__file__), "--one", config, mode]
            cmd += dims_args(dims) + [f"--iters={args.iters}"]
            row = row_of_child(cmd, {"mode": mode, "config": config}, timeout=args.timeout)
            rows.append(row)
            summary = {k: v for k, v in row.items() if k != "profile"}
            print(json.dumps(summary), flush=True)
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, "decoder_block")
    write_rows_csv(stem + ".csv", rows)
    with open(stem + ".md", "w") as f:
        f.write(markdown(rows, args.modes, configs, dims))
    plot_step_times(stem + ".png", rows, [{"mode": m} for m in args.modes], configs)
    print(markdown(rows, args.modes, configs, dims))
    print(f"wrote {stem}.{{csv,md,png}}")


def markdown(rows, modes, configs, dims):
    """The Markdown table of the rows: ms and kernels per step of every
    column, fuser's ratios, then fuser's segments and the errors."""
    import torch

    def cell(mode, config, key):
        row = next((r for r in rows if (r["mode"], r["config"]) == (mode, config)), {})
        return row.get(key, "error" if "error" in row else "")

    others = [c for c in configs if c != "fuser"]
    header = ["mode"] + [f"{c} ms" for c in configs] + [f"{c} kernels" for c in configs]
    header += [f"fuser/{c}" for c in others] if "fuser" in configs else []
    device = next((r["device"] for r in rows if "device" in r), "no device")
    kind = next((r["attention"] for r in rows if "attention" in r), "")
    lines = [
        f"# Llama decoder block ({device}, torch {torch.__version__}, "
        f"{time.strftime('%Y-%m-%d')})\n",
        f"bf16, {dims.label()}; attention: ATen's {kind} kernel in every column. "
        "The same FusionDefinitions on fuser and nvFuser for everything but "
        "attention, against eager autograd and torch.compile of the eager "
        "block. ms per step: median of CUDA-event timed steps; kernels per "
        "step: torch.profiler (copies left out). fuser/x is x's time over "
        "fuser's (above 1: fuser is faster).\n",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for mode in modes:
        cells = [cell(mode, c, "ms_per_step") for c in configs]
        cells += [cell(mode, c, "kernels_per_step") for c in configs]
        ours = cell(mode, "fuser", "ms_per_step")
        for c in others if "fuser" in configs else []:
            theirs = cell(mode, c, "ms_per_step")
            ok = isinstance(ours, float) and isinstance(theirs, float) and ours > 0
            cells.append(f"{theirs / ours:.3f}" if ok else "")
        lines.append(f"| {mode} | " + " | ".join(str(c) for c in cells) + " |")
    lines.append("")
    for r in rows:
        if r.get("segments"):
            segments = "; ".join(f"{k}: {v}" for k, v in r["segments"].items())
            lines.append(f"- {r['config']} {r['mode']} segments: {segments}")
        if "error" in r:
            lines.append(f"- {r['config']} {r['mode']}: {r['error']}")
    return "\n".join(lines) + "\n"


# --- the CPU check ------------------------------------------------------------------------
CHECK_DIMS = Dims(batch=2, seq=16, heads=4, head_dim=8, hidden=48)


def compile_off_device(dims, dtype=None, device="meta"):
    """Every definition compiled off device for inputs of `dims` (fuser's
    _compile_off_device: segmentation, schedulers, lowering, NVRTC):
    {fusion: [(scheduler, error)]}, forward-only and training definitions."""
    import torch

    import fuser

    dtype = dtype or torch.bfloat16
    found = {}
    for train in (False, True):
        fusions = FORWARD_FUSIONS + (BACKWARD_FUSIONS if train else [])
        for name, define, inputs in fusions:
            fusion = Fusion(fuser, define, inputs, dims, dtype, train)
            forward = any(name == f[0] for f in FORWARD_FUSIONS)
            key = f"{name} (training)" if train and forward else name
            segments = fusion.fd._compile_off_device(example_inputs(inputs(dims), dtype, device))
            found[key] = [(scheduler, error) for scheduler, _, error in segments]
    return found


def check_on_cpu(dims=CHECK_DIMS):
    """Every fusion evaluated with ATen on the CPU (float32), forward and
    forward+backward, against eager autograd: {mode: {tensor: largest
    difference relative to its scale}}. Raises at a tensor that differs."""
    import torch

    import fuser

    results = {}
    model, tensors = make_problem(dims, torch.float32, "cpu")
    for mode in MODES:
        train = mode == "forward+backward"
        expected = eager_step(model, tensors, train)()
        block = FusionBlock(
            fuser,
            dims,
            torch.float32,
            train,
            AtenAttention("cpu"),
            lambda fd, inputs: fd._evaluate_with_aten(inputs),
        )
        got = block.step(tensors)
        results[mode] = compare(got, expected, CHECKED[mode], TOLERANCE["float32"], mode)
    return results


def run_cpu_check():
    import fuser

    status = 0
    print(f"off-device compile at {CHECK_DIMS.label()}, bf16:")
    for name, segments in compile_off_device(CHECK_DIMS).items():
        print(f"  {name}: " + " + ".join(s for s, _ in segments))
        for scheduler, error in segments:
            if error:
                print(f"    {scheduler} failed: {error.strip().splitlines()[0]}")
                status = 1
    if not hasattr(fuser.FusionDefinition, "_evaluate_with_aten"):
        print("this fuser build has no FusionDefinition._evaluate_with_aten: no evaluation")
        return status
    print(f"the fusions evaluated with ATen on the CPU, float32, {CHECK_DIMS.label()}:")
    for mode, diffs in check_on_cpu().items():
        print(f"  {mode}: largest difference from eager autograd, relative to its scale:")
        for name, diff in diffs.items():
            print(f"    {name:8} {diff:.2e}")
    print("the decoder block's fusions match eager autograd on the CPU")
    return status


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results"))
    parser.add_argument("--check-cpu", action="store_true", help="the CPU self-check, no GPU")
    parser.add_argument("--one", nargs=2, metavar=("CONFIG", "MODE"), help=argparse.SUPPRESS)
    parser.add_argument("--configs", nargs="+", choices=CONFIGS, default=CONFIGS)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=MODES)
    parser.add_argument("--iters", type=int, default=20, help="timed steps per configuration")
    parser.add_argument(
        "--timeout", type=int, default=900, help="seconds one (mode, column) may take"
    )
    defaults = Dims()
    parser.add_argument("--batch", type=int, default=defaults.batch)
    parser.add_argument("--seq", type=int, default=defaults.seq)
    parser.add_argument("--heads", type=int, default=defaults.heads)
    parser.add_argument("--head-dim", type=int, default=defaults.head_dim)
    parser.add_argument("--hidden", type=int, default=defaults.hidden)
    args = parser.parse_args()
    dims = Dims(args.batch, args.seq, args.heads, args.head_dim, args.hidden)
    if args.check_cpu:
        return run_cpu_check()
    import torch

    if not torch.cuda.is_available():
        print("bench_decoder_block: no CUDA device, nothing measured (--check-cpu runs without)")
        return 0
    if args.one:
        print(json.dumps(run_one(*args.one, dims, args.iters)), flush=True)
    else:
        run_all(args, dims)
    return 0


if __name__ == "__main__":
    sys.exit(main())
