"""GPU arrays at the front door, without a GPU (issue 16 item 3): objects exposing
``__cuda_array_interface__`` or DLPack are read and checked before any launch, each wrong
argument named; the results' placement (``out_device``) follows the input.

The fakes here hold host memory: only the checks and the routing run, never a kernel.  The
device of a CUDA Array Interface pointer is asked of the backend (``device_ordinal``),
stubbed here.
"""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import device_arrays as da

CODE = gl.codes.get("wifi-648-1/2")
N = CODE.n


class FakeCai:
    """An object exposing only ``__cuda_array_interface__`` (version 3)."""

    def __init__(self, shape, typestr="<f4", strides=None, ptr=0x7f0000000000, stream=None, **extra):
        self.__cuda_array_interface__ = dict(shape=shape, typestr=typestr, data=(ptr, False), strides=strides,
                                             version=3, stream=stream, **extra)


class FakeDlpack:
    """A DLPack producer claiming CUDA device ``device`` for a host array's capsule (numpy's
    own DLPack export): the capsule is parsed for real."""

    def __init__(self, array, device=0):
        self.array, self.device, self.streams = array, device, []

    def __dlpack_device__(self):
        return 2, self.device               # kDLCUDA

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.array.__dlpack__()


def _check(obj, devices=(0,), ordinal=lambda p: 0, dtypes=(np.dtype(np.float32),)):
    return da.check(da.view(obj), CODE.name, ((N,),), dtypes, devices, ordinal)


def test_a_cuda_array_interface_is_read_and_checked():
    got = _check(FakeCai((5, N)))
    assert got.pointer == 0x7f0000000000 and got.shape == (5, N) and got.dtype == np.float32
    assert got.device == 0 and got.stream is None
    assert _check(FakeCai((N,))).shape == (1, N)                      # one frame, 1-D
    contiguous = (N * 4, 4)
    assert _check(FakeCai((5, N), strides=contiguous)).shape == (5, N)
    assert _check(FakeCai((1, N), strides=(12345, 4))).shape == (1, N)   # a size-1 axis: any stride
    assert _check(FakeCai((0, N), ptr=0)).shape == (0, N)


def test_wrong_dtype_shape_layout_device_alignment_each_named():
    with pytest.raises(TypeError, match=r"device LLRs must be float32 .* got float64.*llr_dtype="):
        _check(FakeCai((5, N), "<f8"))
    with pytest.raises(TypeError, match="device LLRs must be int8 for this decoder.*got float32"):
        _check(FakeCai((5, N)), dtypes=(np.dtype(np.int8),))
    with pytest.raises(ValueError, match=r"device LLRs must have shape \[batch, 648\], got \[5, 640\]"):
        _check(FakeCai((5, 640)))
    with pytest.raises(ValueError, match=r"must be C-contiguous.*strides \[4, 20\]"):
        _check(FakeCai((5, N), strides=(4, 20)))                      # a transposed view
    with pytest.raises(ValueError, match="must be C-contiguous"):
        _check(FakeCai((5, N), strides=(2 * N * 4, 4)))               # every other row
    with pytest.raises(ValueError, match=r"lie on GPU 1, this decoder runs on GPU\(s\) \[0\].*devices=\[1\]"):
        _check(FakeCai((5, N)), ordinal=lambda p: 1)
    with pytest.raises(ValueError, match="16-byte aligned address.*0x7f0000000008"):
        _check(FakeCai((5, N), ptr=0x7f0000000008))
    with pytest.raises(TypeError, match="with a mask"):
        _check(FakeCai((5, N), mask=object()))


def test_the_producer_stream_rule():
    assert _check(FakeCai((5, N), stream=None)).stream is None
    assert _check(FakeCai((5, N), stream=1)).stream is None          # legacy default: ordered already
    assert _check(FakeCai((5, N), stream=2)).stream == 2             # per-thread default: waited for
    assert _check(FakeCai((5, N), stream=0x5555)).stream == 0x5555
    with pytest.raises(ValueError, match="'stream'] is 0"):
        _check(FakeCai((5, N), stream=0))


def test_dlpack_capsules_are_read_by_hand():
    host = np.zeros((3, N), np.float32)
    obj = FakeDlpack(host, device=0)
    got = _check(obj, ordinal=lambda p: pytest.fail("DLPack names its device"))
    assert got.pointer == host.ctypes.data and got.shape == (3, N) and got.dtype == np.float32
    assert got.device == 0 and got.stream is None and obj.streams == [1]   # producer orders its stream
    q = np.zeros((2, N), np.int8)
    assert _check(FakeDlpack(q), dtypes=(np.dtype(np.int8),)).dtype == np.int8
    with pytest.raises(ValueError, match="must be C-contiguous"):
        _check(FakeDlpack(np.zeros((N, 3), np.float32).T))
    with pytest.raises(ValueError, match="lie on GPU 3"):
        _check(FakeDlpack(host, device=3))
    with pytest.raises(TypeError, match="must be float32.*got float16"):
        _check(FakeDlpack(host.astype(np.float16)))


