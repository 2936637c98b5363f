"""The example scripts under examples/ run as they are."""

import os
import re
import subprocess
import sys

from helpers import requires_gpu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_example(name):
    env = dict(os.environ)
    import fuser

    # The folders the package is imported from here (source and build tree).
    paths = list(fuser.__path__)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(p) for p in paths] + [env.get("PYTHONPATH", "")]
    )
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", name)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_nvfuser_style_script_differs_only_in_the_import():
    with open(os.path.join(ROOT, "examples", "nvfuser_style.py")) as f:
        source = f.read()
    imports = re.findall(r"^(?:from|import) .*$", source, flags=re.M)
    assert imports == ["import torch", "from fuser import FusionDefinition, DataType"]
    assert "nvfuser" not in source.replace("nvFuser", "").split("import torch")[1]
    compile(source, "nvfuser_style.py", "exec")


@requires_gpu
def test_nvfuser_style_script_matches_torch():
    result = run_example("nvfuser_style.py")
    assert result.returncode == 0, result.stderr
    assert "fuser output matches torch" in result.stdout
    assert "__global__" in result.stdout


def test_allocation_seed_script():
    result = run_example("allocation_seed.py")
    assert result.returncode == 0, result.stderr
    assert "allocation domain : [iS2{3}, iS3{2}]" in result.stdout
    assert "__global__ void fuser_kernel" in result.stdout
    assert ("ran on" in result.stdout) or ("not run" in result.stdout)


@requires_gpu
def test_transformer_block_example_matches_torch():
    result = run_example("transformer_block.py")
    assert result.returncode == 0, result.stderr
    assert "transformer block fusions match torch" in result.stdout
    assert re.search(r"causal_softmax_dropout: 1 segment\(s\): InnerPersistent", result.stdout)
