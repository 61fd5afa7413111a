"""CuPy and PyTorch arrays in and out of ``gl.Decoder`` on the GPU (issue 16 item 3).

A device array decodes exactly as the same values from a NumPy array (bits, iterations,
valid); ``out_device`` results wrap into CuPy/PyTorch without a copy; wrong dtype, layout,
shape or device raise before any launch; the producer-stream rule holds (values written on
a side stream just before the call are the ones decoded).  Each library is skipped if absent.
"""
import numpy as np
import pytest

import gpuldpc as gl

pytestmark = pytest.mark.cuda
CODE = "wimax-2304-1/2"
FRAMES = 3000


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    return torch


def _cupy():
    return pytest.importorskip("cupy")


def _values(frames, dtype):
    """Host LLRs: (codewords, LLRs of ``dtype``; int8: 4 steps per unit)."""
    rng = np.random.default_rng(7)
    code = gl.codes.get(CODE)
    cw = code.encode(rng.integers(0, 2, (frames, code.k), dtype=np.uint8))
    llr = gl.channel.transmit(code, cw, 1.6, rng)
    if dtype == "int8":
        llr = np.clip(np.round(llr * 4), -127, 127).astype(np.int8)
    return cw, llr


def _decoder(dtype, **kw):
    if dtype == "int8":
        kw.update(precision="float16", llr_dtype="int8", llr_scale=0.25)
    return gl.Decoder(gl.codes.get(CODE), backend="cuda", devices=[0], max_iterations=10, **kw)


class CaiOnly:
    """A producer exposing only ``__cuda_array_interface__`` (as Numba and PyCUDA arrays do):
    torch and CuPy arrays go by DLPack, which the decoder prefers."""

    def __init__(self, array):
        self.array = array
        self.__cuda_array_interface__ = array.__cuda_array_interface__

    def __getitem__(self, index):
        return CaiOnly(self.array[index])


def _host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def _same(got, want):
    for name in ("bits", "info", "iterations"):
        np.testing.assert_array_equal(_host(getattr(got, name)), getattr(want, name), err_msg=name)
    np.testing.assert_array_equal(got.valid, want.valid)
    np.testing.assert_array_equal(got.bad_llr, want.bad_llr)


@pytest.mark.parametrize("lib", ["torch", "cupy", "torch by CAI", "cupy by CAI"])
@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_device_input_equals_host_input(cuda, lib, dtype):
    cw, llr = _values(FRAMES, dtype)
    dec = _decoder(dtype)
    want = dec.decode(llr)
    assert want.valid.mean() > 0.5
    if lib.startswith("torch"):
        dev = _torch().from_numpy(llr).cuda()
    else:
        dev = _cupy().asarray(llr)
    if lib.endswith("CAI"):
        dev = CaiOnly(dev)
    _same(dec.decode(dev, out_device=False), want)                      # host results
    on_gpu = dec.decode(dev)                                            # default: results stay on the GPU
    assert type(on_gpu.bits).__name__ == "DeviceArray" and isinstance(on_gpu.valid, np.ndarray)
    _same(on_gpu, want)
    _same(dec.submit(dev).result(), want)
    _same(dec.decode(dev[0]), dec.decode(llr[0]))                       # one frame, 1-D
    _same(dec.decode(dev[16:48]), dec.decode(llr[16:48]))                # a view at a row offset
    dec.close()


def test_out_device_wraps_without_a_copy(cuda):
    torch, cupy = _torch(), _cupy()
    _, llr = _values(FRAMES, "float32")
    dec = _decoder("float32")
    want = dec.decode(llr)
    res = dec.decode(torch.from_numpy(llr).cuda())
    t_bits = torch.as_tensor(res.bits, device="cuda")
    c_bits = cupy.asarray(res.bits)
    assert t_bits.data_ptr() == res.bits.ptr == c_bits.data.ptr              # the same memory
    assert t_bits.dtype == torch.uint8 and tuple(t_bits.shape) == (FRAMES, 2304)
    np.testing.assert_array_equal(t_bits.cpu().numpy(), want.bits)
    np.testing.assert_array_equal(cupy.asnumpy(c_bits), want.bits)
    t_info = torch.as_tensor(res.info, device="cuda")
    assert t_info.data_ptr() == res.bits.ptr and tuple(t_info.shape) == (FRAMES, 1152)
    np.testing.assert_array_equal(t_info.cpu().numpy(), want.info)
    t_it = torch.as_tensor(res.iterations, device="cuda")
    assert t_it.dtype == torch.int32 and t_it.data_ptr() == res.iterations.ptr
    np.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(res.iterations)), want.iterations)
    ptr = res.bits.ptr
    del res, c_bits, t_info, t_it
    np.testing.assert_array_equal(t_bits.cpu().numpy(), want.bits)     # the tensor keeps the memory
    assert dec.decode(llr, out_device=True).bits.ptr != ptr            # not handed out again meanwhile
    dec.close()


