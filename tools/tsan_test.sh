#!/usr/bin/env bash
# Runs the concurrency tests (tests/cpp/test_concurrency.cpp: scheduling,
# lowering, code generation, NVRTC and the kernel cache from several
# threads at once, no GPU) under ThreadSanitizer. Builds fuser and a test
# binary of that one file (FUSER_TEST_FILTER) with -fsanitize=thread in
# build-tsan/, at -O1 (what ThreadSanitizer needs, and quicker to compile);
# libtorch itself is not instrumented: races inside it are not seen, and the
# inputs are made before the threads start. Exits non-zero on any report.
#   FUSER_TSAN_BUILD_DIR  build directory (default: build-tsan/)
#   FUSER_JOBS            parallel jobs (default: nproc)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FUSER_TSAN_BUILD_DIR:-$ROOT/build-tsan}"
cd "$ROOT"

FUSER_BUILD_DIR="$BUILD_DIR" FUSER_BUILD_TYPE=RelWithDebInfo \
  FUSER_BUILD_TARGETS=test_fuser \
  bash tools/build.sh -DFUSER_BUILD_PYTHON=OFF -DFUSER_BUILD_EXAMPLES=OFF \
  -DFUSER_TEST_FILTER=concurrency -DFUSER_TEST_SHARDS=1 \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g0 -DNDEBUG" \
  "-DCMAKE_CXX_FLAGS=-fsanitize=thread" \
  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread" \
  "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread"

# halt_on_error: the first report fails the run (exit code 66).
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
  "$BUILD_DIR/test_fuser" --gtest_filter='ConcurrencyTest.*' --gtest_brief=1
echo "ThreadSanitizer: no reports in the concurrency tests"
