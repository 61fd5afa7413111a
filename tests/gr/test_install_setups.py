"""Set-ups the install meets, and the one line each bad one gets.

scripts/find_cuda.sh (what scripts/setup.sh decides on a GPU machine) is run
over made-up folders; the CMake configure step over a made-up GNU Radio 3.9,
no C++ compiler, a compiler without C++17, and no Google Highway.
"""
import os
import shlex
import shutil
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BASH = shutil.which("bash")
CMAKE = shutil.which("cmake")
needs_cmake = pytest.mark.skipif(CMAKE is None or shutil.which("ninja") is None,
                                 reason="cmake and ninja are not installed")


def touch(path, executable=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 1\n")
    if executable:
        path.chmod(0o755)
    return str(path)


def find_cuda(bin_path, lib_path, **env):
    """Runs scripts/find_cuda.sh: (its assignments as a dict, its stderr lines)."""
    env = {"PATH": "/usr/bin:/bin", "GPULDPC_BIN_PATH": bin_path, "GPULDPC_LIB_PATH": lib_path, **env}
    env = {key: value for key, value in env.items() if value is not None}
    result = subprocess.run([BASH, os.path.join(REPO, "scripts", "find_cuda.sh")], env=env,
                            capture_output=True, text=True, check=True)
    found = dict(line.split("=", 1) for line in result.stdout.splitlines())
    return {key: shlex.split(value)[0] if shlex.split(value) else "" for key, value in found.items()}, \
        result.stderr.splitlines()


def test_no_driver_no_toolkit(tmp_path):
    found, said = find_cuda(str(tmp_path / "bin"), str(tmp_path / "lib"))
    assert found == {"cuda_driver": "", "cuda_libcuda": "", "cuda_nvcc": ""}
    assert said == []


def test_toolkit_without_driver_compiles_the_kernels(tmp_path):
    """CI's machine: nvcc, no GPU: the kernels are compiled, PyCUDA is not installed, nothing said."""
    nvcc = touch(tmp_path / "cuda" / "bin" / "nvcc", executable=True)
    found, said = find_cuda(str(tmp_path / "cuda" / "bin"), str(tmp_path / "lib"))
    assert found == {"cuda_driver": "", "cuda_libcuda": "", "cuda_nvcc": nvcc}
    assert said == []


def test_driver_without_toolkit_is_said_in_one_line(tmp_path):
    smi = touch(tmp_path / "bin" / "nvidia-smi", executable=True)
    libcuda = touch(tmp_path / "lib" / "libcuda.so.1")
    found, said = find_cuda(str(tmp_path / "bin"), str(tmp_path / "lib"))
    assert found == {"cuda_driver": smi, "cuda_libcuda": libcuda, "cuda_nvcc": ""}
    assert len(said) == 1
    assert said[0].startswith(f"setup.sh: NVIDIA driver found ({smi}) but no CUDA toolkit")
    assert "the cpu backend will be used" in said[0] and "run scripts/setup.sh again" in said[0]


@pytest.mark.skipif(shutil.which("nvcc", path="/usr/bin:/bin") is not None, reason="/usr/bin has an nvcc")
def test_driver_library_and_a_toolkit_off_path(tmp_path):
    """libcuda.so.1 alone shows the driver; nvcc comes from $CUDA_HOME/bin when PATH has none."""
    libcuda = touch(tmp_path / "lib" / "libcuda.so.1")
    nvcc = touch(tmp_path / "cuda-13.0" / "bin" / "nvcc", executable=True)
    found, said = find_cuda(None, str(tmp_path / "lib"), PATH="/usr/bin:/bin",
                            CUDA_HOME=str(tmp_path / "cuda-13.0"))
    assert found == {"cuda_driver": libcuda, "cuda_libcuda": libcuda, "cuda_nvcc": nvcc}
    assert said == []


def configure(tmp_path, *options, **env):
    """`cmake -S <repo> -B <tmp> -G Ninja <options>`: (exit status, output lines)."""
    result = subprocess.run([CMAKE, "-S", REPO, "-B", str(tmp_path / "build"), "-G", "Ninja", *options],
                            env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    return result.returncode, (result.stdout + result.stderr).splitlines()


def gpuldpc_lines(lines):
    """The lines CMake printed for gpuldpc's warnings and errors (status lines start with --)."""
    return [line.strip() for line in lines if line.strip().startswith("gpuldpc:")]


@needs_cmake
def test_gnu_radio_older_than_3_10(tmp_path):
    fake = tmp_path / "gnuradio-3.9"
    fake.mkdir()
    (fake / "GnuradioConfig.cmake").write_text("# GNU Radio 3.9 (made up)\n")
    (fake / "GnuradioConfigVersion.cmake").write_text(
        'set(PACKAGE_VERSION "3.9.2")\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n')
    status, lines = configure(tmp_path, f"-DGnuradio_DIR={fake}")
    assert status != 0
    assert gpuldpc_lines(lines) == [
        f"gpuldpc: GNU Radio 3.9.2 found ({fake}), the blocks need 3.10: install GNU Radio 3.10 "
        "(Debian 12, Ubuntu 22.04 or later), or configure with -DENABLE_GNURADIO=OFF for the core package alone"]


@needs_cmake
def test_no_cxx_compiler(tmp_path):
    broken = touch(tmp_path / "bin" / "c++", executable=True)      # exits 1 whatever it is asked
    status, lines = configure(tmp_path, CXX=broken)
    assert status != 0
    assert gpuldpc_lines(lines) == ["gpuldpc: no working C++ compiler found (a C++17 one is needed): "
                                    "apt-get install g++, or point CXX at one"]


@needs_cmake
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_cxx_compiler_without_cxx17(tmp_path):
    """g++ passing itself off as GCC 4.8.5 (which CMake knows has no C++17)."""
    old = tmp_path / "bin" / "g++-4.8"
    old.parent.mkdir()
    old.write_text("#!/bin/sh\nexec g++ -U__GNUC__ -D__GNUC__=4 -U__GNUC_MINOR__ -D__GNUC_MINOR__=8 "
                   '-U__GNUC_PATCHLEVEL__ -D__GNUC_PATCHLEVEL__=5 "$@"\n')
    old.chmod(0o755)
    status, lines = configure(tmp_path, CXX=str(old))
    assert status != 0
    assert gpuldpc_lines(lines) == [f"gpuldpc: {old} (GNU 4.8.5) has no C++17, which gpuldpc._core needs: "
                                    "use GCC 8 or later, or Clang 7 or later (CXX=...)"]


@needs_cmake
def test_no_highway_leaves_the_cpu_decoders_out(tmp_path):
    status, lines = configure(tmp_path, "-DENABLE_GNURADIO=OFF", "-DCMAKE_DISABLE_FIND_PACKAGE_hwy=ON")
    assert status == 0, "\n".join(lines)
    assert gpuldpc_lines(lines) == [
        "gpuldpc: Google Highway (hwy >= 1.0) not found: gpuldpc._core is built without the CPU decoders "
        "(Debian/Ubuntu: apt-get install libhwy-dev)"]
    rules = (tmp_path / "build" / "build.ninja").read_text()
    assert "lib/cpu_binary_decoder.cpp" not in rules and "lib/dual_diagonal_encoder.cpp" in rules