def test_out_device_and_the_bad_llr_policy(cuda):
    torch = _torch()
    _, llr = _values(64, "float32")
    llr[5, 3] = np.nan
    dev = torch.from_numpy(llr).cuda()
    with pytest.raises(ValueError, match=r"NaN or infinite values \(frames \[5\]\)"):
        _decoder("float32").decode(dev)
    res = _decoder("float32", on_bad_llr="erase").decode(dev)
    assert res.bad_llr.tolist() == [i == 5 for i in range(64)]


def test_bad_device_arrays_raise_before_any_launch(cuda, monkeypatch):
    torch, cupy = _torch(), _cupy()
    _, llr = _values(64, "float32")
    dec = _decoder("float32")
    launched = []
    eng = dec._impl.decoder.engines[0]
    monkeypatch.setattr(eng, "issue", lambda *a: launched.append(a))
    t = torch.from_numpy(llr).cuda()
    c = cupy.asarray(llr)
    with pytest.raises(TypeError, match="device LLRs must be float32.*got float64"):
        dec.decode(t.double())
    with pytest.raises(TypeError, match="device LLRs must be float32.*got float16"):
        dec.decode(c.astype(cupy.float16))
    with pytest.raises(ValueError, match="C-contiguous"):
        dec.decode(torch.zeros((2304, 8), device="cuda").t())          # transposed
    with pytest.raises(ValueError, match="C-contiguous"):
        dec.decode(c[::2])                                             # strided rows
    with pytest.raises(ValueError, match=r"shape \[batch, 2304\], got \[64, 2300\]"):
        dec.decode(t[:, :2300].contiguous())
    with pytest.raises(ValueError, match="16-byte aligned"):
        dec.decode(torch.zeros(2304 * 2 + 1, device="cuda")[1:].view(2, 2304))
    assert launched == []


def test_another_gpu_raises_before_any_launch(cuda):
    torch = _torch()
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU")
    dec = _decoder("float32")
    with pytest.raises(ValueError, match=r"lie on GPU 1, this decoder runs on GPU\(s\) \[0\]"):
        dec.decode(torch.zeros((4, 2304), device="cuda:1"))


def test_the_producer_stream_rule(cuda):
    """Values written on a side stream just before the call (behind a long sleep there) are
    the ones decoded: DLPack (torch: the producer orders its stream) and CAI v3 (CuPy: the
    decoder's streams wait for the named stream)."""
    torch, cupy = _torch(), _cupy()
    _, llr = _values(FRAMES, "float32")
    dec = _decoder("float32")
    want = dec.decode(llr)
    src = torch.from_numpy(llr).cuda()
    side = torch.cuda.Stream()
    for _ in range(3):
        dst = torch.zeros_like(src)
        with torch.cuda.stream(side):
            torch.cuda._sleep(50_000_000)                              # tens of ms on the side stream
            dst.copy_(src)
            res = dec.decode(dst, out_device=False)                    # the current stream is `side`
        _same(res, want)
    csrc = cupy.asarray(llr)
    spin = cupy.RawKernel(r"""extern "C" __global__ void spin(long long cycles)
        { const long long t0 = clock64(); while (clock64() - t0 < cycles) {} }""", "spin")
    cside = cupy.cuda.Stream(non_blocking=True)
    for _ in range(3):
        with cside:
            cdst = cupy.zeros_like(csrc)
            spin((1,), (1,), (np.int64(50_000_000),))                  # tens of ms on the side stream
            cdst[...] = csrc
            via_cai = CaiOnly(cdst)
            assert via_cai.__cuda_array_interface__["stream"] == cside.ptr
            res = dec.decode(via_cai, out_device=False)                # the decoder waits for cside
        _same(res, want)
        with cside:
            cdst = cupy.zeros_like(csrc)
            spin((1,), (1,), (np.int64(50_000_000),))
            cdst[...] = csrc
            res = dec.decode(cdst, out_device=False)                   # DLPack: CuPy orders cside
        _same(res, want)


