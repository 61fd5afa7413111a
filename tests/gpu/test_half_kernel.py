"""The binary16 kernels (kernels/qc_decode.cu HalfMinSum, entry points ``qc_hs*``, chosen by
``precision="float16"``) against the reference decoder's float16 arithmetic
(gpuldpc.decoders.reference_binary): identical decoded bits, iteration counts and syndrome
flags on 2000 frames a code (1000 for rate 5/6) over four Eb/N0 points, for normalized and
offset min-sum, layered and flooding, early stop on and off, on WiMAX 2304 / 576 and WiFi
1944 / 648 rate 1/2 and two higher-rate codes (one per multi-word row variant); odd batch
sizes (a frame pair with an absent partner), int8 and float16 input, packed output, the
latency preset; the frame error rate of float16 against float32 on the same frames; errors.

The tests without the ``cuda`` marker need no GPU (kernel choice, launch shapes, refusals).
"""
import numpy as np
import pytest
import scipy.sparse as sp

import gpuldpc as gl
from gpuldpc.cuda import CudaDecoder, DeviceLimits, KernelAttributes, NotQuasiCyclic, kernel_name, launch_shape
from gpuldpc.cuda import qc_layout
from gpuldpc.cuda.decoder import kernel_state_bytes
from gpuldpc.codes.qc import qc_expand
from gpuldpc.cuda.tuning import shared_bytes, threads_per_block

SNRS = {"1/2": (1.0, 1.5, 2.0, 2.5), "3/4": (2.5, 3.0, 3.5, 4.0), "5/6": (3.25, 3.75, 4.25, 4.75)}
CODES = ("wimax-2304-1/2", "wimax-576-1/2", "wifi-1944-1/2", "wifi-648-1/2", "wifi-1944-3/4",
         "wimax-2304-5/6")
SETTINGS = [dict(algorithm="nms", schedule="layered", early_stop=True),
            dict(algorithm="oms", schedule="layered", early_stop=False),
            dict(algorithm="nms", schedule="flooding", early_stop=False),
            dict(algorithm="oms", schedule="flooding", early_stop=True)]
BATCHES = (1, 3, 301)
H200 = DeviceLimits(sm_count=132, max_threads_per_sm=2048, max_threads_per_block=1024, registers_per_sm=65536,
                    shared_per_sm=233472, shared_per_block_optin=232448, max_blocks_per_sm=32)
HALF_KERNEL = KernelAttributes(registers=64, static_shared=0, local_bytes=16, max_threads=512)


def _frames_at_snrs(frames, code):
    rate = code.name.split("-")[-1]
    per = 250 if rate == "5/6" else 500
    parts = [frames(code, snr, per, seed=60 + i) for i, snr in enumerate(SNRS[rate])]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _assert_same(got, want, what):
    bad = np.flatnonzero((got.bits != want.bits).any(axis=1))
    assert bad.size == 0, f"{what}: {bad.size} frames differ in bits, first {bad[:5].tolist()}"
    np.testing.assert_array_equal(got.iterations, want.iterations, err_msg=what)
    np.testing.assert_array_equal(got.valid, want.valid, err_msg=what)


def _rows(res, stop):
    """The first ``stop`` frames of a DecodeResult."""
    return type(res)(*(None if x is None else x[:stop] for x in res))


def _half(code, **kw):
    return CudaDecoder(code, max_iterations=10, precision="float16", devices=[0], **kw)


@pytest.mark.cuda
@pytest.mark.parametrize("name", CODES)
def test_bit_exact_against_float16_reference(cuda, frames, reference, name):
    code = gl.codes.get(name)
    cw, llr = _frames_at_snrs(frames, code)
    for st in SETTINGS:
        dec = _half(code, **st)
        assert dec.kernel.startswith("qc_hs"), dec.kernel
        got = dec.decode(llr)
        want = reference(code, llr, max_iterations=10, precision="float16", **st)
        _assert_same(got, want, f"{name} {dec.kernel} {st}")
        # the sweep spans failed and decoded frames
        assert 0 < got.valid.mean() < 1, (name, st, got.valid.mean())
        np.testing.assert_array_equal(got.valid, code.is_codeword(got.bits))
        dec.close()


