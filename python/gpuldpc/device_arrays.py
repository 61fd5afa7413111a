"""LLR arrays that already lie in GPU memory, as ``gl.Decoder.decode``/``submit`` take them.

Any object exposing DLPack (``__dlpack__``/``__dlpack_device__``: PyTorch, CuPy, JAX, ...)
or the CUDA Array Interface (``__cuda_array_interface__``: CuPy, PyTorch, Numba, PyCUDA
``GPUArray``) is read where it lies: no host copy, and neither torch nor cupy is imported.
:func:`view` reads the pointer, shape, dtype, strides, device and stream of such an object
into a :class:`DeviceLLR` (DLPack first when the producer offers both and says the memory
is CUDA device or managed memory; DLPack capsules are read by hand, :class:`_DLTensor`);
:func:`check` validates it against a decoder before anything is launched: dtype, shape,
C-contiguity, device, 16-byte alignment, each a TypeError/ValueError naming the fix.

The producer's stream (when the decoder may read the values) -- the rule:

* the decoder's streams are *blocking* CUDA streams, so everything queued on the legacy
  default stream before the call (CuPy's and PyTorch's default stream) is done before the
  decoder reads;
* DLPack: ``__dlpack__(stream=1)`` asks the producer to order its current stream before the
  legacy default stream (the DLPack/array-API protocol), so any producer stream is safe;
* CUDA Array Interface v3 with a ``stream`` (CuPy): the decoder's streams wait for that
  stream (an event, on the GPU; the host does not wait);
* CUDA Array Interface without a stream (v2, Numba and PyCUDA arrays): the values must be
  ready -- written on the legacy default stream, or that stream synchronized by the caller.

This module imports no CUDA library; the device of a CUDA Array Interface pointer is asked
of the backend (``device_ordinal``, :func:`gpuldpc.cuda.device_memory.device_ordinal`).
"""
from __future__ import annotations

import ctypes
from typing import NamedTuple

import numpy as np

ALIGNMENT = 16          # the kernels read LLR rows by vectors of up to 16 bytes
_DL_CUDA, _DL_CUDA_MANAGED = 2, 13
_DL_KINDS = {0: "i", 1: "u", 2: "f"}
_STREAM_LEGACY = 1


class DeviceLLR(NamedTuple):
    """LLRs in GPU memory: ``pointer`` to rows of ``shape[1:]`` elements of ``dtype``.

    ``device``: the GPU's ordinal (None until :func:`check` looked it up); ``stream``: a
    producer stream the decoder must wait for (None: none, see the module docstring);
    ``keep``: what keeps the memory alive until the decode is done (the producer's object,
    the DLPack capsule)."""

    pointer: int
    shape: tuple
    dtype: np.dtype
    strides: tuple | None
    device: int | None
    stream: int | None
    keep: object

    @property
    def ndim(self) -> int:
        return len(self.shape)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    """``DLTensor`` of dlpack.h (v0.x and v1.x alike); an unversioned ``DLManagedTensor``
    (capsule name "dltensor") starts with it."""

    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def view(obj) -> DeviceLLR | None:
    """The :class:`DeviceLLR` of a GPU array, or None for anything else (host arrays,
    lists: the host path takes them)."""
    dl_device = getattr(obj, "__dlpack_device__", None)
    if dl_device is not None and hasattr(obj, "__dlpack__"):
        kind, ordinal = dl_device()
        if int(kind) in (_DL_CUDA, _DL_CUDA_MANAGED):
            return from_dlpack(obj, int(ordinal))
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return from_cuda_array_interface(obj, cai)
    return None


def from_cuda_array_interface(obj, cai: dict) -> DeviceLLR:
    """A CUDA Array Interface dict (versions 0..3) read: strides in bytes, no device field."""
    if cai.get("mask") is not None:
        raise TypeError("device LLRs with a mask (__cuda_array_interface__['mask']) are not taken; "
                        "fill the masked entries (e.g. with 0, an erasure) first")
    stream = cai.get("stream")
    if stream == 0:
        raise ValueError("__cuda_array_interface__['stream'] is 0, which the interface forbids "
                         "(1: legacy default stream, 2: per-thread default stream)")
    pointer = int(cai["data"][0] or 0)
    strides = None if cai.get("strides") is None else tuple(int(s) for s in cai["strides"])
    return DeviceLLR(pointer, tuple(int(s) for s in cai["shape"]), np.dtype(cai["typestr"]), strides,
                     None, None if stream in (None, _STREAM_LEGACY) else int(stream), obj)


