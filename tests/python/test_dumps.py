"""FUSER_DUMP options that print the lowering and the schedulers' choices
(csrc/base/options.h): read once per process, so each case runs in a fresh
interpreter."""

import os
import subprocess
import sys

import fuser
from helpers import requires_gpu

PROGRAM = """
from fuser import DataType, FusionDefinition
with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.relu(fd.ops.mul(t0, 2.0)))
fd.generate_cuda()
"""

def run_with_dump(dump, program=PROGRAM):
    env = dict(os.environ, FUSER_DUMP=dump)
    package = os.path.dirname(os.path.dirname(os.path.abspath(fuser.__file__)))
    extension = os.path.dirname(os.path.abspath(fuser._C.__file__))
    env["PYTHONPATH"] = os.pathsep.join(
        [package, os.path.dirname(extension), env.get("PYTHONPATH", "")]
    )
    result = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def lowering_passes():
    """The lowering's pass list as C++ runs it (the lower_passes dump
    prints each pass's name and time, in order)."""
    out = run_with_dump("lower_passes")
    names = [line.split()[1].rstrip(":") for line in out.splitlines() if line.startswith("[lower_passes] ")]
    assert len(names) == len(set(names)) and len(names) >= 5, out
    return names


def test_lower_ir_prints_the_kernel_ir_after_every_pass():
    passes = lowering_passes()
    out = run_with_dump("lower_ir")
    assert out.count("[lower_ir] after ") == len(passes)
    for name in passes:
        assert f"[lower_ir] after {name}:" in out
    # After index lowering the accesses are indexed; after predicate
    # placement the branches wait for their predicates.
    after_placement = out.split("[lower_ir] after placePredicates:")[1]
    assert "IF <pending>" in after_placement.split("[lower_ir] after")[0]


def test_lower_ir_with_a_pass_prints_only_that_pass():
    out = run_with_dump("lower_ir:insertAllocations")
    assert "[lower_ir] after insertAllocations:" in out
    assert "ALLOCATE" in out
    assert out.count("[lower_ir] after ") == 1


def test_unknown_dump_option_is_a_clear_error():
    env = dict(os.environ, FUSER_DUMP="lower_irr")
    package = os.path.dirname(os.path.dirname(os.path.abspath(fuser.__file__)))
    extension = os.path.dirname(os.path.abspath(fuser._C.__file__))
    env["PYTHONPATH"] = os.pathsep.join([package, os.path.dirname(extension)])
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "unknown option 'lower_irr'" in result.stderr
    assert "lower_ir" in result.stderr


SCHEDULERS = """
import torch
from fuser import DataType, FusionDefinition
x = torch.randn(64, 300, device="cuda")
with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.sum(t0, [1]))
fd.execute([x])
with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    s = fd.ops.broadcast(fd.ops.sum(t0, [1]), [False, True])
    fd.add_output(fd.ops.sub(t0, s))
fd.execute([x])
"""


@requires_gpu
def test_scheduler_params_and_rejections():
    # Schedulers run when a fusion executes.
    out = run_with_dump("scheduler_params,scheduler_reject", SCHEDULERS)
    # The row sum: a reduction kernel, with the pointwise scheduler's reason.
    assert "[scheduler_params] Reduction: inner, kept [0], reduced [1]" in out
    assert "[scheduler_reject] PointWise (compile time):" in out
    # The normalization: the reduction scheduler says why not.
    assert "[scheduler_reject] Reduction (compile time):" in out
    assert "a normalization" in out


SEGMENTED = """
import torch
from fuser import DataType, FusionDefinition
x = torch.randn(4, 64, 300, device="cuda")
with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
    rows = fd.ops.broadcast(fd.ops.sum(t0, [2]), [False, False, True])
    fd.add_output(fd.ops.sum(fd.ops.mul(t0, rows), [0]))
fd.execute([x])
"""


@requires_gpu
def test_segmented_fusion_prints_groups_and_edges():
    # Fusions are segmented when they execute.
    out = run_with_dump("segmented_fusion,scheduler_reject", SEGMENTED)
    assert "[segmented_fusion]" in out
    assert "Segmented fusion: 2 groups" in out
    assert "group 0 (Reduction)" in out and "group 1 (Reduction)" in out
    assert ": group 0 -> group 1" in out
    # Each group says why the schedulers before its own declined it.
    assert "[scheduler_reject] PointWise (compile time):" in out


EXPANDED = """
import torch
from fuser import DataType, FusionDefinition
x = torch.randn(64, 300, device="cuda")
w = torch.randn(300, device="cuda")
with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    fd.add_output(fd.ops.sub(t0, fd.ops.broadcast_in_dim(t1, t0.shape(), [1])))
fd.execute([x, w])
"""


