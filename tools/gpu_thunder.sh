#!/usr/bin/env bash
# Lightning Thunder on fuser, on a GPU machine (doc/thunder.md). Installs
# Thunder 0.2.6 and its small dependencies from the wheels in
# .thunder-wheels/ (the GPU machine has no network) into /tmp/thunder-site
# and nvFuser 0.2.36 from .peer/ as the peer (always; with
# FUSER_THUNDER_STAGES=none, only that, for tools/gpu_test.sh to find
# Thunder with PYTHONPATH=/tmp/thunder-site), then runs the stages named in
# FUSER_THUNDER_STAGES (default "tests bench"):
#   tests  Thunder's nvFuser-parametrized tests (test_nvfuser.py and the
#          nvFuser instances of test_networks.py and test_ops.py) on fuser
#          (through fuser.nvfuser_compat's pytest plugin) and on nvFuser
#          0.2.36 side by side, then tools/thunder_test_report.py compares
#          them file by file;
#   bench  benchmarks/bench_thunder.py (every configuration, one run);
#   models tools/thunder_model_check.py on nanoGPT and the Llama block
#          under FUSER_ENABLE=validate_runs and FUSER_DUMP=failure_repro:
#          each gradient's distance from eager, and the fusion (and
#          kernel segment) at fault with its repro script.
# fuser must be built in $FUSER_GPU_BUILD_DIR (default build-gpu/, as
# tools/gpu_test.sh builds it). Results go to $OUT when it is set.
#   FUSER_THUNDER_FILES    test files (default: test_nvfuser.py
#                          test_networks.py test_ops.py)
#   FUSER_THUNDER_WORKERS  pytest-xdist workers for fuser (default: half
#                          the cores: both executors run at once)
#   FUSER_THUNDER_PEER_WORKERS  the same for nvFuser (default: as fuser)
#   FUSER_THUNDER_TIMEOUT  seconds for one executor's run of one file
#   FUSER_THUNDER_TEST_TIMEOUT  seconds one test may take (default 300)
#   FUSER_THUNDER_RESUME=1 run only the tests that earlier runs into the
#                          same build folder did not finish: each run
#                          appends every finished test's outcome to
#                          <executor>_<file>.jsonl as it finishes
#                          (tools/pytest_outcomes.py), so a run stopped
#                          at its timeout loses only the tests in flight
#   FUSER_THUNDER_K        a pytest -k expression that narrows each file's
#                          nvFuser instances further (re-running a few
#                          tests: FUSER_THUNDER_K=logsumexp)
#   FUSER_THUNDER_SHARD    k/n: only shard k of n of each file's tests
#                          (tools/pytest_shard.py), for a file too long
#                          for one run; its reports are named
#                          <executor>_<file>.<k>of<n>.xml, and the report
#                          merges the shards run so far
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FUSER_GPU_BUILD_DIR:-$ROOT/build-gpu}"
PYTHON="${FUSER_PYTHON:-python3}"
SITE=/tmp/thunder-site
RESULTS="$BUILD_DIR/thunder"
cd "$ROOT" || exit 1
source tools/stage.sh
mkdir -p "$RESULTS"

