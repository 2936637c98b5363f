#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing (tools/setup.sh), checks
# the include layers (tools/check_layers.py), builds
# (tools/build.sh), runs the C++ tests through ctest, the Python tests under
# tests/python, the external consumer checks (tools/check_external.sh) and
# the concurrency tests under ThreadSanitizer (tools/tsan_test.sh).
# The last line is the summary "N passed, N failed, N skipped"; the exit code
# is non-zero if anything failed.
#   FUSER_SKIP_EXTERNAL=1  skip the external consumer checks
#   FUSER_SKIP_TSAN=1      skip the ThreadSanitizer build and run
#                          (tools/tsan_test.sh)
#   FUSER_JOBS             parallel build jobs and test processes (default: nproc)
# Each stage starts with a line "== [+M:SS] <stage>" (time since the start).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FUSER_BUILD_DIR:-$ROOT/build}"
PYTHON="${FUSER_PYTHON:-python3}"
JOBS="${FUSER_JOBS:-$(nproc)}"
export FUSER_BUILD_DIR="$BUILD_DIR"
cd "$ROOT" || exit 1
source tools/stage.sh

stage "setup"
bash tools/setup.sh || { echo "setup.sh failed"; exit 1; }
# --- The folders include each other only downward (tools/check_layers.py) --
stage "layers"
layers_ok=1
"$PYTHON" tools/check_layers.py || layers_ok=0

stage "build"
if ! bash tools/build.sh; then
  echo "build failed"
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi

RESULTS="$BUILD_DIR/test-results"
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
summary_args=(--check "layers=$layers_ok")
status=$(( 1 - layers_ok ))

# --- C++ tests (ctest; each gtest binary writes $RESULTS/<test name>.json) --
ctest_tests="$(cd "$BUILD_DIR" && ctest -N | sed -n 's/^ *Test *#[0-9]*: *//p')"
if [ -n "$ctest_tests" ]; then
  stage "C++ tests ($(echo "$ctest_tests" | wc -l) gtest shards, $JOBS at a time)"
  (cd "$BUILD_DIR" && ctest --output-on-failure -j "$JOBS") || status=1
  for name in $ctest_tests; do
    if [ -f "$RESULTS/$name.json" ]; then
      summary_args+=(--gtest "$RESULTS/$name.json")
    else
      summary_args+=(--missing "$name")
    fi
  done
else
  echo "== C++ tests: none (no tests/cpp/test_*.cpp)"
fi

# --- Python tests ------------------------------------------------------------
if [ -d tests/python ] && [ -n "$(find tests/python -name 'test_*.py' -o -name '*_test.py' | head -n 1)" ]; then
  stage "Python tests"
  # The package from the source tree, its extension (fuser._C) from the build.
  export PYTHONPATH="$ROOT/python:$BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}"
  # One worker per job: most of the time is interpreters starting (the
  # tests of Thunder, torch.compile and torchrun run subprocesses).
  "$PYTHON" -m pytest tests/python -q -n "$JOBS" --junitxml="$RESULTS/pytest.xml"
  rc=$?
  if [ "$rc" -eq 5 ]; then
    rc=0  # no tests collected
  fi
  if [ "$rc" -ne 0 ]; then
    status=1
    [ -f "$RESULTS/pytest.xml" ] || summary_args+=(--missing pytest)
  fi
  [ -f "$RESULTS/pytest.xml" ] && summary_args+=(--junit "$RESULTS/pytest.xml")
fi

# --- External consumers (add_subdirectory, find_package) ---------------------
if [ "${FUSER_SKIP_EXTERNAL:-0}" != 1 ]; then
  for check in add_subdirectory find_package; do
    stage "external consumer: $check"
    if bash tools/check_external.sh "$check"; then
      summary_args+=(--check "external:$check=1")
    else
      summary_args+=(--check "external:$check=0")
      status=1
    fi
  done
fi

# --- The concurrency tests under ThreadSanitizer (tools/tsan_test.sh) ---------
if [ "${FUSER_SKIP_TSAN:-0}" != 1 ]; then
  stage "ThreadSanitizer"
  if bash tools/tsan_test.sh; then
    summary_args+=(--check "tsan:concurrency=1")
  else
    summary_args+=(--check "tsan:concurrency=0")
    status=1
  fi
fi

stage "summary"
"$PYTHON" tools/summarize_results.py "${summary_args[@]}" || status=1
exit "$status"
