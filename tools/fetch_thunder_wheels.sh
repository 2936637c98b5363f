#!/usr/bin/env bash
# Downloads into .thunder-wheels/ (or $1) the wheels tools/gpu_thunder.sh
# installs on the GPU machine, which has no network: Thunder 0.2.6 and the
# dependencies the GPU machine's Python (3.12, torch already there) lacks,
# litgpt and what it needs for Thunder's litgpt_model, and the pytest
# plugins Thunder's tests load (doc/thunder.md §7).
# Copy the folder to the GPU machine with the tree.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${1:-$ROOT/.thunder-wheels}"
mkdir -p "$DEST"
PIP=(python3 -m pip download -q --no-deps -d "$DEST")
"${PIP[@]}" lightning-thunder==0.2.6 looseversion lightning-utilities opt_einsum dill \
  litgpt==0.5.13 "jsonargparse>=4.37,<=4.41" lightning torchmetrics tqdm safetensors psutil \
  pytest-benchmark py-cpuinfo pytest-timeout
# Compiled ones, for the GPU machine's Python 3.12.
"${PIP[@]}" --python-version 3.12 --only-binary=:all: --platform manylinux_2_28_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 optree pyyaml regex
ls "$DEST"
