#!/usr/bin/env bash
# Builds what the demo needs (the library, the test helpers it uses and the
# demo itself; not the tests or the Python module) and runs it: the seed
# fusion (a [6] input with a [3, 2] allocation), its IR with all domains,
# its CUDA kernel, and, where a GPU is present, a run. tools/test.sh, run
# next, builds the rest into the same folder.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FUSER_BUILD_DIR:-$ROOT/build}"
export FUSER_BUILD_DIR="$BUILD_DIR"
source "$ROOT/tools/stage.sh"

stage "setup"
bash "$ROOT/tools/setup.sh"
stage "build (library and demo)"
FUSER_BUILD_TARGETS=fuser_demo bash "$ROOT/tools/build.sh"
if [ ! -x "$BUILD_DIR/fuser_demo" ]; then
  echo "demo.sh: $BUILD_DIR/fuser_demo was not built (is examples/demo.cpp there?)" >&2
  exit 1
fi
stage "demo"
exec "$BUILD_DIR/fuser_demo" "$@"
