#!/usr/bin/env bash
# Installs everything gr-gpuldpc needs on Debian 12 and the project itself.
#
#   bash scripts/setup.sh            (as root, or with the packages already installed)
#
# 1. Debian packages (GNU Radio 3.10 with its development files, a C++17
#    compiler, CMake, Google Highway, NumPy/SciPy/Matplotlib from Debian):
#    only those missing are installed, so a second run needs no network.
# 2. A virtual environment .venv at the repository root, made from Debian's
#    /usr/bin/python3 with --system-site-packages: it sees GNU Radio's Python
#    bindings and Debian's NumPy 1.24 they are built against (a NumPy 2 in
#    the venv would break `from gnuradio import gr`).
# 3. The project with its test extras, `pip install ".[test]"`: scikit-build-core
#    runs CMakeLists.txt, which builds gpuldpc._core, compiles kernels/*.cu when
#    nvcc is on PATH and installs the GNU Radio blocks and GRC YAML into the venv.
#    The build directory build/<wheel tag> is kept, so a rerun only recompiles
#    what changed.  Extra CMake options: SKBUILD_CMAKE_DEFINE="NAME=VALUE;...".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

packages=(gnuradio gnuradio-dev cmake ninja-build g++ pkg-config python3-dev python3-venv
          python3-pip python3-numpy python3-scipy python3-matplotlib libhwy-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup.sh: missing Debian packages: ${missing[*]}" >&2
        echo "run this script as root, or first: sudo apt-get install ${missing[*]}" >&2
        exit 1
    fi
    echo "setup.sh: apt-get install ${missing[*]}"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

if [ ! -x .venv/bin/python ]; then
    echo "setup.sh: creating .venv from /usr/bin/python3 (with system site packages)"
    /usr/bin/python3 -m venv --system-site-packages .venv
fi
py=.venv/bin/python
# The build backend, once, so that later builds run offline without build isolation.
if ! "$py" -c "import scikit_build_core, pybind11" 2>/dev/null; then
    "$py" -m pip install --disable-pip-version-check "scikit-build-core>=0.10" "pybind11>=2.10"
fi
"$py" -m pip install --disable-pip-version-check --no-build-isolation ".[test]"

# The venv must still see GNU Radio and its NumPy.
"$py" - <<'PY'
import numpy
from gnuradio import gr
import gpuldpc
from gpuldpc import _native
assert _native.available(), _native.why_unavailable()
print(f"setup.sh: gpuldpc {gpuldpc.__version__} in {gpuldpc.__file__.rsplit('/', 1)[0]}, "
      f"GNU Radio {gr.version()}, NumPy {numpy.__version__}")
PY
