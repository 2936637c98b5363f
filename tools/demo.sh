#!/usr/bin/env bash
# Builds fuser and runs the demo: the seed fusion (a [6] input with a [3, 2]
# allocation), its IR with all domains, and, where a GPU is present, a run.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FUSER_BUILD_DIR:-$ROOT/build}"
export FUSER_BUILD_DIR="$BUILD_DIR"

bash "$ROOT/tools/setup.sh"
bash "$ROOT/tools/build.sh"
if [ ! -x "$BUILD_DIR/fuser_demo" ]; then
  echo "demo.sh: $BUILD_DIR/fuser_demo was not built (is examples/demo.cpp there?)" >&2
  exit 1
fi
exec "$BUILD_DIR/fuser_demo" "$@"