def test_host_arrays_and_cpu_dlpack_are_not_device_arrays():
    assert da.view(np.zeros(3)) is None
    assert da.view([1.0, 2.0]) is None


class StubBackend:
    """A cuda-like backend: takes DeviceLLRs on GPU 0, records what it was handed."""

    device_ids = (0,)
    llr_dtypes = (np.dtype(np.float32),)

    def __init__(self):
        self.calls = []

    @staticmethod
    def device_ordinal(pointer):
        return 0

    def decode(self, arr, out=None, out_device=False):
        self.calls.append((arr, out, out_device))
        batch = arr.shape[0]
        z = np.zeros(batch, bool)
        return gl.decoders.DecodeResult(None, None, np.zeros(batch, np.int32), ~z, z)


@pytest.fixture
def stubbed():
    dec = gl.Decoder(CODE, backend="reference")
    dec._impl = StubBackend()
    return dec


def test_front_door_routes_device_arrays_and_results(stubbed):
    calls = stubbed._impl.calls
    stubbed.decode(FakeCai((4, N)))
    arr, out, on_gpu = calls[-1]
    assert isinstance(arr, da.DeviceLLR) and arr.shape == (4, N) and out is None and on_gpu
    stubbed.decode(FakeCai((4, N)), out_device=False)
    assert calls[-1][2] is False
    host_out = np.empty((4, N), np.uint8)
    stubbed.decode(FakeCai((4, N)), out=host_out)                     # out= given: results to it
    assert calls[-1][1] is host_out and calls[-1][2] is False
    stubbed.decode(np.zeros((2, N), np.float32), out_device=True)     # host in, GPU out
    assert isinstance(calls[-1][0], np.ndarray) and calls[-1][2]
    stubbed.decode_device(0x7f0000000000, 6)                          # the thin wrapper
    arr, _, on_gpu = calls[-1]
    assert arr.shape == (6, N) and arr.pointer == 0x7f0000000000 and arr.device == 0 and not on_gpu
    with pytest.raises(ValueError, match="frames must be an integer >= 1"):
        stubbed.decode_device(0x7f0000000000, 0)


def test_front_door_checks_before_the_backend_sees_anything(stubbed):
    for bad in (FakeCai((4, N), "<f8"), FakeCai((4, N), strides=(4, 16)), FakeCai((4, N + 1))):
        with pytest.raises((TypeError, ValueError)):
            stubbed.decode(bad)
        with pytest.raises((TypeError, ValueError)):
            stubbed.submit(bad)
    assert stubbed._impl.calls == []


def test_bit_llrs_the_front_would_negate_are_refused_on_the_gpu():
    """``positive_llr_bit=1`` for a backend that does not apply the sign itself (a shaped code, a
    GF(q) code's bit LLRs) negates a host copy; a GPU array gets none, so it is refused by name
    before the backend sees it."""
    dec = gl.Decoder(CODE, backend="reference", positive_llr_bit=1)
    dec._impl = StubBackend()
    with pytest.raises(ValueError, match="positive_llr_bit=1 negates a host copy of the bit LLRs for this "
                                         "decoder.*negate it on the GPU"):
        dec.decode(FakeCai((4, N)))
    with pytest.raises(ValueError, match="positive_llr_bit=1 negates a host copy"):
        dec.decode(FakeCai((N,)))                     # one frame, 1-D: bit LLRs too
    assert dec._impl.calls == []


def test_device_arrays_need_the_cuda_backend():
    dec = gl.Decoder(CODE, backend="reference")
    with pytest.raises(TypeError, match="a GPU array of LLRs needs the cuda backend; this decoder runs on "
                                        "'reference'.*tensor.cpu"):
        dec.decode(FakeCai((4, N)))
    with pytest.raises(TypeError, match="out_device=True needs the cuda backend"):
        dec.decode(np.zeros((1, N), np.float32), out_device=True)
    assert dec.decode(np.zeros((1, N), np.float32), out_device=False).bits.shape == (1, N)
    shaped = gl.Decoder(gl.codes.nr(500, 1000), backend="reference")
    with pytest.raises(TypeError, match="takes no shaped code"):
        shaped.decode(FakeCai((4, 1000)))