stage "install Thunder (.thunder-wheels) and nvFuser 0.2.36 (.peer)"
"$PYTHON" -m pip install -q --no-deps --no-index --target "$SITE" \
  .thunder-wheels/*.whl >"$RESULTS/pip.log" 2>&1 || { cat "$RESULTS/pip.log"; exit 1; }
bash .peer/setup.sh .peer/nvf-slim.tar.xz >/dev/null || exit 1
FUSER_PATH="$ROOT/python:$BUILD_DIR/python:$SITE"
PEER_PATH="/tmp/nvf:$ROOT/tools/nvfuser_legacy_shim:$SITE"
export FUSER_KERNEL_CACHE_DIR="$BUILD_DIR/kernel-cache"

run_tests() {  # <executor> <file> <workers>: a junit report per run
  local executor="$1" file="$2" workers="$3"
  local stem="$RESULTS/${executor}_${file%.py}"
  if [ -n "${FUSER_THUNDER_SHARD:-}" ]; then
    stem="$stem.${FUSER_THUNDER_SHARD%/*}of${FUSER_THUNDER_SHARD#*/}"
  fi
  local junit="$stem.xml" log="$stem.log" record="$stem.jsonl"
  local skip=""
  if [ "${FUSER_THUNDER_RESUME:-0}" = 1 ] && [ -f "$record" ]; then
    skip="$stem.resume"
    cp "$record" "$skip"
  else
    rm -f "$record" "$junit"
  fi
  local selection="nvfuser${FUSER_THUNDER_K:+ and ($FUSER_THUNDER_K)}"
  local args=("$SITE/thunder/tests/$file" -k "$selection" -v -p no:cacheprovider
    -p pytest_shard -p pytest_outcomes --timeout="${FUSER_THUNDER_TEST_TIMEOUT:-300}"
    -n "$workers" --junitxml="$junit")
  local vars=(PYTEST_SHARD="${FUSER_THUNDER_SHARD:-}" PYTEST_OUTCOMES="$record"
    PYTEST_SKIP_RECORDED="$skip")
  if [ "$executor" = fuser ]; then
    env PYTHONPATH="$FUSER_PATH:$ROOT/tools" "${vars[@]}" \
      timeout -k 20 "${FUSER_THUNDER_TIMEOUT:-540}" \
      "$PYTHON" -m pytest -p fuser.nvfuser_compat.pytest_plugin "${args[@]}" >"$log" 2>&1
  else
    env PYTHONPATH="$PEER_PATH:$ROOT/tools" "${vars[@]}" \
      LD_PRELOAD=/tmp/nvf/libshim.so timeout -k 20 "${FUSER_THUNDER_TIMEOUT:-540}" \
      "$PYTHON" -m pytest "${args[@]}" >"$log" 2>&1
  fi
  echo "$executor $file: $(tail -n 1 "$log")"
}

if [[ " ${FUSER_THUNDER_STAGES:-tests bench} " == *" tests "* ]]; then
  workers="${FUSER_THUNDER_WORKERS:-$(( $(nproc) / 2 ))}"
  peer_workers="${FUSER_THUNDER_PEER_WORKERS:-$workers}"
  for file in ${FUSER_THUNDER_FILES:-test_nvfuser.py test_networks.py test_ops.py}; do
    stage "Thunder's $file on fuser ($workers workers) and on nvFuser ($peer_workers)"
    run_tests fuser "$file" "$workers" &
    run_tests nvfuser "$file" "$peer_workers" &
    wait
  done
  stage "report"
  "$PYTHON" tools/thunder_test_report.py "$RESULTS" >"$RESULTS/thunder_tests.md"
  head -n 40 "$RESULTS/thunder_tests.md"
fi

if [[ " ${FUSER_THUNDER_STAGES:-tests bench} " == *" bench "* ]]; then
  stage "benchmark"
  THUNDER_SITE="$SITE" FUSER_PYTHONPATH="$ROOT/python:$BUILD_DIR/python" \
    NVFUSER_PYTHONPATH="/tmp/nvf:$ROOT/tools/nvfuser_legacy_shim" \
    NVFUSER_PRELOAD=/tmp/nvf/libshim.so \
    "$PYTHON" benchmarks/bench_thunder.py --csv "$RESULTS/bench_thunder.csv" \
    ${FUSER_THUNDER_BENCH_ARGS:-} 2>&1 | tee "$RESULTS/bench_thunder.log" ${OUT:+"$OUT/bench_thunder.log"} | tail -n 30
fi

if [[ " ${FUSER_THUNDER_STAGES:-tests bench} " == *" models "* ]]; then
  for model in nanogpt llama; do
    stage "$model through Thunder on fuser, validated against ATen"
    PYTHONPATH="$FUSER_PATH" FUSER_ENABLE=validate_runs FUSER_DUMP=failure_repro \
      timeout 300 "$PYTHON" tools/thunder_model_check.py "$model" >"$RESULTS/model_$model.log" 2>&1
    grep -E "difference|fell back|validate_runs" "$RESULTS/model_$model.log" | cut -c1-300
  done
fi

if [ -n "${OUT:-}" ]; then
  tar -C "$RESULTS" -czf "$OUT/thunder.tar.gz" .
  cp "$RESULTS"/thunder_tests.md "$RESULTS"/bench_thunder.csv "$OUT/" 2>/dev/null || true
fi
stage "done"
