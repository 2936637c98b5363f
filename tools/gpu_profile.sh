#!/usr/bin/env bash
# Profiles benchmark cases with Nsight Compute on a machine with NVIDIA GPUs,
# after tools/gpu_test.sh built the extension in build-gpu/: for each case,
# the first launch after a warm-up call of fuser's kernel, of nvFuser's
# (when it is there, see tools/peer_env.sh) and of torch.compile's, with
# the speed-of-light, memory, occupancy and
# launch sections. Full reports go to $OUT/profiles (or build-gpu/profiles);
# a summary of each is printed.
#   FUSER_PROFILE_CASES  space-separated bench:case:MiB, e.g.
#                        "reduction:row_sum_8192xN:256 pointwise:bf16_gelu:256"
#                        (matmul cases take no size: "matmul:tn_4096:0";
#                        nor the transformer's: "transformer:qkv_heads:0")
#   FUSER_PROFILE_FRONTENDS  which to profile (default "fuser nvfuser compile";
#                        "eager" profiles PyTorch's reduction kernel)
#   FUSER_PROFILE_MORE   set to 1 to add the compute, warp-state,
#                        instruction and memory-table (bank conflicts)
#                        sections (issue-bound kernels)
#   FUSER_PROFILE_LAUNCHES  how many kernel launches to profile (default 1;
#                        2 for a fusion of two kernels)
#   FUSER_PROFILE_DIRTY  set to 1 to profile as the benchmark times: the L2
#                        full of dirty lines from clearing it (ncu
#                        --cache-control none, profile_case.py --dirty-l2)
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FUSER_GPU_BUILD_DIR:-$ROOT/build-gpu}"
cd "$ROOT" || exit 1
source tools/peer_env.sh
reports="${OUT:-$BUILD_DIR}/profiles"
mkdir -p "$reports"
for spec in ${FUSER_PROFILE_CASES:-}; do
  IFS=: read -r bench case mib <<<"$spec"
  for frontend in ${FUSER_PROFILE_FRONTENDS:-fuser nvfuser compile}; do
    preload=""
    if [ "$frontend" = nvfuser ]; then
      [ -n "$PEER_PRELOAD" ] || continue
      preload="$PEER_PRELOAD"
    fi
    suffix=""
    [ "${FUSER_PROFILE_DIRTY:-0}" = 1 ] && suffix="-dirty"
    report="$reports/$case-$mib-$frontend$suffix.txt"
    more=()
    [ "${FUSER_PROFILE_MORE:-0}" = 1 ] && more=(--section ComputeWorkloadAnalysis
      --section WarpStateStats --section InstructionStats --section SchedulerStats
      --section MemoryWorkloadAnalysis_Tables)
    dirty=(--cache-control all)
    [ "${FUSER_PROFILE_DIRTY:-0}" = 1 ] && dirty=(--cache-control none)
    LD_PRELOAD="$preload" timeout 120 ncu --clock-control none "${dirty[@]}" \
      --profile-from-start off -k 'regex:fuser_|nvjet|triton|reduce_kernel' \
      --launch-count "${FUSER_PROFILE_LAUNCHES:-1}" \
      --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section Occupancy --section LaunchStats "${more[@]}" \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum \
      python3 benchmarks/profile_case.py --bench "$bench" --case "$case" \
      --mib "$mib" --frontend "$frontend" \
      $([ "${FUSER_PROFILE_DIRTY:-0}" = 1 ] && echo --dirty-l2) >"$report" 2>&1
    echo "== $case $mib MiB $frontend (rc $?)"
    grep -E "^  [a-z_]+.*\(|dram__bytes|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per Thread|Block Size|Grid Size|Waves Per SM|Dynamic Shared|Theoretical Occupancy|L2 Hit Rate|Executed Ipc Active|Issue Slots Busy|Warp Cycles Per Issued|Executed Instructions  " \
      "$report" | sed 's/  */ /g' | head -22
  done
done
