"""The compiled parts of the package: ``gpuldpc._core`` and the CUDA fatbins.

Both are built by CMake (``pip install .``, ``scripts/setup.sh`` or
``cmake -B build && cmake --build build && cmake --install build``, see
docs/build.md).  Importing gpuldpc never fails for want of them: a source
tree on ``PYTHONPATH`` has neither, and the numpy paths still work.  Code that
needs them asks here and gets either the module or an exception that says why
it is missing and how to build it.

* :func:`core` -- the pybind11 module ``gpuldpc._core`` (lib/, include/gpuldpc/);
* :func:`dual_diagonal_encoder` -- its linear-time 802.11n/802.16e encoder for a
  :class:`~gpuldpc.codes.code.Code`;
* :func:`kernel_fatbin` -- the path of a compiled ``kernels/<name>.cu``.
"""
from __future__ import annotations

import importlib
import importlib.resources
import pathlib

try:
    _CORE, _CORE_ERROR = importlib.import_module(f"{__package__}._core"), None
except ImportError as exc:  # not built, or built for another interpreter
    _CORE, _CORE_ERROR = None, exc

__all__ = ["NativeModuleMissing", "available", "why_unavailable", "core",
           "dual_diagonal_encoder", "kernel_fatbin"]


class NativeModuleMissing(ImportError):
    """``gpuldpc._core`` cannot be imported (the message says why and how to build it).

    An ImportError, so the decoder front door treats the ``cpu`` backend as
    unavailable and ``backend="auto"`` moves on.
    """


def available() -> bool:
    """True when ``gpuldpc._core`` was imported."""
    return _CORE is not None


def why_unavailable() -> str | None:
    """None when ``gpuldpc._core`` is present, else the reason and the fix."""
    if _CORE is not None:
        return None
    where = pathlib.Path(__file__).resolve().parent
    if isinstance(_CORE_ERROR, ModuleNotFoundError) and _CORE_ERROR.name == f"{__package__}._core":
        return (f"gpuldpc._core is not built: this gpuldpc is the uncompiled copy in {where} "
                "(a source tree on PYTHONPATH?); build and install it with scripts/setup.sh "
                "or `pip install .` (see README.md)")
    return (f"gpuldpc._core in {where} failed to import ({_CORE_ERROR}); it was probably built "
            "for another Python or another version of the sources: reinstall with "
            "scripts/setup.sh or `pip install .`")


def core(feature: str | None = None):
    """Return the ``gpuldpc._core`` module, or raise :class:`NativeModuleMissing`.

    ``feature`` names a group of the module that a build may leave out
    (``"cpu_decoders"``: needs Google Highway); when this build lacks it, the
    exception gives the reason recorded in ``_core.without``.
    """
    if _CORE is None:
        raise NativeModuleMissing(why_unavailable()) from _CORE_ERROR
    if feature is not None and feature in _CORE.without:
        raise NativeModuleMissing(f"gpuldpc._core was built without {feature}: {_CORE.without[feature]}; "
                                  "install it and rebuild (scripts/setup.sh or `pip install .`)")
    return _CORE


def dual_diagonal_encoder(code):
    """The compiled linear-time encoder of a WiFi/WiMAX code.

    Returns ``gpuldpc._core.DualDiagonalEncoder(code.base, code.z)``, whose
    ``encode(info uint8 [batch, k]) -> uint8 [batch, n]`` equals
    ``code.encode`` and runs without the GIL.

    Raises
    ------
    ValueError
        ``code`` is not an 802.11n/802.16e code (``code.standard``).
    NativeModuleMissing
        ``gpuldpc._core`` is not built.
    """
    if code.standard not in ("wifi", "wimax") or code.base is None:
        raise ValueError(f"code {code.name!r}: the dual-diagonal encoder needs an IEEE 802.11n or "
                         f"802.16e code (code.standard is {code.standard!r}); use code.encode")
    return core().DualDiagonalEncoder(code.base, code.z)


def kernel_fatbin(name: str) -> pathlib.Path | None:
    """Path of the installed fatbin of ``kernels/<name>.cu``, or None when it was not built.

    CMake compiles every kernel with nvcc for sm_80 and sm_90 (+ PTX) when
    nvcc is present at build time and installs it as
    ``gpuldpc/kernels/<name>.fatbin`` (cmake/GpuldpcKernels.cmake); this works
    for a wheel, an editable install and a ``cmake --install``.
    """
    path = importlib.resources.files(__package__) / "kernels" / f"{name}.fatbin"
    if not path.is_file():
        return None
    return pathlib.Path(str(path))
