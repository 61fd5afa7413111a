#!/usr/bin/env bash
# Issue 7 item 6: the BER/FER campaigns on the GPU machine, in one command (< 10 minutes).
#
#   source .device/gpu-env.sh && bash bench/sim_campaigns.sh
#
# 1. checks that kernels/sim_noise.cu regenerates the CPU's batches (tests/sim/test_gpu_noise.py);
# 2. binary: WiFi 1944 r1/2 and WiMAX 2304 r1/2, layered NMS and SPA, 10 iterations,
#    0.5..3.0 dB, until 100 frame errors, a curve stopping below FER 1e-5;
# 3. GF(q): (744,653) GF(32) and the (1512,1325) GF(64) code, modified Min-Max (mmma),
#    10 iterations, 3..5.5 dB, up to 200 frame errors a point, as deep as the time allows.
# Each point gets at most SIM_BINARY_SECONDS / SIM_NB_SECONDS of wall time per invocation;
# a campaign is stopped with SIGINT at its time limit (finished batches, results.csv and the
# plots are still written).  Every visible GPU works at once (one worker process each).
# SIM_ONLY=binary or SIM_ONLY=nb runs one of the two campaigns.  Results: $OUT/sim-binary/ and $OUT/sim-nb/ (results.sqlite,
# results.csv, error_rates.png, error_rates.svg); commit them as bench/results/sim-h200-*.
# When bench/results/sim-h200-{binary,nb}.sqlite exist, the campaigns resume from them, so a
# second run deepens the curves instead of starting again.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-bench/out}
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
BIN_SECONDS=${SIM_BINARY_SECONDS:-5}
NB_SECONDS=${SIM_NB_SECONDS:-60}
BIN_LIMIT=${SIM_BINARY_LIMIT:-270}
NB_LIMIT=${SIM_NB_LIMIT:-380}
BIN_BATCH=${SIM_BINARY_BATCH:-16384}   # frames per batch: 16384 x 2304 float32 LLRs = 150 MB
NB_BATCH=${SIM_NB_BATCH:-4096}         # GF(64) n=1512: 1512 x 64 float32 = 387 kB per frame
BACKEND=${SIM_BACKEND:-cuda}           # another backend only to try the script without a GPU

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import numpy, matplotlib, rich, scipy; print('numpy', numpy.__version__)"

python3 -m pytest -q -p no:cacheprovider tests/sim/test_gpu_noise.py || echo "GPU noise check FAILED"

campaign() {   # name limit batch args...
    local name=$1 limit=$2 batch=$3; shift 3
    local dir="$OUT/sim-$name" resume=()
    mkdir -p "$dir"
    if [ -f "bench/results/sim-h200-$name.sqlite" ]; then
        cp "bench/results/sim-h200-$name.sqlite" "$dir/results.sqlite" && resume=(--resume)
    fi
    echo "== $name: $* (limit ${limit}s)"
    local t0=$SECONDS
    timeout -s INT -k 30 "$limit" python3 -m gpuldpc.sim "$@" --backend "$BACKEND" --batch "$batch" --seed 1 \
        --out "$dir" "${resume[@]}" --quiet
    echo "== $name: exit $?, $((SECONDS - t0)) s"
}

ONLY=${SIM_ONLY:-}
[ "$ONLY" != nb ] && campaign binary "$BIN_LIMIT" "$BIN_BATCH" wifi-1944-1/2 wimax-2304-1/2 --algorithm nms spa \
    --iterations 10 --ebn0 0.5:3.0:0.25 --max-errors 100 --max-frames 100000000 --min-fer 1e-5 --max-seconds "$BIN_SECONDS"

[ "$ONLY" != binary ] && campaign nb "$NB_LIMIT" "$NB_BATCH" gf32-744-653 gf64-1512-1325 --algorithm mmma \
    --iterations 10 --ebn0 3.0:5.5:0.25 --max-errors 200 --max-frames 1000000000 --min-fer 1e-9 \
    --max-seconds "$NB_SECONDS"

for name in ${ONLY:-binary nb}; do
    echo "== $name results (fr/s: frames per second of the GPU worker, channel + decode + counting)"
    python3 -m gpuldpc.sim --show --out "$OUT/sim-$name"
done
