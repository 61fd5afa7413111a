#!/usr/bin/env bash
# Finds the NVIDIA driver and the CUDA toolkit (scripts/setup.sh runs it).
#
#   bash scripts/find_cuda.sh
#
# prints three shell assignments, for `eval`:
#   cuda_driver=<nvidia-smi, else libcuda.so.1, if found: the driver is there; or empty>
#   cuda_libcuda=<the driver's libcuda.so.1, or empty>
#   cuda_nvcc=<the toolkit's nvcc, or empty>
# and, when there is a driver but no toolkit, one line on stderr saying so
# and how to get it (the cpu backend is then used).
#
# Where it looks (set them to look elsewhere; the tests do):
#   GPULDPC_BIN_PATH  nvidia-smi and nvcc: $PATH, then $CUDA_HOME/bin,
#                     $CUDA_PATH/bin, /usr/local/cuda/bin, /usr/local/cuda-*/bin
#                     (newest first): NVIDIA's installers leave nvcc off PATH
#   GPULDPC_LIB_PATH  libcuda.so.1: the folder the ld.so cache names for it,
#                     $LD_LIBRARY_PATH, /usr/lib/x86_64-linux-gnu, /usr/lib64,
#                     /usr/lib/wsl/lib (WSL)
set -euo pipefail

if [ -z "${GPULDPC_BIN_PATH+set}" ]; then
    GPULDPC_BIN_PATH="$PATH:${CUDA_HOME:+$CUDA_HOME/bin:}${CUDA_PATH:+$CUDA_PATH/bin:}/usr/local/cuda/bin"
    for dir in $(ls -d /usr/local/cuda-*/bin 2>/dev/null | sort -V -r); do
        GPULDPC_BIN_PATH+=":$dir"
    done
fi
if [ -z "${GPULDPC_LIB_PATH+set}" ]; then
    cached=$(ldconfig -p 2>/dev/null | sed -n 's|.*libcuda\.so\.1 .*=> \(.*\)/libcuda\.so\.1$|\1|p' | head -n 1)
    GPULDPC_LIB_PATH="${cached:+$cached:}${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}"
    GPULDPC_LIB_PATH+="/usr/lib/x86_64-linux-gnu:/usr/lib64:/usr/lib/wsl/lib"
fi

# first_in <PATH-like list> <file name>: the first <dir>/<name> that exists
first_in() {
    local dir
    IFS=: read -r -a dirs <<< "$1"
    for dir in "${dirs[@]}"; do
        if [ -n "$dir" ] && [ -e "$dir/$2" ]; then
            echo "$dir/$2"
            return
        fi
    done
}

libcuda=$(first_in "$GPULDPC_LIB_PATH" libcuda.so.1)
driver=$(first_in "$GPULDPC_BIN_PATH" nvidia-smi)
driver=${driver:-$libcuda}
nvcc=$(first_in "$GPULDPC_BIN_PATH" nvcc)

printf 'cuda_driver=%q\ncuda_libcuda=%q\ncuda_nvcc=%q\n' "$driver" "$libcuda" "$nvcc"
if [ -n "$driver" ] && [ -z "$nvcc" ]; then
    echo "setup.sh: NVIDIA driver found ($driver) but no CUDA toolkit (no nvcc on PATH, in \$CUDA_HOME/bin" \
         "or /usr/local/cuda*/bin): the cpu backend will be used; for the cuda backend install the" \
         "toolkit (https://developer.nvidia.com/cuda-downloads, or apt-get install nvidia-cuda-toolkit)" \
         "and run scripts/setup.sh again" >&2
fi
