#!/usr/bin/env bash
# Configures (first run) and builds fuser. Re-running is incremental.
#   FUSER_BUILD_DIR   build directory (default: build/ in the repository)
#   FUSER_JOBS        parallel jobs (default: nproc)
#   FUSER_BUILD_TYPE  CMake build type for the first configure (default: RelWithDebInfo)
#   FUSER_BUILD_TARGETS  targets to build, space-separated (default: all), e.g.
#                     "fuser_demo" for the library and the demo only
# The compiler cache (ccache, when installed) is wired in CMakeLists.txt.
# Extra arguments are passed to the CMake configure step, e.g.
#   bash tools/build.sh -DFUSER_BUILD_BENCHMARKS=ON
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FUSER_BUILD_DIR:-$ROOT/build}"
JOBS="${FUSER_JOBS:-$(nproc)}"
BUILD_TYPE="${FUSER_BUILD_TYPE:-RelWithDebInfo}"
PYTHON="${FUSER_PYTHON:-python3}"

# nvcc is needed by torch's CMake config.
if ! command -v nvcc >/dev/null 2>&1 && [ -z "${CUDACXX:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

cmake_args=()
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake_args+=("-DCMAKE_BUILD_TYPE=$BUILD_TYPE")
  if command -v ninja >/dev/null 2>&1; then
    cmake_args+=(-G Ninja)
  fi
  torch_dir="$("$PYTHON" -c "import importlib.util, os; s = importlib.util.find_spec('torch'); print(os.path.join(os.path.dirname(s.origin), 'share', 'cmake', 'Torch') if s else '')" 2>/dev/null || true)"
  if [ -n "$torch_dir" ]; then
    cmake_args+=("-DTorch_DIR=$torch_dir")
  fi
  # The Python extension (python/) is built for this interpreter.
  python_exe="$("$PYTHON" -c "import sys; print(sys.executable)" 2>/dev/null || true)"
  if [ -n "$python_exe" ]; then
    cmake_args+=("-DPython3_EXECUTABLE=$python_exe")
  fi
fi

configured=0
if [ -f "$BUILD_DIR/CMakeCache.txt" ] && { [ -f "$BUILD_DIR/build.ninja" ] || [ -f "$BUILD_DIR/Makefile" ]; }; then
  configured=1
fi
if [ "$configured" -eq 0 ] || [ "$#" -gt 0 ]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" "${cmake_args[@]}" "$@"
fi
target_args=()
for target in ${FUSER_BUILD_TARGETS:-}; do
  target_args+=(--target "$target")
done
cmake --build "$BUILD_DIR" -j "$JOBS" "${target_args[@]}"
