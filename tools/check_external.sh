#!/usr/bin/env bash
# shellcheck disable=SC2317  # the check_* functions are called indirectly, as "check_$name"
# Builds and runs the two external consumer projects under tests/external/:
#   add_subdirectory  a project that adds the fuser source tree with add_subdirectory()
#   find_package      a project that uses an installed fuser through find_package(fuser)
# Usage: bash tools/check_external.sh [add_subdirectory|find_package|all]
# The find_package check installs the main build (tools/build.sh must have run)
# into $FUSER_BUILD_DIR/ext-install. Build dirs: $FUSER_BUILD_DIR/ext-*.
# (The check functions run inside `if`, where `set -e` does not apply: every
# step that can fail ends in `|| return 1`.)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FUSER_BUILD_DIR:-$ROOT/build}"
JOBS="${FUSER_JOBS:-$(nproc)}"
PYTHON="${FUSER_PYTHON:-python3}"
WHICH="${1:-all}"

if ! command -v nvcc >/dev/null 2>&1 && [ -z "${CUDACXX:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

common_args=()
if command -v ninja >/dev/null 2>&1; then
  common_args+=(-G Ninja)
fi
# The add_subdirectory consumer compiles fuser's sources again: with the main
# build's type and flags (read from its cache) every compile command is the
# main build's, so the compiler cache (ccache, wired in CMakeLists.txt)
# returns the main build's objects instead of compiling them again.
cache_value() {  # <variable>: its value in the main build's CMakeCache.txt
  sed -n "s/^$1:[A-Z]*=//p" "$BUILD_DIR/CMakeCache.txt" 2>/dev/null | head -n 1
}
build_type="$(cache_value CMAKE_BUILD_TYPE)"
build_type="${build_type:-RelWithDebInfo}"
type_upper="$(echo "$build_type" | tr '[:lower:]' '[:upper:]')"
common_args+=("-DCMAKE_BUILD_TYPE=$build_type"
  "-DCMAKE_CXX_FLAGS_$type_upper=$(cache_value "CMAKE_CXX_FLAGS_$type_upper")")

configure_and_build() {  # <source dir> <build dir> [cmake args...]
  local src="$1" bin="$2"
  shift 2
  if [ ! -f "$bin/CMakeCache.txt" ] || { [ ! -f "$bin/build.ninja" ] && [ ! -f "$bin/Makefile" ]; }; then
    cmake -S "$src" -B "$bin" "${common_args[@]}" "$@" >"$bin.configure.log" 2>&1 || {
      cat "$bin.configure.log"; return 1; }
  fi
  cmake --build "$bin" -j "$JOBS" || return 1
}

check_add_subdirectory() {
  local bin="$BUILD_DIR/ext-add_subdirectory"
  mkdir -p "$BUILD_DIR" || return 1
  local torch_dir
  torch_dir="$("$PYTHON" -c "import importlib.util, os; s = importlib.util.find_spec('torch'); print(os.path.join(os.path.dirname(s.origin), 'share', 'cmake', 'Torch') if s else '')" 2>/dev/null || true)"
  configure_and_build "$ROOT/tests/external/add_subdirectory" "$bin" \
    "-DFUSER_ROOT=$ROOT" ${torch_dir:+"-DTorch_DIR=$torch_dir"} || return 1
  "$bin/fuser_external_add_subdirectory" || return 1
}

check_find_package() {
  local prefix="$BUILD_DIR/ext-install" bin="$BUILD_DIR/ext-find_package"
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    echo "check_external.sh: $BUILD_DIR is not configured; run tools/build.sh first" >&2
    return 1
  fi
  cmake --install "$BUILD_DIR" --prefix "$prefix" >"$prefix.install.log" 2>&1 || {
    cat "$prefix.install.log"; return 1; }
  # Torch is located by fuserConfig.cmake itself (through python3).
  configure_and_build "$ROOT/tests/external/find_package" "$bin" \
    "-DCMAKE_PREFIX_PATH=$prefix" || return 1
  "$bin/fuser_external_find_package" || return 1
}

status=0
for check in add_subdirectory find_package; do
  if [ "$WHICH" != all ] && [ "$WHICH" != "$check" ]; then
    continue
  fi
  echo "== external consumer: $check"
  start=$(date +%s)
  if "check_$check"; then
    echo "== external consumer: $check: OK ($(( $(date +%s) - start ))s)"
  else
    echo "== external consumer: $check: FAILED ($(( $(date +%s) - start ))s)"
    status=1
  fi
done
exit "$status"