def _in_batches(dec, x):
    """Decode ``x`` as calls of 1, 3 and 301 frames in turn until it is used up."""
    sizes, done = [], 0
    while done < len(x):
        sizes.append(min(BATCHES[len(sizes) % len(BATCHES)], len(x) - done))
        done += sizes[-1]
    res = [dec.decode(p) for p in np.split(x, np.cumsum(sizes)[:-1])]
    return gl.decoders.front.DecodeResult(*(np.concatenate([getattr(r, k) for r in res])
                                            for k in ("bits", "info", "iterations", "valid", "bad_llr")))


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["wimax-576-1/2", "wifi-648-1/2"])
def test_odd_batches_inputs_and_packed_output(cuda, frames, reference, name):
    code = gl.codes.get(name)
    _, llr = _frames_at_snrs(frames, code)
    st = SETTINGS[0]
    want = reference(code, llr, max_iterations=10, precision="float16", **st)
    _assert_same(_in_batches(_half(code, **st), llr), want, f"{name} batches {BATCHES}")
    packed = _half(code, packed=True, frames_per_block=6, **st).decode(llr[:1999])   # last block: 1 frame
    np.testing.assert_array_equal(packed.bits, np.packbits(want.bits[:1999], axis=1))
    np.testing.assert_array_equal(packed.iterations, want.iterations[:1999])
    np.testing.assert_array_equal(packed.valid, want.valid[:1999])
    q = np.clip(np.round(llr * 4), -127, 127).astype(np.int8)
    want_q = reference(code, q.astype(np.float32) * np.float32(0.25), max_iterations=10, precision="float16", **st)
    _assert_same(_in_batches(_half(code, llr_dtype="int8", llr_scale=0.25, **st), q), want_q, f"{name} int8")
    h = llr.astype(np.float16)
    want_h = reference(code, h.astype(np.float32), max_iterations=10, precision="float16", **st)
    _assert_same(_half(code, llr_dtype="float16", **st).decode(h), want_h, f"{name} float16 input")


@pytest.mark.cuda
def test_latency_preset_and_front_door(cuda, frames, reference):
    code = gl.codes.get("wimax-2304-1/2")
    _, llr = _frames_at_snrs(frames, code)
    st = SETTINGS[0]
    want = reference(code, llr, max_iterations=10, precision="float16", **st)
    lat = _half(code, preset="latency", **st)
    assert lat.kernel == "qc_hs12x7_layered_f32"
    assert lat.describe()["devices"][0]["frames_per_block"] == 2
    for i in range(7):
        got = lat.decode(llr[i])
        np.testing.assert_array_equal(got.bits[0], want.bits[i])
        assert (got.iterations[0], got.valid[0]) == (want.iterations[i], want.valid[i])
    for backend in ("cuda", "auto"):
        front = gl.Decoder(code, backend=backend, precision="float16", max_iterations=10, **st)
        assert front.backend == "cuda"
        _assert_same(front.decode(llr[:301]), _rows(want, 301), f"front door {backend}")


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["wimax-2304-1/2", "wifi-1944-1/2"])
def test_frame_error_rate_close_to_float32(cuda, frames, name):
    """Failures of float16 and float32 on the same 10000 frames per Eb/N0: within three
    standard deviations of the difference of two counts plus 5 % (two-sided)."""
    code = gl.codes.get(name)
    for ebn0 in (1.5, 2.0):
        cw, llr = frames(code, ebn0, 10000, seed=21)
        counts = {}
        for precision in ("float32", "float16"):
            res = CudaDecoder(code, max_iterations=10, precision=precision, devices=[0]).decode(llr)
            counts[precision] = int((res.bits != cw).any(axis=1).sum())
        a, b = counts["float32"], counts["float16"]
        assert a > 20, counts
        assert abs(b - a) <= 3 * np.sqrt(a + b) + 0.05 * a, f"{name} at {ebn0} dB, 10000 frames: {counts}"


