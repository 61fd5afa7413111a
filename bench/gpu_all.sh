#!/usr/bin/env bash
# The GPU machine's work in one or two calls: build _core and the kernels, run every GPU
# test, run the benchmarks; everything lands under $OUT.  From the project root, carrying
# .device (tools/prepare_device.sh) and, optionally, a reference cache folder .refcache:
#   bash bench/gpu_all.sh                       # every stage (about 16 minutes)
#   bash bench/gpu_all.sh tests front           # some stages: tests front binary versions nb nr nrfer dvbfer sparse soft mixed gr sim
# Stages: tests (tests/gpu + the GPU noise check), front (bench/gpu_front_door.py: gl.Decoder, what
# a user gets, beside the lower-level objects; the headline figures), binary (bench/gpu_binary.py: Tables II/III,
# Sionna, CPU rows, latency), versions (bench/gpu_versions.py --latency-only: the latency
# kernels side by side), nb (bench/gpu_nb.py), nr (bench/gpu_nr.py: 5G NR blocks, Sionna beside), nrfer
# (bench/nr_campaign.py: 5G NR FER curves, ours and Sionna's on identical LLRs, 4 minutes), dvbfer
# (bench/dvb_ccsds_campaign.py: DVB-S2 and CCSDS FER curves beside EN 302 307-1's QEF points, about
# 75 s; named only, not among the defaults; DVBFER_ARGS, e.g. "--seconds 120 --flooding"), sparse
# (bench/gpu_sparse.py: DVB-S2 and CCSDS through gl.Decoder, the sparse kernel, Sionna beside), soft
# (bench/gpu_soft.py: what soft output costs), gr (GNU Radio block path, core), sim (50 s of
# the GF(q) campaign resumed from bench/results: the campaign's frames per second), mixed
# (bench/gpu_mixed.py: gl.MixedDecoder on issue 16's mix of three codes against the same frames
# code by code, about 2 minutes; named only, not among the defaults; MIXED_ARGS, e.g.
# "--piece-frames 0,5280,21120,42240").
set -uo pipefail
source tools/device_env.sh || exit 1
export GPULDPC_CACHE_DIR=/tmp/gpuldpc-cache
[ -d .refcache ] && export GPULDPC_REFERENCE_CACHE=$PWD/.refcache
stages=${*:-tests front binary versions nb nr nrfer sparse soft gr sim}
want() { [[ " $stages " == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current \
    --format=csv > "$OUT/smi.txt" 2>&1
t0=$SECONDS
# _core and the kernels, unless carried in .gpukernels: the fatbins (tools/build_kernels.sh) and
# a _core*.so brought back from an earlier call (CORE_BACK=1) when lib/ has not changed since
if ls .gpukernels/_core*.so > /dev/null 2>&1; then
  cp .gpukernels/_core*.so python/gpuldpc/
else
  gpuldpc_build_core || exit 1      # incremental when /tmp/build is still there (a warm machine)
  [ -n "${CORE_BACK:-}" ] && cp python/gpuldpc/_core*.so "$OUT/"
fi
echo "build: ${SECONDS}s (_core: $(python3 -c 'import gpuldpc._native as n; print(n.available())'))"
if want tests; then
  timeout "${TEST_TIMEOUT:-300}" python3 -m pytest -q -p no:cacheprovider tests/gpu tests/sim/test_gpu_noise.py \
      tests/streaming/test_bad_frames.py \
      --tb=short -rf --durations=8 ${PYTEST_ARGS:-} > "$OUT/tests.log" 2>&1; echo "tests rc=$? ($((SECONDS - t0))s)"
  tail -25 "$OUT/tests.log"
fi
run() {   # name timeout command...
  local name=$1 limit=$2; shift 2
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1; echo "$name rc=$? ($((SECONDS - t0))s)"; tail -25 "$OUT/$name.log"
}
want front && run front 480 python3 bench/gpu_front_door.py --out "$OUT" ${FRONT_ARGS:-}
want binary && run binary 300 python3 bench/gpu_binary.py --out "$OUT"
want versions && run versions 120 python3 bench/gpu_versions.py --latency-only --per-snr 250 --out "$OUT"
want nb && run nb 240 python3 bench/gpu_nb.py --out "$OUT"
want nr && run nr 480 python3 bench/gpu_nr.py --out "$OUT" ${NR_ARGS:-}
want nrfer && run nrfer 330 python3 bench/nr_campaign.py --out "$OUT" ${NRFER_ARGS:-}
want dvbfer && run dvbfer 240 python3 bench/dvb_ccsds_campaign.py --out "$OUT" ${DVBFER_ARGS:-}
want sparse && run sparse 420 python3 bench/gpu_sparse.py --out "$OUT" ${SPARSE_ARGS:-}
want soft && run soft 180 python3 bench/gpu_soft.py --out "$OUT"
want mixed && run mixed 300 python3 bench/gpu_mixed.py --out "$OUT" ${MIXED_ARGS:-}
if want gr; then   # the block's work path, three times each, interleaved: numpy ring, 1 % NaN frames erased, GNU Radio-like (foreign) ring
  for rep in $(seq "${GR_REPS:-3}"); do
    run gr_clean_$rep 90 python3 bench/gr_throughput.py --path core --backend cuda --frames 262144 --out "$OUT"
    run gr_bad_$rep 90 python3 bench/gr_throughput.py --path core --bad-fraction 0.01 --backend cuda --frames 262144 --out "$OUT"
    run gr_foreign_$rep 90 python3 bench/gr_throughput.py --path core --foreign --backend cuda --frames 262144 --out "$OUT"
  done
fi
want sim && run sim 120 env SIM_ONLY=nb SIM_NB_LIMIT=50 OUT="$OUT" bash bench/sim_campaigns.sh
# soak (named only, not among the defaults: 5 minutes): bench/soak.py's work path on cuda, 1 % bad
# frames in bursts; nothing lost, RSS and device memory within 5 % of their value after the first minute
want soak && run soak 420 python3 bench/soak.py --path core --backend cuda --seconds 300 --out "$OUT"
# the reference results, for the next call (in parts: $OUT brings back files of up to 16 MiB)
[ -d .refcache ] && [ -n "${REFCACHE_BACK:-}" ] && tar czf - .refcache | split -b 15m - "$OUT/refcache.tgz.part-"
echo "total $((SECONDS - t0))s"
