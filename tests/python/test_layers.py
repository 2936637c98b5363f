"""tools/check_layers.py: csrc/'s folders include each other only downward
(doc/design.md §2). The tree passes; a tree with an upward include, a
folder outside the layers or a compatibility header included from csrc/
fails with the file and line."""

import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location(
    "check_layers", os.path.join(ROOT, "tools", "check_layers.py")
)
check_layers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_layers)


def test_the_tree_has_no_upward_include():
    problems, graph, compat = check_layers.check()
    assert problems == []
    # The multi-device executor moved above the runtime's executors.
    assert ("multidevice", "runtime") not in graph
    assert ("runtime", "multidevice") in graph
    assert "multidevice/communicator.h" in compat


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


@pytest.fixture
def tree(tmp_path):
    root = str(tmp_path)
    write(root, "csrc/ir/node.h", "#pragma once\n#include <base/error.h>\n")
    write(root, "csrc/base/error.h", "#pragma once\n")
    write(root, "csrc/runtime/run.h", "#pragma once\n#include <ir/node.h>\n")
    write(root, "compat/runtime/old.h", "// moved\n#pragma once\n#include <runtime/run.h>\n")
    return root


def test_a_downward_tree_passes(tree):
    problems, graph, compat = check_layers.check(tree)
    assert problems == []
    assert graph[("runtime", "ir")] == 1
    assert compat == {"runtime/old.h"}


def test_an_upward_include_is_reported_with_its_line(tree):
    write(tree, "csrc/ir/node.cpp", "#include <ir/node.h>\n#include <runtime/run.h>\n")
    problems, _, _ = check_layers.check(tree)
    assert problems == [
        "csrc/ir/node.cpp:2: <runtime/run.h> is an upward include (ir is below runtime)"
    ]


def test_a_compatibility_header_is_not_for_the_library(tree):
    write(tree, "csrc/runtime/user.cpp", "#include <runtime/old.h>\n")
    problems, _, _ = check_layers.check(tree)
    assert len(problems) == 1 and "compatibility header <runtime/old.h>" in problems[0]


def test_a_compatibility_header_only_forwards(tree):
    write(tree, "compat/runtime/old.h", "// x\n#pragma once\n#include <ir/node.h>\nint f();\n")
    write(tree, "compat/ir/gone.h", "#pragma once\n#include <ir/missing.h>\n")
    problems, _, _ = check_layers.check(tree)
    expected = "a compatibility header holds only `#pragma once` and the include of a header under csrc/"
    assert problems == [f"compat/ir/gone.h: {expected}", f"compat/runtime/old.h: {expected}"]


def test_a_compatibility_path_is_not_hidden_by_csrc(tree):
    write(tree, "csrc/runtime/old.h", "#pragma once\n")
    problems, _, _ = check_layers.check(tree)
    assert problems == ["compat/runtime/old.h: csrc/runtime/old.h exists too and hides it"]


def test_a_folder_outside_the_layers_is_reported(tree):
    write(tree, "csrc/extras/x.h", "#pragma once\n")
    problems, _, _ = check_layers.check(tree)
    assert problems == ["csrc/extras/x.h: its folder 'extras' is in no layer of tools/check_layers.py"]
