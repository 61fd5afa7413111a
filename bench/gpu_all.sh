#!/usr/bin/env bash
# One call on the GPU machine: build _core and the kernels, run every GPU test, run the
# benchmarks; everything lands under $OUT.  From the project root, carrying .device
# (tools/prepare_device.sh) and, optionally, a reference cache folder .refcache:
#   bash bench/gpu_all.sh [quick]
set -uo pipefail
source tools/device_env.sh || exit 1
export GPULDPC_CACHE_DIR=/tmp/gpuldpc-cache
[ -d .refcache ] && export GPULDPC_REFERENCE_CACHE=$PWD/.refcache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current \
    --format=csv > "$OUT/smi.txt" 2>&1
t0=$SECONDS
gpuldpc_build_core && echo "build: ${SECONDS}s (_core: $(python3 -c 'import gpuldpc._native as n; print(n.available())'))"
timeout "${TEST_TIMEOUT:-240}" python3 -m pytest -q -p no:cacheprovider tests/gpu --tb=short -rf --durations=8 \
    > "$OUT/tests.log" 2>&1; echo "tests rc=$? ($((SECONDS - t0))s)"; tail -30 "$OUT/tests.log"
if [ "${1:-}" != quick ]; then
  timeout "${BENCH_TIMEOUT:-240}" python3 bench/gpu_binary.py --out "$OUT" > "$OUT/bench.log" 2>&1
  echo "bench rc=$? ($((SECONDS - t0))s)"; tail -30 "$OUT/bench.log"
  timeout 90 python3 bench/gr_throughput.py --path core --backend cuda --frames 262144 --out "$OUT" \
      > "$OUT/gr.log" 2>&1; echo "gr rc=$?"; tail -12 "$OUT/gr.log"
fi
