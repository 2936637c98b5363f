#!/usr/bin/env python3
"""Registers, shared memory, spills and key instructions of the kernels in
a fuser kernel cache (FUSER_KERNEL_CACHE_DIR), read with cuobjdump.

    FUSER_KERNEL_CACHE_DIR=/tmp/kc python3 benchmarks/bench_matmul.py
    python3 tools/sass_report.py /tmp/kc

Per cached kernel: its size class (the pipeline type of a matmul kernel,
else the kernel name), REG / SHARED / STACK / LOCAL from `cuobjdump
-res-usage`, and counts of HGMMA (wgmma on the tensor cores), UTMALDG (bulk
tensor copies), LDL/STL (local memory: spills or indexed arrays) in the
SASS."""

import os
import re
import struct
import subprocess
import sys
import tempfile

MAGIC = b"fuser-kernel-cache-v2\n"  # csrc/runtime/nvrtc_compile.cpp


def entries(directory):
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".cubin"):
            continue
        data = open(os.path.join(directory, name), "rb").read()
        if not data.startswith(MAGIC):
            continue
        offset = len(MAGIC)
        fields = []
        for _ in range(3):
            (size,) = struct.unpack_from("<Q", data, offset)
            offset += 8
            fields.append(data[offset : offset + size])
            offset += size
        key, _, cubin = fields
        yield name, key.decode(errors="replace"), cubin


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    for name, key, cubin in entries(sys.argv[1]):
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(cubin)
            f.flush()
            usage = subprocess.run(
                ["cuobjdump", "-res-usage", f.name], capture_output=True, text=True
            ).stdout
            sass = subprocess.run(
                ["cuobjdump", "-sass", f.name], capture_output=True, text=True
            ).stdout
        kind = re.search(r"using FuserMatmul = ([^;]*);", key)
        label = kind.group(1) if kind else name
        resources = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", usage)
        counts = {op: len(re.findall(rf"\b{op}\b", sass)) for op in ("HGMMA", "UTMALDG", "LDL", "STL")}
        res = (
            "REG {} STACK {} SHARED {} LOCAL {}".format(*resources.groups())
            if resources
            else "resources unknown"
        )
        print(f"{label}: {res}; " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
