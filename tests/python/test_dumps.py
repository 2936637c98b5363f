"""FUSER_DUMP options that print the lowering (csrc/base/options.h): they are
read once per process, so each case runs in a fresh interpreter."""

import os
import subprocess
import sys

import fuser

PROGRAM = """
from fuser import DataType, FusionDefinition
with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.relu(fd.ops.mul(t0, 2.0)))
fd.generate_cuda()
"""

PASSES = [
    "sortExprsForInlining",
    "generateLoopNests",
    "insertAllocations",
    "placePredicates",
    "lowerIndices",
    "generatePredicates",
    "cleanUpKernel",
]


def run_with_dump(dump):
    env = dict(os.environ, FUSER_DUMP=dump)
    package = os.path.dirname(os.path.dirname(os.path.abspath(fuser.__file__)))
    extension = os.path.dirname(os.path.abspath(fuser._C.__file__))
    env["PYTHONPATH"] = os.pathsep.join(
        [package, os.path.dirname(extension), env.get("PYTHONPATH", "")]
    )
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_lower_ir_prints_the_kernel_ir_after_every_pass():
    out = run_with_dump("lower_ir")
    for name in PASSES:
        assert f"[lower_ir] after {name}:" in out
    # After index lowering the accesses are indexed; after predicate
    # placement the branches wait for their predicates.
    after_placement = out.split("[lower_ir] after placePredicates:")[1]
    assert "IF <pending>" in after_placement.split("[lower_ir] after")[0]


def test_lower_ir_with_a_pass_prints_only_that_pass():
    out = run_with_dump("lower_ir:insertAllocations")
    assert "[lower_ir] after insertAllocations:" in out
    assert "ALLOCATE" in out
    for name in PASSES:
        if name != "insertAllocations":
            assert f"[lower_ir] after {name}:" not in out


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