@requires_gpu
def test_preseg_ir_prints_the_fusion_after_each_rewrite_before_segmentation():
    # The rewrites run when a fusion executes (segmentation/preseg_passes.h).
    out = run_with_dump("preseg_ir", EXPANDED)
    assert "[preseg_ir] after bypassRedundantExpands (1 changes):" in out
    assert "[preseg_ir] after resizesToInputs (0 changes):" in out
    # A segment's pass prints only what it changed (every trial of the
    # segmenter makes a segment's fusion).
    assert "after mergeDuplicateExprs (0 changes)" not in out
    only = run_with_dump("preseg_ir:resizesToInputs", EXPANDED)
    assert only.count("[preseg_ir] after ") == 1


OFF_DEVICE = """
import torch
from fuser import DataType, FusionDefinition
with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.sum(fd.ops.sum(t0, dims=[1]), dims=[0]))
fd._compile_off_device([torch.randn(64, 300)])
"""


def test_segmented_fusion_prints_the_groups_of_a_compile_off_device():
    # Without a GPU too, once each group has its scheduler.
    out = run_with_dump("segmented_fusion", OFF_DEVICE)
    assert "[segmented_fusion]" in out
    assert "Segmented fusion: 2 groups" in out
    assert "group 0 (Reduction)" in out and "group 1 (Reduction)" in out


DUPLICATED_CHAINS = """
import torch
from fuser import DataType, FusionDefinition
F = DataType.Float
with FusionDefinition() as fd:
    dy = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.BFloat16)
    w = fd.define_tensor(shape=[-1, -1], contiguity=[True] * 2, dtype=DataType.BFloat16)
    gate = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.BFloat16)
    up = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.BFloat16)
    # A SwiGLU backward beside ATen's product: several segments, so input
    # forwarding copies the chains of the gate for each reader, and the
    # copies land in the one pointwise kernel.
    d = fd.ops.cast(fd.ops.linear(dy, w), F)
    g = fd.ops.cast(gate, F)
    s = fd.ops.sigmoid(g)
    fd.add_output(fd.ops.cast(fd.ops.mul(d, fd.ops.mul(g, s)), DataType.BFloat16))
    slope = fd.ops.mul(s, fd.ops.add(fd.ops.mul(g, fd.ops.sub(1.0, s)), 1.0))
    fd.add_output(fd.ops.cast(fd.ops.mul(fd.ops.mul(d, fd.ops.cast(up, F)), slope), DataType.BFloat16))
bf16 = dict(dtype=torch.bfloat16)
fd._compile_off_device([torch.randn(2, 128, 64, **bf16), torch.randn(512, 64, **bf16),
                        torch.randn(2, 128, 512, **bf16), torch.randn(2, 128, 512, **bf16)])
"""


def test_a_segments_rewrite_prints_only_what_it_changed():
    # Off device too: a segment's fusion is made for every trial of the
    # segmenter, and only those the merge of duplicates changed print.
    out = run_with_dump("preseg_ir:mergeDuplicateExprs", DUPLICATED_CHAINS)
    assert "[preseg_ir] after mergeDuplicateExprs (" in out, out
    assert "after mergeDuplicateExprs (0 changes)" not in out


HANDED_VIEWS = """
import torch
from fuser import DataType, FusionDefinition
with FusionDefinition() as fd:
    x = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.BFloat16)
    w = fd.define_tensor(shape=[-1, -1], contiguity=[True] * 2, dtype=DataType.BFloat16)
    qkv = fd.ops.linear(x, w)
    for part in range(3):
        heads = fd.ops.reshape(
            fd.ops.slice(qkv, [0, 0, 64 * part], [2, 8, 64 * (part + 1)], [1, 1, 1]), [2, 8, 4, 16])
        fd.add_output(fd.ops.mul(heads, 2.0))
bf16 = dict(dtype=torch.bfloat16)
fd._compile_off_device([torch.randn(2, 8, 64, **bf16), torch.randn(192, 64, **bf16)])
"""


def test_segmented_fusion_lists_the_views_aten_segments_hand_on():
    # The q, k, v heads of a product reach their kernels as ATen's views
    # (runtime/handed_views.h): sizes, strides (the product's row of 192
    # between tokens) and alignment.
    out = run_with_dump("segmented_fusion", HANDED_VIEWS)
    lines = [line for line in out.splitlines() if "handed on as a view" in line]
    assert len(lines) == 3, out
    for line in lines:
        assert "sizes [2, 8, 4, 16] strides [1536, 192, 16, 1]" in line, line
        assert "pointer aligned to 16 bytes" in line, line
