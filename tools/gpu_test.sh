#!/usr/bin/env bash
# Runs the whole test suite on a machine with NVIDIA GPUs. Installs nothing
# (the GPU machine has no network): cmake, a compiler, GoogleTest, nvcc and
# torch must already be there. Builds in build-gpu/ with all cores, runs the
# C++ tests and the Python tests, and ends with the line
#   GPU suite: N passed, N failed, N skipped
# If $OUT is set, the logs and reports are copied there.
#   FUSER_GPU_SHARDS  run the C++ tests in this many concurrent gtest shards
#                     and the Python tests with as many pytest-xdist workers
#                     (default 1: ctest and plain pytest); the tests are
#                     mostly NVRTC compilations, which the CPU cores share
#   GTEST_FILTER      (gtest's own variable) runs only the C++ tests it
#                     names, still in the shards above: a subset run in one
#                     process takes several times as long
#   FUSER_GPU_SKIP_BENCH=1  skips the C++ benchmarks at the end
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FUSER_GPU_BUILD_DIR:-$ROOT/build-gpu}"
PYTHON="${FUSER_PYTHON:-python3}"
export FUSER_BUILD_DIR="$BUILD_DIR"
export FUSER_JOBS="${FUSER_JOBS:-$(nproc)}"
cd "$ROOT" || exit 1

LOGS="$BUILD_DIR/gpu-logs"
RESULTS="$BUILD_DIR/test-results"
mkdir -p "$BUILD_DIR"
rm -rf "$LOGS" "$RESULTS"
mkdir -p "$LOGS" "$RESULTS"
summary_args=()
status=0

finish() {
  echo "== Summary"
  "$PYTHON" tools/summarize_results.py --prefix "GPU suite:" "${summary_args[@]}" || status=1
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT/gpu-logs"
    cp -r "$LOGS/." "$OUT/gpu-logs/" 2>/dev/null || true
    cp -r "$RESULTS/." "$OUT/gpu-logs/" 2>/dev/null || true
  fi
  exit "$status"
}

echo "== GPUs"
nvidia-smi -L 2>&1 | tee "$LOGS/nvidia-smi.txt" || echo "nvidia-smi failed"

echo "== Build ($BUILD_DIR, -j$FUSER_JOBS)"
start=$(date +%s)
if ! bash tools/build.sh -DFUSER_BUILD_BENCHMARKS=ON -DFUSER_BUILD_TESTS=ON \
  -DFUSER_BUILD_TEST_UTILS=ON -DFUSER_BUILD_EXAMPLES=ON >"$LOGS/build.log" 2>&1; then
  tail -n 100 "$LOGS/build.log"
  echo "build failed after $(( $(date +%s) - start ))s (full log: gpu-logs/build.log)"
  summary_args+=(--check "build=0")
  status=1
  finish
fi
echo "built in $(( $(date +%s) - start ))s"

shards="${FUSER_GPU_SHARDS:-1}"
ctest_tests="$(cd "$BUILD_DIR" && ctest -N | sed -n 's/^ *Test *#[0-9]*: *//p')"
if [ "$shards" -gt 1 ] && [ -x "$BUILD_DIR/test_fuser" ]; then
  echo "== C++ tests ($shards shards)"
  # Each shard gets a temporary folder of its own: NVRTC's ptxas report
  # came back empty at times on the GPU machine (cause unknown; a shared
  # temporary file is one suspect; tests/cpp/utils.h inspectForSm90a
  # retries, and the tests that need the report skip without one).
  # The tests of inputs above 2^31 elements validate on the host in
  # double: several at once in the shards passed the host's memory limit.
  # They run one after another in one more process beside the shards.
  heavy='*Above2To31*:*EdgeSizesEqualATens*'
  # One test_fuser process in the background: its own TMPDIR, log and
  # JSON report, all named `run`; further arguments go to the binary.
  start_run() {
    local run="$1"
    shift
    mkdir -p "$BUILD_DIR/tmp/$run"
    TMPDIR="$BUILD_DIR/tmp/$run" "$@" "$BUILD_DIR/test_fuser" --gtest_brief=1 \
      --gtest_output="json:$RESULTS/test_fuser_$run.json" \
      >"$LOGS/test_fuser_$run.log" 2>&1 &
  }
  runs=()
  filter=()
  if [ -z "${GTEST_FILTER:-}" ]; then
    filter=(GTEST_FILTER="-$heavy")
    runs+=(heavy)
    start_run heavy env GTEST_FILTER="$heavy"
  fi
  for ((i = 0; i < shards; ++i)); do
    runs+=("shard$i")
    start_run "shard$i" env "${filter[@]}" GTEST_TOTAL_SHARDS=$shards \
      GTEST_SHARD_INDEX=$i
  done
  wait
  for run in "${runs[@]}"; do
    cat "$LOGS/test_fuser_$run.log"
    if [ -f "$RESULTS/test_fuser_$run.json" ]; then
      summary_args+=(--gtest "$RESULTS/test_fuser_$run.json")
    else
      summary_args+=(--missing "test_fuser $run")
      status=1
    fi
  done
elif [ -n "$ctest_tests" ]; then
  echo "== C++ tests"
  (cd "$BUILD_DIR" && ctest -V) 2>&1 | tee "$LOGS/ctest.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  for name in $ctest_tests; do
    if [ -f "$RESULTS/$name.json" ]; then
      summary_args+=(--gtest "$RESULTS/$name.json")
    else
      summary_args+=(--missing "$name")
    fi
  done
fi

if [ -d tests/python ] && [ -n "$(find tests/python -name 'test_*.py' -o -name '*_test.py' | head -n 1)" ]; then
  echo "== Python tests"
  # The package from the source tree, its extension (fuser._C) from the build.
  export PYTHONPATH="$ROOT/python:$BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}"
  if ! "$PYTHON" -c "import pytest" >/dev/null 2>&1; then
    echo "pytest is not installed here"
    summary_args+=(--missing pytest)
    status=1
  else
    workers=()
    if [ "$shards" -gt 1 ] && "$PYTHON" -c "import xdist" >/dev/null 2>&1; then
      workers=(-n "$shards")
    fi
    "$PYTHON" -m pytest tests/python -q "${workers[@]}" --junitxml="$RESULTS/pytest.xml" 2>&1 | tee "$LOGS/pytest.log"
    rc=${PIPESTATUS[0]}
    [ "$rc" -eq 5 ] && rc=0
    if [ "$rc" -ne 0 ]; then
      status=1
      [ -f "$RESULTS/pytest.xml" ] || summary_args+=(--missing pytest)
    fi
    [ -f "$RESULTS/pytest.xml" ] && summary_args+=(--junit "$RESULTS/pytest.xml")
  fi
fi

# Benchmarks are measurements, not tests: they print their figures and
# write CSV next to the test reports; they never change the summary.
if [ "${FUSER_GPU_SKIP_BENCH:-0}" != "1" ]; then
  for bench in "$BUILD_DIR"/bench_*; do
    [ -x "$bench" ] || continue
    echo "== Benchmark $(basename "$bench")"
    "$bench" --csv "$RESULTS/$(basename "$bench").csv" 2>&1 | tee -a "$LOGS/bench.log"
  done
fi

finish
