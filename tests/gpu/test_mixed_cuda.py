"""gl.MixedDecoder on the cuda backend (issue 16 item 1): three codes in random order decoded in
one call give, frame for frame, what gl.Decoder gives for each code's frames on their own (bit
for bit, iterations included: each frame stops on its own), through the cuda path
(gpuldpc.cuda.mixed_pipeline: the mixed rows copied as they lie, gathered and scattered on the
GPU by kernels/mixed_rows.cu, pieces smaller than the batch reusing the slots), for float32 and
int8 LLRs with binary16 messages, a batch of one code, one frame, lists of rows, strided and
float64 input (staged), GF(16) beside a binary code; soft output and shaped codes through the
host grouping; NaN frames in one group named by their input position."""
import numpy as np
import pytest

import gpuldpc as gl

pytestmark = pytest.mark.cuda
NAMES = ("wimax-2304-1/2", "wimax-2304-5/6", "wifi-1944-2/3")
EBN0_DB = (1.8, 4.0, 2.6)          # waterfalls: frames stop early, late and never


def mixed_batch(frames, seed):
    """(code_index, LLRs [frames, 2304] with NaN after each row's n) of the issue's mix:
    50 % WiMAX 2304 r1/2, 25 % r5/6, 25 % WiFi 1944 r2/3, in random order."""
    rng = np.random.default_rng(seed)
    idx = rng.choice(3, frames, p=[0.5, 0.25, 0.25])
    llr = np.full((frames, 2304), np.nan, np.float32)
    for c, name in enumerate(NAMES):
        code = gl.codes.get(name)
        rows = np.flatnonzero(idx == c)
        cw = code.encode(rng.integers(0, 2, (rows.size, code.k), dtype=np.uint8))
        llr[rows, :code.n] = gl.channel.transmit(code, cw, EBN0_DB[c], rng)
    return idx, llr


def assert_per_code(res, idx, llr, **options):
    """Each code's frames of ``res`` equal gl.Decoder(code, **options) on them alone (a code
    without frames has none in ``res``)."""
    for c, name in enumerate(NAMES):
        code = gl.codes.get(name)
        rows = np.flatnonzero(idx == c)
        if rows.size == 0:
            assert res.frames_of(c).bits.shape == (0, code.n)
            continue
        dec = gl.Decoder(code, backend="cuda", devices=[0], **options)
        want = dec.decode(np.ascontiguousarray(llr[rows, :code.n]))
        got = res.frames_of(c)
        for field in ("bits", "info", "iterations", "valid", "bad_llr", "llr"):
            a, b = getattr(want, field), getattr(got, field)
            if a is None:
                assert b is None, field
            else:
                np.testing.assert_array_equal(b, a, err_msg=f"{name} {field}")
        dec.close()


def test_three_codes_in_random_order_bit_identical_to_code_by_code(cuda):
    idx, llr = mixed_batch(6000, seed=31)
    options = dict(devices=[0], max_iterations=10, streams=3, chunk_frames=256)
    dec = gl.MixedDecoder(NAMES, backend="cuda", piece_frames=700, **options)
    assert dec.backends == ("cuda",) * 3 and dec.on_gpu and dec.piece_frames == 700
    res = dec.decode(llr, idx)                       # 9 pieces: every one of the 4 slots reused
    assert_per_code(res, idx, llr, **{k: v for k, v in options.items() if k != "devices"})
    assert res.iterations.min() <= 3 and res.iterations.max() == 10 and 0 < res.valid.mean() < 1
    assert not res.bad_llr.any()                     # the NaN row tails are never read
    assert not res.bits[idx == 2, 1944:].any()       # WiFi rows padded with zeros
    assert cuda.is_pinned(res.bits)                  # one D2H a piece into them
    # the caller's array was staged the first time, registered in place when handed in again;
    # the slots' buffers are kept
    assert dec._pipeline.registry.registered_bytes(llr) == 0
    buffers = [dict(slot.buffers) for slot in dec._pipeline.slots]
    again = dec.decode(llr, idx)
    assert dec._pipeline.registry.registered_bytes(llr) == llr.nbytes
    assert [dict(slot.buffers) for slot in dec._pipeline.slots] == buffers
    np.testing.assert_array_equal(again.bits, res.bits)
    np.testing.assert_array_equal(again.iterations, res.iterations)
    dec.close()


def test_no_early_stop_int8_binary16_and_soft_output(cuda):
    """The benchmark's second configuration (int8 LLRs, binary16 messages, no early stop) and
    soft output (float32 messages) give the per-code results too."""
    idx, llr = mixed_batch(3000, seed=32)
    q = np.clip(np.round(np.nan_to_num(llr) / 0.25), -127, 127).astype(np.int8)
    options = dict(max_iterations=10, early_stop=False, llr_dtype="int8", llr_scale=0.25, precision="float16")
    dec = gl.MixedDecoder(NAMES, backend="cuda", devices=[0], piece_frames=1000, **options)
    assert dec.on_gpu
    res = dec.decode(q, idx)
    assert (res.iterations == 10).all()
    assert_per_code(res, idx, q, **options)
    mixed = gl.MixedDecoder(NAMES, backend="cuda", devices=[0], soft_output="posterior")
    assert not mixed.on_gpu                          # soft output: the host grouping
    soft = mixed.decode(llr, idx)
    assert soft.llr.shape == (3000, 2304)
    assert_per_code(soft, idx, llr, soft_output="posterior")


