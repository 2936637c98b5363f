"""Checks that the folders of csrc/ include each other only downward.

LAYERS below is the one list of the layers, lowest first (doc/design.md §2
describes what each holds). A file may include headers of its own layer
and of the layers below it; an include of a higher layer is an upward edge
and fails the check, as a cycle between two folders would need one. The
top-level files belong to the layer named with them below (fusion.h is
part of the IR, transform_replay.h of the transforms).

compat/ (a second include root, outside the graph) holds the
compatibility headers: a moved header's old path, which code outside this
repository includes (doc/design.md §3), holding only `#pragma once` and
the include of its new home under csrc/. Nothing under csrc/ or
python/csrc/ may include one, and no compat/ path may also exist under
csrc/.

    python3 tools/check_layers.py [--graph]

Prints each upward edge (file, line, included header) and exits 1 if there
is one; --graph prints the folder graph with edge counts.
"""

import argparse
import collections
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Lowest first. Each entry is a layer: the folders and top-level files
# (without extension) under csrc/ that belong to it.
LAYERS = [
    ("base",),
    ("ir", "fusion"),
    ("ops",),
    ("expr",),
    ("id_model",),
    ("transform", "transform_replay"),
    ("layout",),
    ("multidevice",),
    ("scheduler",),
    ("segmentation",),
    ("device_lower",),
    ("codegen",),
    ("runtime",),
]

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def layer_of_unit(unit):
    for index, units in enumerate(LAYERS):
        if unit in units:
            return index
    return None


def unit_of_path(rel):
    """The folder (or top-level file stem) a path under csrc/ belongs to."""
    parts = rel.split("/")
    return parts[0] if len(parts) > 1 else os.path.splitext(parts[0])[0]


def sources(folder):
    for dirpath, _, files in os.walk(folder):
        for name in sorted(files):
            if name.endswith((".h", ".cpp", ".cuh")):
                yield os.path.join(dirpath, name)


def includes(path):
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            match = INCLUDE.match(line)
            if match:
                yield number, match.group(1)


def forwards_only(path):
    with open(path, encoding="utf-8") as f:
        code = [s for s in (line.strip() for line in f) if s and not s.startswith("//")]
    return len(code) == 2 and code[0] == "#pragma once" and bool(INCLUDE.match(code[1]))


def check(root=ROOT):
    """(problems, folder graph, compatibility headers) of the tree at root."""
    csrc = os.path.join(root, "csrc")
    compat_root = os.path.join(root, "compat")
    problems = []
    graph = collections.Counter()
    compat = {os.path.relpath(p, compat_root) for p in sources(compat_root)}
    for rel in sorted(compat):
        path = os.path.join(compat_root, rel)
        target = next((h for _, h in includes(path)), None)
        if not forwards_only(path) or not os.path.exists(os.path.join(csrc, target)):
            problems.append(
                f"compat/{rel}: a compatibility header holds only `#pragma once` "
                f"and the include of a header under csrc/"
            )
        if os.path.exists(os.path.join(csrc, rel)):
            problems.append(f"compat/{rel}: csrc/{rel} exists too and hides it")

    def check_not_compat(where, number, header):
        if header in compat and not os.path.exists(os.path.join(csrc, header)):
            problems.append(
                f"{where}:{number}: includes the compatibility header "
                f"<{header}>; include what it forwards to"
            )

    for path in sources(csrc):
        rel = os.path.relpath(path, csrc)
        unit = unit_of_path(rel)
        layer = layer_of_unit(unit)
        if layer is None:
            problems.append(f"csrc/{rel}: its folder '{unit}' is in no layer of tools/check_layers.py")
            continue
        for number, header in includes(path):
            check_not_compat(f"csrc/{rel}", number, header)
            if not os.path.exists(os.path.join(csrc, header)):
                continue  # a system or third-party header
            target = unit_of_path(header)
            if target != unit:
                graph[(unit, target)] += 1
            target_layer = layer_of_unit(target)
            if target_layer is not None and target_layer > layer:
                problems.append(
                    f"csrc/{rel}:{number}: <{header}> is an upward include "
                    f"({unit} is below {target})"
                )
    python_csrc = os.path.join(root, "python", "csrc")
    for path in sources(python_csrc):
        for number, header in includes(path):
            check_not_compat(os.path.relpath(path, root), number, header)
    return problems, graph, compat


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graph", action="store_true", help="print the folder graph")
    args = parser.parse_args()
    problems, graph, compat = check()
    if args.graph:
        for (a, b), n in sorted(graph.items()):
            print(f"{a} -> {b}: {n}")
        print(f"compatibility headers: {', '.join(sorted(compat))}")
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} layer problem(s); the layers: tools/check_layers.py LAYERS")
        return 1
    print(f"layers: no upward include among {len(LAYERS)} layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
