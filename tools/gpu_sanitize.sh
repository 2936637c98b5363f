#!/usr/bin/env bash
# Runs the GPU tests under NVIDIA's compute-sanitizer (doc/design.md §8):
# every C++ GPU test under memcheck (out-of-bounds and misaligned accesses,
# bad frees, device-side errors), the reduction, normalization,
# segmentation and concurrency tests under synccheck (barriers) and the
# same less two (see race_subset) under racecheck (shared-memory hazards),
# both on fuser's kernels. Builds in build-gpu/ like
# tools/gpu_test.sh when needed. Each tool runs the tests in concurrent
# gtest shards; every kernel launch is counted (FUSER_DUMP=launch_params).
# The property tests draw fewer cases than in tools/gpu_test.sh (100
# random pointwise fusions, 40 random reductions), and the one test whose
# point is an input above 2^31 elements is left out (its kernels run at
# smaller sizes in the others; memcheck would shadow 8 GiB). Writes a
# summary to benchmarks/results/sanitizer.md (and $OUT when set) and ends
# with the line
#   sanitizer: N errors over M kernel launches in T tests
#   FUSER_SANITIZE_SHARDS   concurrent shards per tool (default: nproc)
#   FUSER_SANITIZE_TOOLS    which tools (default memcheck,racecheck,synccheck)
#   FUSER_SANITIZE_TIMEOUT  seconds per tool before its shards are stopped
#                           (default 1800; a stopped shard counts as failed;
#                           FUSER_SANITIZE_TIMEOUT_MEMCHECK and the like
#                           set one tool's)
# PyTorch's caching allocator is off (PYTORCH_NO_CUDA_MEMORY_CACHING=1), so
# that every tensor is an allocation of its own and memcheck sees an access
# past its end.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FUSER_GPU_BUILD_DIR:-$ROOT/build-gpu}"
export FUSER_BUILD_DIR="$BUILD_DIR"
export FUSER_JOBS="${FUSER_JOBS:-$(nproc)}"
cd "$ROOT" || exit 1
SANITIZER="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
if [ ! -x "$SANITIZER" ]; then
  echo "compute-sanitizer not found"
  exit 1
fi
if [ ! -x "$BUILD_DIR/test_fuser" ]; then
  bash tools/build.sh >/dev/null || { echo "build failed"; exit 1; }
fi
LOGS="$BUILD_DIR/sanitizer-logs"
rm -rf "$LOGS"
mkdir -p "$LOGS"
shards="${FUSER_SANITIZE_SHARDS:-$(nproc)}"
tools=",${FUSER_SANITIZE_TOOLS:-memcheck,racecheck,synccheck},"
subset='ReductionGpuTest.*:EveryCase/NormalizationCaseGpuTest.*:SegmentationGpuTest.*:ConcurrencyGpuTest.*'
# racecheck leaves out two tests; the summary below says which and why.
race_subset="${subset%:ConcurrencyGpuTest.*}:-SegmentationGpuTest.MatmulThenLayerNorm"
all_gpu='*Gpu*:-NormalizationGpuTest.InputAbove2To31Elements'
limit="${FUSER_SANITIZE_TIMEOUT:-1800}"
export FUSER_PROPERTY_GPU_CASES="${FUSER_PROPERTY_GPU_CASES:-100}"
export FUSER_PROPERTY_REDUCTION_GPU_CASES="${FUSER_PROPERTY_REDUCTION_GPU_CASES:-40}"

summary="$LOGS/summary.md"
{
  echo "# compute-sanitizer over the GPU tests ($(date +%Y-%m-%d))"
  echo
  echo "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1); $("$SANITIZER" --version | tail -1)."
  echo "Run by \`bash tools/gpu_sanitize.sh\`; launches counted with FUSER_DUMP=launch_params."
  echo
  echo "| tool | tests | passed | failed | kernel launches | sanitizer errors |"
  echo "|---|---|---|---|---|---|"
} >"$summary"

