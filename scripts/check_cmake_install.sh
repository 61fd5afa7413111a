#!/usr/bin/env bash
# Builds and installs the project the CMake way (GNU Radio's out-of-tree
# convention) into build/cmake-prefix and checks what landed there:
# gpuldpc with _core and one fatbin per kernels/*.cu, the GNU Radio blocks
# (gnuradio.gpuldpc) and every grc/*.block.yml; then imports them from there.
#
#   bash scripts/check_cmake_install.sh     (after scripts/setup.sh; CI runs it)
#
# nvcc is required here (GPULDPC_REQUIRE_CUDA=ON): every kernel must compile.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
py=$root/.venv/bin/python
prefix=$root/build/cmake-prefix

rm -rf "$prefix"
cmake -S . -B build/cmake -G Ninja -DCMAKE_INSTALL_PREFIX="$prefix" -DGPULDPC_REQUIRE_CUDA=ON \
      -DPython_EXECUTABLE="$py" -Dpybind11_DIR="$("$py" -m pybind11 --cmakedir)"
cmake --build build/cmake
cmake --install build/cmake

core=$(find "$prefix" -name '_core*.so' -path '*/gpuldpc/*')
[ -n "$core" ] || { echo "check_cmake_install: no gpuldpc/_core*.so under $prefix" >&2; exit 1; }
pydir=$(dirname "$(dirname "$core")")
fail=0
for cu in kernels/*.cu; do
    name=$(basename "$cu" .cu)
    [ -s "$pydir/gpuldpc/kernels/$name.fatbin" ] ||
        { echo "check_cmake_install: kernels/$name.cu was not installed as a fatbin" >&2; fail=1; }
done
for yml in grc/*.block.yml; do
    [ -f "$prefix/share/gnuradio/grc/blocks/$(basename "$yml")" ] ||
        { echo "check_cmake_install: $yml was not installed" >&2; fail=1; }
done
[ -f "$pydir/gnuradio/gpuldpc/__init__.py" ] ||
    { echo "check_cmake_install: the blocks (gnuradio/gpuldpc) were not installed" >&2; fail=1; }
((fail == 0)) || exit 1

# Import from the install tree only (-S: no site-packages, so not the venv's
# copy), plus the system directories numpy/scipy and gnuradio live in.
sys_path=$("$py" -c "import os, numpy, scipy, gnuradio; print(os.pathsep.join(sorted({os.path.dirname(os.path.dirname(m.__file__)) for m in (numpy, scipy, gnuradio)})))")
PYTHONPATH="$pydir:$sys_path" "$py" -S - "$pydir" <<'PY'
import sys
import numpy
import gpuldpc, gpuldpc._core
from gnuradio import gpuldpc as blocks
from gpuldpc import _native
for module in (gpuldpc, gpuldpc._core, blocks):
    assert module.__file__.startswith(sys.argv[1]), f"{module.__name__} came from {module.__file__}"
code = gpuldpc.codes.get("wifi-648-1/2")
assert code.is_codeword(_native.dual_diagonal_encoder(code).encode(numpy.ones((1, code.k), "uint8"))).all()
print(f"check_cmake_install: OK, gpuldpc {gpuldpc.__version__} + _core + blocks + kernels in {sys.argv[1]}")
PY