@pytest.mark.parametrize("name, dtype", [("nr-bg2-filler", "int8"), ("nr-bg1", "float32"), ("ccsds-c2", "int8")])
def test_shaped_codes_take_gpu_arrays_of_their_received_llrs(cuda, name, dtype):
    """A shaped code (5G NR, CCSDS C2) whose E LLRs the GPU recovers takes them as a GPU array:
    the same results as the host array, on the host or on the GPU (``info`` a view of the
    decoded bits at the code's information positions: after C2's 18 fill bits); the latency
    preset of a resident kernel (host recovery) and ``positive_llr_bit=1`` (a negated host copy)
    refuse them by name; the latency preset's launched kernels take them too."""
    torch = _torch()
    code = {"nr-bg2-filler": lambda: gl.codes.nr(1001, 1500), "nr-bg1": lambda: gl.codes.nr(8448, 9504),
            "ccsds-c2": lambda: gl.codes.get("ccsds-c2")}[name]()
    rng = np.random.default_rng(8)
    info = rng.integers(0, 2, (150, code.k), dtype=np.uint8)
    ebn0_db = {"nr-bg2-filler": 2.5, "nr-bg1": 4.5, "ccsds-c2": 3.6}[name]      # BG1 block: rate 8/9
    llr = gl.channel.transmit(code, code.encode(info), ebn0_db, rng)
    kw = dict(backend="cuda", devices=[0], max_iterations=6, streams=2, chunk_frames=64)
    if dtype == "int8":
        llr = np.clip(np.round(llr * 4), -127, 127).astype(np.int8)
        kw.update(precision="float16", llr_dtype="int8", llr_scale=0.25)
    dec = gl.Decoder(code, **kw)
    want = dec.decode(llr)
    assert 0 < want.valid.sum() and (want.info != info).any(axis=1).mean() < 0.9
    dev = torch.from_numpy(llr).cuda()
    _same(dec.decode(dev, out_device=False), want)
    on_gpu = dec.decode(dev)
    assert type(on_gpu.bits).__name__ == "DeviceArray" and on_gpu.bits.shape == want.bits.shape
    assert on_gpu.info.ptr - on_gpu.bits.ptr == (18 if name == "ccsds-c2" else 0)
    _same(on_gpu, want)
    _same(dec.submit(dev[8:72]).result(), dec.decode(llr[8:72]))          # rows 16-byte aligned
    _same(dec.decode_device(dev.data_ptr(), 150), want)
    lat = gl.Decoder(code, **dict(kw, preset="latency", streams=None, chunk_frames=None))   # launched, GPU recovery
    assert lat._impl.on_device
    _same(lat.decode(dev[:2]), lat.decode(llr[:2]))
    lat.close()
    with pytest.raises(ValueError, match="positive_llr_bit=1 negates a host copy of the bit LLRs"):
        gl.Decoder(code, positive_llr_bit=1, **kw).decode(dev)
    dec.close()


def test_a_shaped_code_recovered_on_the_host_refuses_gpu_arrays(cuda):
    torch = _torch()
    code = gl.codes.shaped(gl.codes.get("wimax-576-1/2"), punctured=[0, 1])
    dec = gl.Decoder(code, backend="cuda", devices=[0], preset="latency")
    assert not dec._impl.on_device                   # the resident kernel reads what the host recovered
    llr = np.ones((2, code.n), np.float32)
    assert dec.decode(llr).valid.all()
    with pytest.raises(TypeError, match="takes no shaped code on this decoder .* not the latency preset's "
                                        "resident kernel"):
        dec.decode(torch.from_numpy(llr).cuda())
    dec.close()