total_errors=0
total_launches=0
total_tests=0
status=0
run_tool() {
  local tool="$1" filter="$2"
  local start=$(date +%s)
  local upper=$(echo "$tool" | tr a-z A-Z)
  local tool_limit_name="FUSER_SANITIZE_TIMEOUT_$upper"
  local tool_limit="${!tool_limit_name:-$limit}"
  # API errors are fuser's to report (every driver call is checked, and the
  # failure tests provoke some on purpose); racecheck and synccheck look at
  # fuser's kernels only (the tests' ATen references launch their own).
  local options=(--report-api-errors no)
  [ "$tool" != memcheck ] && options+=(--kernel-name kns=fuser_kernel)
  for ((i = 0; i < shards; ++i)); do
    FUSER_DUMP=launch_params GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
      PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout "$tool_limit" "$SANITIZER" --tool "$tool" "${options[@]}" --error-exitcode 99 --print-limit 20 \
      "$BUILD_DIR/test_fuser" --gtest_filter="$filter" --gtest_brief=1 \
      >"$LOGS/$tool.$i.log" 2>&1 &
  done
  wait
  local errors=0 launches=0 passed=0 failed=0
  for ((i = 0; i < shards; ++i)); do
    local log="$LOGS/$tool.$i.log"
    if grep -q '^\[==========\] 0 tests from 0 test suites ran' "$log"; then
      continue # a shard with no test (more shards than tests)
    fi
    # memcheck and synccheck end with "ERROR SUMMARY: N errors",
    # racecheck with "RACECHECK SUMMARY: N hazards displayed (E errors, ...".
    local e=$(sed -n -e 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' \
      -e 's/.*RACECHECK SUMMARY: .*(\([0-9]*\) error.*/\1/p' "$log" | tail -1)
    if [ -z "$e" ]; then
      echo "$tool shard $i: no ERROR SUMMARY (crashed or stopped after ${tool_limit}s); tail:"
      tail -20 "$log"
      e=1
    fi
    errors=$((errors + e))
    launches=$((launches + $(grep -c '^\[launch_params\]' "$log")))
    passed=$((passed + $(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)))
    failed=$((failed + $(grep -c '^\[  FAILED  \]' "$log")))
  done
  local tests=$((passed + failed))
  echo "$tool: $errors errors over $launches kernel launches in $tests tests ($passed passed, $failed failed) in $(( $(date +%s) - start ))s"
  echo "| $tool | $filter | $passed | $failed | $launches | $errors |" >>"$summary"
  total_errors=$((total_errors + errors))
  total_launches=$((total_launches + launches))
  total_tests=$((total_tests + tests))
  [ "$errors" -eq 0 ] && [ "$failed" -eq 0 ] || status=1
  grep -h -A12 '========= \(Invalid\|Race\|Barrier\|Program hit\|Error\)' "$LOGS"/$tool.*.log | head -60
}

[[ $tools == *,memcheck,* ]] && run_tool memcheck "$all_gpu"
[[ $tools == *,racecheck,* ]] && run_tool racecheck "$race_subset"
[[ $tools == *,synccheck,* ]] && run_tool synccheck "$subset"

{
  echo
  echo "Left out, and why: racecheck does not run the Hopper matmul kernels"
  echo "(TMA copies, mbarriers, wgmma stop the tool with \"failed to handle a"
  echo "hardware exception\"; memcheck and synccheck run them clean) nor the"
  echo "concurrency test (its 192 large grid reductions take racecheck over an"
  echo "hour; its kernels are those of the reduction tests). The test of an"
  echo "input above 2^31 elements is left out everywhere (8 GiB of shadow"
  echo "memory). The property tests draw $FUSER_PROPERTY_GPU_CASES random pointwise fusions and"
  echo "$FUSER_PROPERTY_REDUCTION_GPU_CASES random reductions."
  echo
} >>"$summary"
echo "sanitizer: $total_errors errors over $total_launches kernel launches in $total_tests tests" | tee -a "$summary"
mkdir -p benchmarks/results
cp "$summary" benchmarks/results/sanitizer.md
if [ -n "${OUT:-}" ]; then
  cp "$summary" "$OUT/sanitizer.md"
fi
exit "$status"
