"""Packed int4 LLRs on the GPU (``gl.Decoder(backend="cuda", llr_dtype="int4")``,
:mod:`gpuldpc.int4`, :class:`gpuldpc.cuda.stages.Int4Plan`, kernels/transport.cu ``unpack_int4``).

The packed bytes cross PCIe; the binary16 QC kernels read them as they are (their ``_i4`` entry
points, kernels/qc_decode.cuh ``Nibbles``), the other kernels after an unpack on the GPU into the
int8 rows the int8 kernels read, so a cuda int4 decode equals the cuda ``llr_dtype="int8"`` decode of
``gl.unpack_int4(packed)`` with the same ``llr_scale`` bit for bit (bits, iterations, flags, soft
output), and min-sum equals the reference's float32 decode of ``q * llr_scale``: WiMAX 2304 r1/2
and WiFi 1944 r2/3, float32 and binary16 messages, both schedules; n = 575 (odd, the kernel's
byte path) and n = 1940 (even, n % 8 != 0); the latency preset; the sparse kernel; streams,
chunks, submit and pinned arrays; ``positive_llr_bit=1``; PyTorch CUDA tensors of packed bytes.

The tests without the ``cuda`` marker need no GPU (the stage plan with a faked kernel).
"""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.codes.code import Code
from gpuldpc.codes.qc import qc_expand
from gpuldpc.gflinalg import gf_rank

SCALE = 0.5
EBN0_DB = {"wimax-2304-1/2": 1.8, "wifi-1944-2/3": 2.6}       # the waterfall with int4 at this scale


def _trimmed_code(name, columns, z):
    """A QC code of the first ``columns`` base columns of ``name`` lifted by ``z`` (n = columns * z)."""
    base = np.array(gl.codes.get(name).base)[:, :columns]
    base = np.where(base >= 0, base % z, -1)
    H = qc_expand(base, z)
    return Code(f"{name}-cols{columns}-z{z}", H, H.shape[1] - gf_rank(H, 2), base=base, z=z)


def _code(name):
    if name == "odd-575":                   # 23 x 25: odd n
        return _trimmed_code("wimax-576-1/2", 23, 25)
    if name == "even-1940":                 # 20 x 97: n even, not a multiple of 8
        return _trimmed_code("wimax-2304-1/2", 20, 97)
    return gl.codes.get(name)


def _packed(frames_fixture, code, count, ebn0=1.8, seed=21):
    cw, llr = frames_fixture(code, ebn0, count, seed)
    return cw, gl.pack_int4(llr, SCALE)


def _int8(packed, n):
    return gl.unpack_int4(packed, n)


def _values(packed, n):
    """The float32 LLRs the kernels form: q * llr_scale."""
    return gl.unpack_int4(packed, n).astype(np.float32) * np.float32(SCALE)


