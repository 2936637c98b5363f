#!/usr/bin/env bash
# Runs the Python benchmarks on a machine with NVIDIA GPUs, after
# tools/gpu_test.sh built the extension in build-gpu/: the host time of a
# cache hit from Python, first-call latency, pointwise, reduction and
# normalization bandwidth, segmented fusions, the transformer block's
# attention and matmul throughput, each
# against nvFuser (when its repacked wheel is in .peer/, see
# ../shared/peer/README.md), eager
# PyTorch and torch.compile. Results go to benchmarks/results/<area>.{csv,md,png}
# (benchmarks/results/README.md; and to $OUT when set).
#   FUSER_BENCH_SIZES  sizes in MiB for the bandwidth benchmarks
#                      (default 64,256,1024)
#   FUSER_BENCHES      which to run (default host,first_call,pointwise,
#                      reduction,normalization,segmentation,transformer,
#                      matmul)
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FUSER_GPU_BUILD_DIR:-$ROOT/build-gpu}"
cd "$ROOT" || exit 1
source tools/peer_env.sh
[ -n "$PEER_PRELOAD" ] && export LD_PRELOAD="$PEER_PRELOAD"
status=0
benches=",${FUSER_BENCHES:-host,first_call,pointwise,reduction,normalization,segmentation,transformer,matmul},"
sizes="${FUSER_BENCH_SIZES:-64,256,1024}"
[[ $benches == *,host,* ]] && { python3 benchmarks/bench_host_overhead.py || status=1; }
[[ $benches == *,first_call,* ]] && { python3 benchmarks/bench_first_call.py || status=1; }
[[ $benches == *,pointwise,* ]] && {
  python3 benchmarks/bench_pointwise.py --sizes-mib "$sizes" || status=1
}
[[ $benches == *,reduction,* ]] && {
  python3 benchmarks/bench_reduction.py --sizes-mib "$sizes" || status=1
}
[[ $benches == *,normalization,* ]] && {
  python3 benchmarks/bench_normalization.py --sizes-mib "$sizes" || status=1
}
[[ $benches == *,segmentation,* ]] && {
  python3 benchmarks/bench_segmentation.py || status=1
}
[[ $benches == *,transformer,* ]] && {
  python3 benchmarks/bench_transformer.py || status=1
}
[[ $benches == *,matmul,* ]] && {
  python3 benchmarks/bench_matmul.py ${FUSER_MATMUL_CASES:+--cases "$FUSER_MATMUL_CASES"} ||
    status=1
}
if [ -n "${OUT:-}" ]; then
  cp benchmarks/results/* "$OUT/" 2>/dev/null || true
fi
exit "$status"