def test_nan_in_one_group_named_by_input_position(cuda):
    idx, llr = mixed_batch(2000, seed=33)
    wifi = np.flatnonzero(idx == 2)
    bad = np.sort(wifi[[3, 50, 51]])
    llr[bad, 17] = np.nan
    llr[bad[1], 18] = -np.inf
    with pytest.raises(ValueError, match=r"llrs: frames \[" + ", ".join(map(str, bad)) + r"\] \(codes \['wifi-1944-2/3'\]\)"):
        gl.MixedDecoder(NAMES, backend="cuda", devices=[0]).decode(llr, idx)
    res = gl.MixedDecoder(NAMES, backend="cuda", devices=[0], on_bad_llr="erase").decode(llr, idx)
    np.testing.assert_array_equal(np.flatnonzero(res.bad_llr), bad)
    assert_per_code(res, idx, llr, on_bad_llr="erase")


def test_one_code_one_frame_lists_strided_and_float64_input(cuda):
    """A batch of one code only (positive_llr_bit=1: the kernels' sign), one frame, a list of
    rows, a strided view of a wider array and float64 rows (the last three staged) give the
    same frames as gl.Decoder."""
    idx, llr = mixed_batch(1500, seed=34)
    dec = gl.MixedDecoder(NAMES, backend="cuda", devices=[0], piece_frames=400, positive_llr_bit=1)
    wimax = np.flatnonzero(idx == 0)
    only = dec.decode(-llr[wimax], np.zeros(wimax.size, np.int64))
    assert_per_code(only, np.zeros(wimax.size, np.int64), -llr[wimax], positive_llr_bit=1)
    one = dec.decode(-llr[:1], idx[:1])
    assert_per_code(one, idx[:1], -llr[:1], positive_llr_bit=1)
    res = dec.decode(-llr, idx)
    rows = [-llr[i, :gl.codes.get(NAMES[c]).n] for i, c in enumerate(idx)]
    wide = np.zeros((1500, 2400), np.float32)
    wide[:, :2304] = -llr
    for other in (dec.decode(rows, idx), dec.decode(wide[:, :2304], idx), dec.decode(-llr.astype(np.float64), idx)):
        np.testing.assert_array_equal(other.bits, res.bits)
        np.testing.assert_array_equal(other.iterations, res.iterations)
        np.testing.assert_array_equal(other.valid, res.valid)
    assert_per_code(res, idx, -llr, positive_llr_bit=1)
    dec.close()


def test_gf16_beside_a_binary_code_on_the_gpu_and_a_shaped_code_on_the_host(cuda):
    """GF(16) bit LLRs (n*m a row) and WiFi 648 r1/2 through the cuda path; a 5G NR block
    among the codes takes the host grouping; both equal gl.Decoder code by code."""
    from gpuldpc import channel, gf

    wifi, nb, nr = gl.codes.get("wifi-648-1/2"), gl.codes.get("gf16-300-150"), gl.codes.nr(200, 300)
    rng = np.random.default_rng(35)
    idx = rng.permutation(np.repeat([0, 1], 300))
    llr = np.zeros((600, 1200), np.float32)
    rows = np.flatnonzero(idx == 0)
    llr[rows, :648] = channel.transmit(wifi, wifi.encode(rng.integers(0, 2, (300, wifi.k), dtype=np.uint8)),
                                       2.0, rng)
    rows = np.flatnonzero(idx == 1)
    bits = gf.GF(16).to_bits(nb.encode(rng.integers(0, 16, (300, nb.k)))).reshape(300, -1)
    llr[rows] = channel.awgn_llr(bits, channel.sigma_from_ebn0(2.5, 0.5), rng)
    dec = gl.MixedDecoder([wifi, nb], backend="cuda", devices=[0], max_iterations=6, piece_frames=256)
    assert dec.on_gpu
    res = dec.decode(llr, idx)
    host = gl.MixedDecoder([nr, wifi, nb], backend="cuda", devices=[0], max_iterations=6)
    assert not host.on_gpu
    grouped = host.decode(llr, idx + 1)
    for c, (code, width) in enumerate(((wifi, 648), (nb, 1200))):
        rows = np.flatnonzero(idx == c)
        want = gl.Decoder(code, backend="cuda", devices=[0], max_iterations=6).decode(llr[rows, :width])
        for got in (res.frames_of(c), grouped.frames_of(c + 1)):
            for field in ("bits", "info", "iterations", "valid", "bad_llr"):
                np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=f"{code.name} {field}")
    assert not res.bits[idx == 1, 300:].any()        # GF(16) rows: 300 symbols, zeros after
    dec.close()
    host.close()
