#!/usr/bin/env bash
# Installs gr-gpuldpc on Debian 12 the way GNU Radio out-of-tree modules are
# installed, plus a virtual environment for the tests.
#
#   bash scripts/setup.sh            (as root, or with the packages already installed)
#
# 1. Debian packages (GNU Radio 3.10 with its development files and the GTK 3
#    data GNU Radio Companion needs, a C++17 compiler, CMake, Google Highway,
#    pybind11, NumPy/SciPy/Matplotlib from Debian): only those missing are
#    installed, so a second run needs no network.
# 2. GPU machines (an NVIDIA driver: nvidia-smi or libcuda.so.1, see
#    scripts/find_cuda.sh): the CUDA toolkit's nvcc compiles the kernels, and
#    PyCUDA is built against that toolkit for /usr/bin/python3 (GNU Radio's
#    Python; the venv sees it too).  A driver without a toolkit: one line says
#    so, and the cpu backend is used.
# 3. The GNU Radio way, the CMake commands of docs/build.md as written:
#    cmake -B build -G Ninja && cmake --build build && cmake --install build
#    into GNU Radio's prefix /usr/local: the Python packages go where
#    /usr/bin/python3 imports from (/usr/local/lib/python3.11/dist-packages),
#    the GRC YAML to /usr/local/share/gnuradio/grc/blocks, which Debian's GRC
#    reads (/etc/gnuradio/conf.d/grc.conf).  So gnuradio-companion, grcc and
#    the flowgraphs they generate see the blocks with no environment variables.
#    `cmake --build build --target uninstall` removes them again.
# 4. The tests' virtual environment .venv, made from /usr/bin/python3 with
#    --system-site-packages (it sees GNU Radio and Debian's NumPy 1.24; a NumPy 2
#    there would break `from gnuradio import gr`), holding its own copy of the
#    project: `pip install ".[test]"` (scikit-build-core, the same CMakeLists.txt,
#    pip's newer pybind11, build folder build/<wheel tag>).  Its site-packages
#    come before /usr/local on its sys.path, so the venv imports its own copy.
#
# Every build folder is kept: a rerun only recompiles what changed.
# Extra CMake options for the venv's build: SKBUILD_CMAKE_DEFINE="NAME=VALUE;...".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# apt_install <package>...: installs those not installed yet (as root; else names them and stops)
apt_install() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup.sh: missing Debian packages: ${missing[*]}; run this script as root, or first:" \
             "sudo apt-get install ${missing[*]}" >&2
        exit 1
    fi
    echo "setup.sh: apt-get install ${missing[*]}"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

# gir1.2-gtk-3.0: gnuradio-companion's GTK 3 (Debian 12's gnuradio package does not pull it in,
# and without it the GUI stops at "Namespace Gtk not available").
apt_install gnuradio gnuradio-dev gir1.2-gtk-3.0 cmake ninja-build g++ pkg-config pybind11-dev python3-dev \
            python3-venv python3-pip python3-numpy python3-scipy python3-matplotlib libhwy-dev

eval "$(bash scripts/find_cuda.sh)"
if [ -n "$cuda_nvcc" ]; then
    export CUDACXX=${CUDACXX:-$cuda_nvcc}        # CMake compiles kernels/*.cu with it
fi
if [ -n "$cuda_driver" ] && [ -n "$cuda_nvcc" ] && ! /usr/bin/python3 -c "import pycuda.driver" 2>/dev/null; then
    if [ "$(id -u)" -eq 0 ]; then
        apt_install python3-pytools python3-mako python3-platformdirs python3-setuptools python3-wheel
        bash scripts/install_pycuda.sh "$cuda_nvcc" "$cuda_libcuda"
    else
        echo "setup.sh: not root, so PyCUDA is not installed (the cpu backend will be used): run" \
             "sudo bash scripts/install_pycuda.sh $cuda_nvcc $cuda_libcuda" >&2
    fi
fi

cmake -B build -G Ninja
cmake --build build
if [ "$(id -u)" -eq 0 ]; then
    cmake --install build
else
    echo "setup.sh: not root, so not installed for GNU Radio Companion: run sudo cmake --install build" >&2
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

# Which copy each Python sees: GNU Radio's (a login shell, no environment
# variables) the system install, the venv its own.
where='import gpuldpc, gnuradio.gpuldpc as b, numpy; from gnuradio import gr; from gpuldpc import _native
assert _native.available(), _native.why_unavailable()
print(f"gpuldpc {gpuldpc.__version__} from {gpuldpc.__file__.rsplit(chr(47), 2)[0]}, blocks from",
      f"{b.__file__.rsplit(chr(47), 3)[0]} (GNU Radio {gr.version()}, NumPy {numpy.__version__})")'
if [ "$(id -u)" -eq 0 ]; then
    echo "setup.sh: /usr/bin/python3: $(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME" LANG=C.UTF-8 \
                                        /usr/bin/python3 -c "$where")"
fi
echo "setup.sh: .venv/bin/python: $("$py" -c "$where")"