@pytest.mark.cuda
def _wimax_half_rate_at(z):
    """WiMAX rate 1/2's base matrix lifted to ``z`` as 802.16e scales it (s * z // 96)."""
    base = np.asarray(gl.codes.get("wimax-2304-1/2").base)
    lifted = np.where(base >= 0, base * z // 96, -1)
    return gl.codes.Code(f"wimax-half-z{z}", qc_expand(lifted, z), k=12 * z, base=lifted, z=z)


@pytest.mark.cuda
@pytest.mark.parametrize("z", (256, 257))
def test_column_table_edge_and_wide_circulants(cuda, frames, reference, z):
    """The column table holds (r + s) mod z in a byte: z = 256 is its largest circulant
    (qc_hs12x7, rows of 6 blocks skip their seventh slot), z = 257 runs the same rows without
    it (qc_hw12x8); both bit for bit the float16 reference, layered and flooding."""
    code = _wimax_half_rate_at(z)
    parts = [frames(code, snr, 120, seed=90 + i) for i, snr in enumerate((1.5, 2.0))]
    llr = np.concatenate([p[1] for p in parts])
    for st in SETTINGS[:3]:
        dec = _half(code, **st)
        assert dec.kernel.startswith("qc_hs12x7" if z <= 256 else "qc_hw12x8"), dec.kernel
        got = dec.decode(llr)
        _assert_same(got, reference(code, llr, max_iterations=10, precision="float16", **st), f"z={z} {st}")
        assert 0 < got.valid.mean() < 1, (z, st, got.valid.mean())
        dec.close()


def test_user_errors_on_the_gpu(cuda):
    code = gl.codes.get("wimax-2304-1/2")
    with pytest.raises(ValueError, match="frames_per_block=3 is not a multiple of 2"):
        _half(code, frames_per_block=3)
    with pytest.raises(ValueError, match="precision='float16' runs min-sum only"):
        gl.Decoder(code, "spa", backend="cuda", precision="float16")


def test_kernel_choice():
    """Every code shape of the standards has a binary16 kernel, in either preset, for every
    schedule and input type; sum-product has none."""
    get = lambda n: qc_layout(gl.codes.get(n))  # noqa: E731
    want = {"wimax-2304-1/2": "hs12x7", "wimax-576-1/2": "hs12x7", "wifi-1944-1/2": "hs12x8",
            "wifi-648-1/2": "hs12x8", "wifi-1944-3/4": "hs8x16", "wimax-2304-2/3A": "hs8x16",
            "wimax-2304-5/6": "hs4x24", "wifi-648-5/6": "hs4x24"}
    for name, variant in want.items():
        for preset in ("throughput", "latency"):
            for sched in ("layered", "flooding"):
                for dtype, suffix in (("float32", "f32"), ("float16", "f16"), ("int8", "i8")):
                    got = kernel_name(get(name), "oms", sched, dtype, preset, "float16")
                    assert got == f"qc_{variant}_{sched}_{suffix}", (name, got)
    for name in gl.codes.names():
        if name.startswith(("wifi-", "wimax-")):
            assert kernel_name(get(name), "nms", "layered", "float32", precision="float16").startswith("qc_hs")
    with pytest.raises(ValueError, match="precision='float16' runs min-sum only"):
        kernel_name(get("wimax-576-1/2"), "spa", "layered", "float32", precision="float16")
    # the column table's bytes hold circulants of up to 256: past that the rows run as hw12x8
    for z, variant in ((256, "hs12x7"), (257, "hw12x8"), (512, "hw12x8")):
        lay = qc_layout(_wimax_half_rate_at(z))
        assert kernel_name(lay, "nms", "layered", "int8", precision="float16") == f"qc_{variant}_layered_i8"
    # its shared memory: z rows of layers x blocks bytes, rounded up to an odd number of words, and
    # a pair's block bases (layers x blocks words) for as many pairs as 512 threads hold
    assert kernel_state_bytes("qc_hs12x7_layered_i8", get("wimax-2304-1/2"), 512) == 96 * 84 + 5 * 84 * 4
    assert kernel_state_bytes("qc_hs12x8_flooding_f32", get("wifi-1944-1/2"), 512) == 81 * 100 + 6 * 96 * 4
    assert kernel_state_bytes("qc_hw12x8_layered_f32", qc_layout(_wimax_half_rate_at(300)), 512) == 0
    assert kernel_state_bytes("qc_hs8x16_layered_f32", get("wifi-1944-3/4"), 512) == 0


def test_launch_shape_counts_a_pair_as_two_frames():
    lay = qc_layout(gl.codes.get("wimax-2304-1/2"))
    s = launch_shape(lay, H200, HALF_KERNEL, False, frames_per_thread=2, row_blocks=7)
    # one pair = 96 threads, 2304 + 96 words of posteriors and pads, 12 x 7 table entries;
    # 64 registers: 10 blocks of 96 threads
    assert (s.frames_per_block, s.threads, s.blocks_per_sm, s.frames_per_wave) == (2, 96, 10, 2640)
    assert s.shared_bytes == shared_bytes(lay, 2, False, 2, 7) == 4 * (2304 + 96) + 8 * 12 * 7 + 4 * 13 + 12 * 2 + 4
    wifi = qc_layout(gl.codes.get("wifi-648-1/2"))
    for flooding in (False, True):
        s = launch_shape(wifi, H200, HALF_KERNEL, flooding, frames_per_thread=2, row_blocks=8)
        assert s.frames_per_block % 2 == 0
        pairs = s.frames_per_block // 2
        assert s.threads == threads_per_block(27, s.frames_per_block, 1, 2) == -(-pairs * 27 // 32) * 32
        words = (3 if flooding else 1) * pairs * 676      # 648 + 27 -> 676
        assert s.shared_bytes == shared_bytes(wifi, s.frames_per_block, flooding, 2, 8) == \
            4 * (words + (words & 1)) + 8 * 12 * 8 + 4 * 13 + 12 * s.frames_per_block + 4
        assert s.blocks_per_sm * (s.shared_bytes + 1024) <= H200.shared_per_sm
    pairs = dict(frames_per_thread=2, row_blocks=8)
    assert launch_shape(wifi, H200, HALF_KERNEL, False, "latency", **pairs).frames_per_block == 2
    assert launch_shape(wifi, H200, HALF_KERNEL, False, frames_per_block=6, **pairs).threads == 96
    with pytest.raises(ValueError, match="frames_per_block=5 is not a multiple of 2"):
        launch_shape(wifi, H200, HALF_KERNEL, False, frames_per_block=5, **pairs)


def _heavy_column_code(weight):
    """A QC code (z = 2) whose first base column has ``weight`` blocks: column weight ``weight``."""
    base = -np.ones((weight, weight + 1), np.int32)
    base[:, 0] = 0
    base[np.arange(weight), np.arange(weight) + 1] = 0
    z = 2
    H = sp.kron(sp.csr_matrix(base >= 0, dtype=np.uint8), sp.identity(z, dtype=np.uint8), format="csr")
    return gl.codes.Code(f"heavy-{weight}", H, k=2, base=base, z=z)


def test_refusals_without_a_gpu():
    """Codes whose float16 posteriors could exceed 65504 (2048 + dv * 2048, dv <= 30 fits),
    sum-product, unknown precisions: refused before any device work."""
    with pytest.raises(ValueError, match=r"column weight dv = 31 is 65536, over the float16 maximum 65504"):
        CudaDecoder(_heavy_column_code(31), precision="float16")
    with pytest.raises(ValueError, match="precision='float16' runs min-sum only"):
        CudaDecoder(gl.codes.get("wimax-576-1/2"), "spa", precision="float16")
    with pytest.raises(ValueError, match=r"precision='float8' is not one of \('float32', 'float16'\)"):
        CudaDecoder(gl.codes.get("wimax-576-1/2"), precision="float8")
    assert issubclass(NotQuasiCyclic, ValueError)