def from_dlpack(obj, device: int) -> DeviceLLR:
    """A DLPack producer read by hand (the capsule's ``DLTensor``; strides in elements).  The
    producer orders its stream before the legacy default stream (``stream=1``)."""
    try:
        capsule = obj.__dlpack__(stream=_STREAM_LEGACY)
    except TypeError:                               # a producer without the stream argument
        capsule = obj.__dlpack__()
    t = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    if code not in _DL_KINDS or lanes != 1 or bits % 8:
        raise TypeError(f"device LLRs of DLPack dtype (code {code}, bits {bits}, lanes {lanes}) are not taken; "
                        "floating point (or int8) LLRs are")
    dtype = np.dtype(f"{_DL_KINDS[code]}{bits // 8}")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = None if not t.strides else tuple(t.strides[i] * dtype.itemsize for i in range(t.ndim))
    return DeviceLLR(int(t.data or 0) + int(t.byte_offset), shape, dtype, strides, device, None, (obj, capsule))


def from_pointer(pointer: int, frames: int, row_shape: tuple, dtype, keep) -> DeviceLLR:
    """Rows at a raw device pointer (``Decoder.decode_device``): ``frames`` rows of
    ``row_shape``, C-contiguous."""
    if isinstance(frames, bool) or not isinstance(frames, (int, np.integer)) or frames < 1:
        raise ValueError(f"frames must be an integer >= 1, got {frames!r}")
    return DeviceLLR(int(pointer), (int(frames),) + tuple(row_shape), np.dtype(dtype), None, None, None, keep)


def _contiguous(shape, strides, itemsize) -> bool:
    if strides is None:
        return True
    want = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent > 1 and stride != want:
            return False
        want *= extent
    return True


def check(llr: DeviceLLR, code_name: str, shapes: tuple, dtypes: tuple, devices, ordinal) -> DeviceLLR:
    """``llr`` validated for a decoder of ``code_name`` taking rows of one of ``shapes``,
    one of ``dtypes``, on one of ``devices`` (``ordinal(pointer)``: the device a pointer
    lies on); returned with shape [batch, ...] and its device.  Raises before any launch."""
    if llr.dtype not in dtypes:
        names = " or ".join(str(np.dtype(d)) for d in dtypes)
        raise TypeError(f"code {code_name!r}: device LLRs must be {names} for this decoder (no conversion is "
                        f"made on the GPU), got {llr.dtype}; convert them first (tensor.float(), "
                        f"x.astype(cupy.float32)) or build the decoder with llr_dtype= matching them")
    shape = llr.shape
    if shape in shapes:
        shape = (1,) + shape
    if len(shape) < 2 or shape[1:] not in shapes:
        wanted = " or ".join("[batch, " + ", ".join(map(str, s)) + "]" for s in shapes)
        raise ValueError(f"code {code_name!r}: device LLRs must have shape {wanted}, got {list(llr.shape)}")
    if not _contiguous(llr.shape, llr.strides, llr.dtype.itemsize):
        raise ValueError(f"code {code_name!r}: device LLRs must be C-contiguous (rows one after the other), "
                         f"got strides {list(llr.strides)} (bytes) for shape {list(llr.shape)}; "
                         "make a contiguous copy on the GPU first (tensor.contiguous(), cupy.ascontiguousarray)")
    if shape[0] == 0:
        return llr._replace(shape=shape, strides=None)
    device = llr.device if llr.device is not None else ordinal(llr.pointer)
    if device not in devices:
        raise ValueError(f"code {code_name!r}: the device LLRs lie on GPU {device}, this decoder runs on "
                         f"GPU(s) {list(devices)}; copy them there or build the decoder with devices=[{device}]")
    if llr.pointer % ALIGNMENT:
        raise ValueError(f"code {code_name!r}: device LLRs must start at a {ALIGNMENT}-byte aligned address "
                         f"(the kernels read rows by vectors), got {llr.pointer:#x}; pass a view starting at a "
                         "row whose offset is a multiple of 16 bytes, or a copy")
    return llr._replace(shape=shape, strides=None, device=device)
