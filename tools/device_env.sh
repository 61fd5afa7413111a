# Source on the GPU machine at the start of every command (carry .device):
#   source tools/device_env.sh && ...
# PyCUDA and the carried wheels (.device/gpu-env.sh), Highway unpacked under /tmp/hwy,
# and python/ on PYTHONPATH; `gpuldpc_build_core` builds gpuldpc._core in place.
# a PyCUDA build brought back from an earlier call (.device/site-py312.tar.gz, made by
# `gpuldpc_save_site`) saves the minute of building it on a fresh machine
if [ ! -d /tmp/site/pycuda ] && [ -f .device/site-py312.tar.gz ]; then
  mkdir -p /tmp/site && tar xzf .device/site-py312.tar.gz -C /tmp/site
fi
source .device/gpu-env.sh || return 1
# carried fatbins (bash tools/build_kernels.sh) instead of building them here
[ -d .gpukernels ] && [ -z "${GPULDPC_KERNEL_DIR:-}" ] && export GPULDPC_KERNEL_DIR=$PWD/.gpukernels
if [ ! -d /tmp/hwy/usr ]; then
  for deb in .device/libhwy*.deb; do dpkg -x "$deb" /tmp/hwy; done
fi
export CMAKE_PREFIX_PATH=/tmp/hwy/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
export LD_LIBRARY_PATH=/tmp/hwy/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$PWD/python:$PYTHONPATH
gpuldpc_build_core() {   # _core, and the kernel fatbins unless carried ($GPULDPC_KERNEL_DIR), into python/gpuldpc
  local only=()
  [ -n "${GPULDPC_KERNEL_DIR:-}" ] && only=(--target _core)   # the C++ alone: a minute, not five
  cmake -S . -B /tmp/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF \
      -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" > /tmp/build.log 2>&1 &&
    cmake --build /tmp/build "${only[@]}" >> /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; return 1; }
  cp /tmp/build/_core*.so python/gpuldpc/ && mkdir -p python/gpuldpc/kernels &&
    find /tmp/build -name '*.fatbin' -exec cp {} python/gpuldpc/kernels/ \;
}
gpuldpc_save_site() {    # PyCUDA as built here, for .device/ (copy it there from $OUT)
  tar czf "$OUT/site-py312.tar.gz" -C /tmp/site .
}