def _same(got, want, what, soft=False):
    for field in ("bits", "iterations", "valid", "bad_llr") + (("llr",) if soft else ()):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=f"{what}: {field}")


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["wimax-2304-1/2", "wifi-1944-2/3"])
@pytest.mark.parametrize("precision", ["float32", "float16"])
@pytest.mark.parametrize("schedule", ["layered", "flooding"])
def test_cuda_int4_equals_cuda_int8_of_the_unpacked_values(cuda, frames, name, precision, schedule):
    code = _code(name)
    _, packed = _packed(frames, code, 600, EBN0_DB[name] + (0.5 if schedule == "flooding" else 0.0))
    kw = dict(backend="cuda", devices=[0], precision=precision, schedule=schedule, max_iterations=10,
              llr_scale=SCALE, soft_output="posterior")
    dec = gl.Decoder(code, llr_dtype="int4", **kw)
    assert dec._impl.decoder.kernel.endswith("_i4" if precision == "float16" else "_i8")
    assert dec._impl.decoder.engines[0].plan.name.startswith("transport/unpack_int4") == (precision == "float32")
    got = dec.decode(packed)
    want = gl.Decoder(code, llr_dtype="int8", **kw).decode(_int8(packed, code.n))
    _same(got, want, f"{name} {precision} {schedule}", soft=True)
    assert len(set(got.iterations.tolist())) > 1                 # frames stopped at several iterations
    if precision == "float32" and schedule == "layered":         # and the reference's float32 decode
        ref = gl.Decoder(code, backend="reference", max_iterations=10, soft_output="posterior")
        _same(gl.Decoder(code, llr_dtype="int4", **kw).decode(packed[:100]),
              ref.decode(_values(packed[:100], code.n)), f"{name} reference", soft=True)


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["odd-575", "even-1940"])
@pytest.mark.parametrize("preset", ["throughput", "latency"])
@pytest.mark.parametrize("precision", ["float32", "float16"])
def test_cuda_int4_rows_of_any_length_and_the_latency_preset(cuda, frames, name, preset, precision):
    """n odd (a padding nibble a row) and n % 8 != 0: the byte paths of the unpack kernel (float32)
    and of the binary16 kernels' load (float16); the latency preset (mapped input read in place,
    no resident kernel)."""
    code = _code(name)
    _, packed = _packed(frames, code, 300, ebn0=2.5)
    kw = dict(backend="cuda", devices=[0], preset=preset, max_iterations=10, llr_scale=SCALE, precision=precision)
    dec = gl.Decoder(code, llr_dtype="int4", **kw)
    ref = gl.Decoder(code, llr_dtype="int8", **kw)
    assert packed.shape == (300, (code.n + 1) // 2)
    _same(dec.decode(packed), ref.decode(_int8(packed, code.n)), name)
    for count in (1, 6, 7):                                     # the latency path's small batches
        _same(dec.decode(packed[:count]), ref.decode(_int8(packed[:count], code.n)), f"{name} {count}")
    if preset == "latency":
        assert dec._impl.decoder.engines[0].slots[0].resident is None
        pinned = dec.pinned_llr(6)
        pinned[:] = packed[:6]
        _same(dec.decode(pinned), ref.decode(_int8(packed[:6], code.n)), f"{name} pinned")


@pytest.mark.cuda
def test_cuda_int4_wimax_latency_preset(cuda, frames):
    code = _code("wimax-2304-1/2")
    _, packed = _packed(frames, code, 8)
    kw = dict(backend="cuda", devices=[0], preset="latency", max_iterations=10, early_stop=False, llr_scale=SCALE)
    dec = gl.Decoder(code, llr_dtype="int4", **kw)
    assert dec._impl.decoder.kernel.startswith("qc_pl12x2x7_layered_i8")
    ref = gl.Decoder(code, llr_dtype="int8", **kw)
    for count in (1, 6):
        _same(dec.decode(packed[:count]), ref.decode(_int8(packed[:count], code.n)), f"{count} frames")


@pytest.mark.cuda
def test_cuda_int4_sparse_kernel(cuda, frames):
    code = gl.codes.get("dvbs2-short-1/2")
    _, packed = _packed(frames, code, 40, ebn0=1.5)
    kw = dict(backend="cuda", devices=[0], max_iterations=20, llr_scale=SCALE)
    dec = gl.Decoder(code, llr_dtype="int4", **kw)
    assert dec._impl.decoder.kernel.startswith("sp")
    _same(dec.decode(packed), gl.Decoder(code, llr_dtype="int8", **kw).decode(_int8(packed, code.n)), code.name)


@pytest.mark.cuda
def test_cuda_int4_streams_chunks_submit_pinned_and_sign(cuda, frames):
    code = _code("wifi-648-1/2")
    _, packed = _packed(frames, code, 1001)
    kw = dict(backend="cuda", devices=[0], max_iterations=10, llr_scale=SCALE, streams=3, chunk_frames=64,
              soft_output="posterior")
    dec = gl.Decoder(code, llr_dtype="int4", **kw)
    want = gl.Decoder(code, llr_dtype="int8", **kw).decode(_int8(packed, code.n))
    _same(dec.decode(packed), want, "numpy", soft=True)
    tickets = [dec.submit(packed[a:a + 300]) for a in range(0, 1001, 300)]
    np.testing.assert_array_equal(np.concatenate([t.result().bits for t in tickets]), want.bits)
    pinned = dec.pinned_llr(1001)
    assert pinned.shape == (1001, 324) and pinned.dtype == np.uint8
    pinned[:] = packed
    _same(dec.decode(pinned), want, "pinned", soft=True)
    flipped = gl.Decoder(code, llr_dtype="int4", positive_llr_bit=1, **kw).decode(gl.pack_int4(
        -_int8(packed, code.n).astype(np.float32)))
    np.testing.assert_array_equal(flipped.bits, want.bits)
    np.testing.assert_array_equal(flipped.llr, -want.llr)
    ext = gl.Decoder(code, llr_dtype="int4", **{**kw, "soft_output": "extrinsic"}).decode(packed)
    np.testing.assert_array_equal(ext.llr, want.llr - _values(packed, code.n))


@pytest.mark.cuda
def test_cuda_int4_from_a_torch_tensor(cuda, frames):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    code = _code("wimax-2304-1/2")
    _, packed = _packed(frames, code, 500)
    dec = gl.Decoder(code, backend="cuda", devices=[0], llr_dtype="int4", llr_scale=SCALE, precision="float16")
    want = dec.decode(packed)
    dev = torch.from_numpy(packed).cuda()
    _same(dec.decode(dev, out_device=False), want, "torch")
    np.testing.assert_array_equal(dec.decode(dev).bits.get(), want.bits)
    with pytest.raises(TypeError, match="uint8"):
        dec.decode(torch.from_numpy(_int8(packed, code.n)).cuda())


@pytest.mark.cuda
def test_cuda_int4_errors(cuda):
    code = gl.codes.get("wimax-2304-1/2")
    dec = gl.Decoder(code, backend="cuda", devices=[0], llr_dtype="int4")
    with pytest.raises(TypeError, match="packed int4 LLRs"):
        dec.decode(np.zeros((2, 2304), np.float32))
    with pytest.raises(ValueError, match=r"shape \[batch, 1152\]"):
        dec.decode(np.zeros((2, 2304), np.uint8))
    with pytest.raises(ValueError, match="llr_dtype='int4' takes plain codes"):
        gl.Decoder(gl.codes.nr(1000, 1800), backend="cuda", llr_dtype="int4")
    low = cuda.CudaDecoder(code, llr_dtype="int4", devices=[0])
    with pytest.raises(TypeError, match=r"uint8 \(packed int4, gl.pack_int4\)"):
        low.decode(np.zeros((2, 1152), np.int8))


def test_int4_plan_unpacks_into_the_stage_buffer_then_launches_the_inner_plan(fake_kernels):
    """Int4Plan (no GPU: kernel faked): packed input frames of ceil(n/2) bytes, the int8 rows at
    the start of the slot's scratch (256-aligned) and the inner plan's scratch after them, the
    inner launch reading the unpacked rows; no resident kernel; other attributes the inner plan's."""
    from gpuldpc.cuda import stages

    ctx = fake_kernels({("transport", "unpack_int4"): stages.UNPACK_ARGS})

    plan = stages.Int4Plan(ctx, ctx.inner_plan("qc_hs12x7_layered_i8", 575, frame_bytes=575, scratch_per_frame=8))
    assert plan.frame_bytes("llr") == 288 and plan.bits_width == 575 and plan.resident(None) is None
    assert plan.name == "transport/unpack_int4 + qc_hs12x7_layered_i8"
    capacity = 100
    rows = -(-capacity * 575 // 256) * 256
    assert plan.scratch_bytes(capacity) == rows + 800
    plan.launch("stream", 70, 4096, "llr", ("bits", "it", "flags", 0), 1 << 20, capacity)
    (_, grid, block, args), decode = ctx.calls
    assert grid == (-(-70 * 72 // 256), 1) and block == (256, 1, 1)       # 72 groups of 4 bytes a row
    assert args == (4096, 1 << 20, 575, 70)
    assert decode == ("decode", 70, 1 << 20, ("bits", "it", "flags", 0), (1 << 20) + rows, capacity)
