#!/usr/bin/env bash
# Builds PyCUDA against the CUDA toolkit of the given nvcc (and the driver's
# libcuda.so.1 where the toolkit has no stub to link with), for GNU Radio's
# Python (/usr/bin/python3), the way PyCUDA documents it (configure.py
# --cuda-root), and installs it into /usr/local/lib/python3.X/dist-packages,
# where GNU Radio's flowgraphs and the venv of scripts/setup.sh both see it.
#
#   bash scripts/install_pycuda.sh /path/to/nvcc [/path/to/libcuda.so.1]
#       (as root; scripts/setup.sh runs it on a machine with an NVIDIA driver)
#
# pip needs --break-system-packages there (Debian marks its Python as managed
# by apt; /usr/local is the administrator's).  PyCUDA's Python dependencies
# come from Debian (setup.sh installs python3-pytools, -mako, -platformdirs).
# A toolkit without cuRAND headers gives a PyCUDA without pycuda.curandom,
# which gpuldpc does not use.
set -euo pipefail
nvcc=$1
libcuda=${2:-}
# The toolkit's root as nvcc itself reports it (the nvcc on PATH may be a wrapper or a link).
cuda_root=$("$nvcc" --dryrun -v -x cu -c /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p')
cuda_root=$(realpath "${cuda_root:-$(dirname "$nvcc")/..}")
options=(--cuda-root="$cuda_root")
[ -e "$cuda_root/include/curand.h" ] || options+=(--no-cuda-enable-curand)
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
# -lcuda: the toolkit's stub library, else the driver's own (PyCUDA issue 98)
if ! ls "$cuda_root"/lib*/stubs/libcuda.so > /dev/null 2>&1 && [ -n "$libcuda" ]; then
    mkdir "$src/lib"
    ln -s "$libcuda" "$src/lib/libcuda.so"
    options+=(--cudadrv-lib-dir="$src/lib")
fi
echo "install_pycuda: building PyCUDA for /usr/bin/python3: configure.py ${options[*]}"
/usr/bin/python3 -m pip download --disable-pip-version-check --no-deps --no-binary :all: \
    --no-build-isolation -d "$src" "pycuda>=2022.1"
tar -xzf "$src"/pycuda-*.tar.gz -C "$src"
rm "$src"/pycuda-*.tar.gz
cd "$src"/pycuda-*/
/usr/bin/python3 configure.py "${options[@]}"
/usr/bin/python3 -m pip install --disable-pip-version-check --break-system-packages --no-deps \
    --no-build-isolation .
