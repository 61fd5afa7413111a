#!/usr/bin/env bash
# Compile every kernels/*.cu for one GPU architecture into a folder (default .gpukernels,
# sm_90: the H200), so a device call can carry the fatbins instead of building them there:
#   bash tools/build_kernels.sh [dir] [arch]      then GPULDPC_KERNEL_DIR=<dir> on the device
set -euo pipefail
dir=${1:-.gpukernels}
arch=${2:-90}
mkdir -p "$dir"
pids=()
for cu in kernels/*.cu; do
  name=$(basename "$cu" .cu)
  if [ ! -f "$dir/$name.fatbin" ] || [ "$cu" -nt "$dir/$name.fatbin" ] || \
     [ -n "$(find kernels -name '*.cuh' -newer "$dir/$name.fatbin")" ]; then
    nvcc -fatbin -O3 -lineinfo -std=c++17 -gencode "arch=compute_$arch,code=sm_$arch" -o "$dir/$name.fatbin" "$cu" &
    pids+=($!)
  fi
done
for p in "${pids[@]}"; do wait "$p"; done
ls "$dir"
