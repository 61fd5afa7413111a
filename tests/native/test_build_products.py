"""What the build installs: every kernels/*.cu as a fatbin for sm_80 and sm_90
(+ PTX) when nvcc exists, and a clear reason when gpuldpc._core is missing."""
import os
import pathlib
import shutil
import struct
import subprocess
import sys

import numpy
import pytest
import scipy

from gpuldpc import _native

REPO = pathlib.Path(__file__).resolve().parents[2]
KERNELS = sorted(p.stem for p in (REPO / "kernels").glob("*.cu"))


def fatbin_entries(data: bytes) -> set:
    """(kind, sm) of each entry of a CUDA fatbin: kind "elf" (machine code) or "ptx".

    Layout: a 16-byte header (magic 0xBA55ED50, version u16, header size u16,
    payload size u64), then entries, each a header (kind u16: 1 PTX, 2 ELF;
    u16; header size u32; payload size u64; ...; sm u32 at byte 28) and its payload.
    """
    magic, _, header, size = struct.unpack_from("<IHHQ", data, 0)
    assert magic == 0xBA55ED50, f"not a fatbin (magic {magic:#x})"
    entries, off = set(), header
    while off < header + size:
        kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, off)
        (sm,) = struct.unpack_from("<I", data, off + 28)
        entries.add(({1: "ptx", 2: "elf"}[kind], sm))
        off += entry_header + payload
    return entries


@pytest.mark.skipif(shutil.which(os.environ.get("CUDACXX", "nvcc")) is None,
                    reason="no nvcc here, so the build compiled no kernels")
@pytest.mark.parametrize("name", KERNELS)
def test_kernel_fatbin_installed(native_core, name):
    path = _native.kernel_fatbin(name)
    assert path is not None, f"kernels/{name}.cu has no installed fatbin although nvcc exists"
    assert {("elf", 80), ("elf", 90), ("ptx", 90)} <= fatbin_entries(path.read_bytes())


def test_kernels_exist():
    assert KERNELS, "kernels/ holds no .cu file"


def test_missing_core_is_explained(tmp_path):
    """A source tree on PYTHONPATH has no _core: the reason names the tree and the fix."""
    source = REPO / "python"
    if list((source / "gpuldpc").glob("_core*")):
        pytest.skip("this source tree holds an in-place build of _core")
    # -S: no site-packages (nor an editable install's import hook), only the
    # source tree and the directories numpy and scipy come from.
    path = [str(source)] + [str(pathlib.Path(m.__file__).parents[1]) for m in (numpy, scipy)]
    out = subprocess.run(
        [sys.executable, "-S", "-c", "from gpuldpc import _native; print(_native.available()); "
                                     "print(_native.why_unavailable())"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(path)}, cwd=tmp_path,
        capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "False"
    assert out[1].startswith(f"gpuldpc._core is not built: this gpuldpc is the uncompiled copy in "
                             f"{source / 'gpuldpc'}")
    assert "scripts/setup.sh" in out[1]


def test_features_left_out_are_explained(native_core, monkeypatch):
    """A build without Google Highway has no CPU decoders; asking for them says why."""
    import gpuldpc as gl

    if os.environ.get("CI"):            # scripts/setup.sh installs libhwy-dev: everything is built
        assert dict(native_core.without) == {}
    monkeypatch.setattr(native_core, "without", {"cpu_decoders": "Google Highway (libhwy-dev) was not found"})
    with pytest.raises(_native.NativeModuleMissing,
                       match=r"built without cpu_decoders: Google Highway \(libhwy-dev\) was not found; "
                             r"install it and rebuild"):
        _native.core("cpu_decoders")
    assert _native.core() is native_core
    code = gl.codes.get("wifi-648-1/2")
    with pytest.raises(gl.BackendUnavailable, match="built without cpu_decoders"):
        gl.Decoder(code, backend="cpu")
    assert gl.Decoder(code, backend="auto").backend in ("cuda", "reference")
