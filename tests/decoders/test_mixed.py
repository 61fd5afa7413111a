"""gl.MixedDecoder (issue 16 item 1) on the reference and cpu backends: frames of several codes
in one call give, frame for frame and in input order, what gl.Decoder gives for each code's
frames decoded on their own; the arguments are checked before decoding; NaN frames are named
by their input position."""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import channel, gf
from gpuldpc.code_switch import code_position

NAMES = ("wimax-2304-1/2", "wimax-2304-5/6", "wifi-1944-2/3")
EBN0_DB = (1.8, 4.0, 2.6)          # waterfalls: frames stop early, late and never


@pytest.fixture(params=["reference", "cpu"])
def backend(request):
    if request.param == "cpu":
        request.getfixturevalue("native_core")
    return request.param


def mixed_batch(codes, frames, seed, width=None, fill=np.nan, ebn0=EBN0_DB):
    """(code_index, LLRs [frames, width] with each row's tail set to ``fill``, codewords per frame)."""
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(codes), frames, p=[0.5] + [0.5 / (len(codes) - 1)] * (len(codes) - 1))
    width = width or max(c.n for c in codes)
    llr = np.full((frames, width), fill, np.float32)
    words = [None] * frames
    for c, code in enumerate(codes):
        rows = np.flatnonzero(idx == c)
        cw = code.encode(rng.integers(0, 2, (rows.size, code.k), dtype=np.uint8))
        llr[rows, :code.n] = channel.transmit(code, cw, ebn0[c], rng)
        for r, w in zip(rows, cw):
            words[r] = w
    return idx, llr, words


def assert_same(res, c, want):
    """MixedDecodeResult's frames of code c equal DecodeResult ``want``, field by field."""
    got = res.frames_of(c)
    for field in want._fields:
        a, b = getattr(want, field), getattr(got, field)
        if a is None:
            assert b is None, field
        else:
            np.testing.assert_array_equal(b, a, err_msg=field)


@pytest.fixture(scope="module")
def codes():
    return tuple(gl.codes.get(n) for n in NAMES)


def test_bit_identical_to_decoding_code_by_code_in_input_order(codes, backend):
    idx, llr, words = mixed_batch(codes, 60, seed=1)
    res = gl.MixedDecoder(NAMES, backend=backend, max_iterations=8, piece_frames=7).decode(llr, idx)
    assert res.bits.shape == (60, 2304) and res.info.shape == (60, 1920) and len(res) == 60
    np.testing.assert_array_equal(res.code_index, idx)
    np.testing.assert_array_equal(res.n, [codes[c].n for c in idx])
    np.testing.assert_array_equal(res.k, [codes[c].k for c in idx])
    for c, code in enumerate(codes):
        rows = np.flatnonzero(idx == c)
        want = gl.Decoder(code, backend=backend, max_iterations=8).decode(llr[rows, :code.n])
        assert_same(res, c, want)
        np.testing.assert_array_equal(res.bits[rows, :code.n], want.bits)
        np.testing.assert_array_equal(res.info[rows, :code.k], want.info)
        assert not res.bits[rows, code.n:].any() and not res.info[rows, code.k:].any()   # zero padding
    # each frame stopped on its own: the mix holds frames that stopped early, late and never
    assert res.iterations.min() < 4 and res.iterations.max() == 8 and 0 < res.valid.mean() < 1
    decided = np.array([np.array_equal(res.bits[i, :res.n[i]], words[i]) for i in range(60)])
    assert decided.sum() == res.valid.sum()
    assert not res.bad_llr.any()        # the NaN tails of the shorter rows are not read


def test_rows_as_a_list_and_a_wider_batch_give_the_same(codes, backend):
    idx, llr, _ = mixed_batch(codes, 24, seed=2)
    dec = gl.MixedDecoder(NAMES, backend=backend, max_iterations=6)
    whole = dec.decode(llr, idx)
    rows = [llr[i, :codes[c].n].astype(np.float64) for i, c in enumerate(idx)]
    listed = dec.decode(rows, idx.tolist())
    wider = dec.decode(np.pad(llr, ((0, 0), (0, 100)), constant_values=7.0), idx.astype(np.int32))
    for other in (listed, wider):
        for field in ("bits", "info", "iterations", "valid", "bad_llr"):
            np.testing.assert_array_equal(getattr(other, field), getattr(whole, field), err_msg=field)


def test_a_batch_of_one_code_and_a_code_without_frames(codes, backend):
    """Only code 2 in the batch: the other codes' groups are empty, frames_of gives them no
    rows at their own widths."""
    rng = np.random.default_rng(3)
    code = codes[2]
    llr = channel.transmit(code, code.encode(rng.integers(0, 2, (5, code.k), dtype=np.uint8)), 3.0, rng)
    res = gl.MixedDecoder(NAMES, backend=backend).decode(np.pad(llr, ((0, 0), (0, 360))), np.full(5, 2))
    want = gl.Decoder(code, backend=backend).decode(llr)
    assert_same(res, 2, want)
    empty = res.frames_of(0)
    assert empty.bits.shape == (0, 2304) and empty.info.shape == (0, 1152)
    nothing = gl.MixedDecoder(NAMES, backend=backend).decode(np.zeros((0, 2304), np.float32), [])
    assert nothing.bits.shape == (0, 2304) and nothing.iterations.size == 0


def test_nan_frames_are_named_by_input_position(codes, backend):
    idx, llr, _ = mixed_batch(codes, 30, seed=4)
    first_wifi = int(np.flatnonzero(idx == 2)[0])
    llr[[3, first_wifi], 5] = np.nan
    llr[11, 0] = np.inf
    bad = sorted({3, first_wifi, 11})
    with pytest.raises(ValueError, match=r"llrs: frames \[" + ", ".join(map(str, bad)) + r"\] \(codes "):
        gl.MixedDecoder(NAMES, backend=backend).decode(llr, idx)
    res = gl.MixedDecoder(NAMES, backend=backend, on_bad_llr="erase").decode(llr, idx)
    assert np.flatnonzero(res.bad_llr).tolist() == bad
    for c, code in enumerate(codes):
        rows = np.flatnonzero(idx == c)
        want = gl.Decoder(code, backend=backend, on_bad_llr="erase").decode(llr[rows, :code.n])
        assert_same(res, c, want)


def test_soft_output_and_gnu_radio_sign(codes, backend):
    idx, llr, _ = mixed_batch(codes, 20, seed=5)
    for soft in ("posterior", "extrinsic"):
        res = gl.MixedDecoder(NAMES, backend=backend, soft_output=soft, positive_llr_bit=1,
                              max_iterations=5).decode(-llr, idx)
        assert res.llr.shape == (20, 2304) and res.llr.dtype == np.float32
        for c, code in enumerate(codes):
            rows = np.flatnonzero(idx == c)
            want = gl.Decoder(code, backend=backend, soft_output=soft, positive_llr_bit=1,
                              max_iterations=5).decode(-llr[rows, :code.n])
            assert_same(res, c, want)
            assert not res.llr[rows, code.n:].any()


def test_shaped_and_gf_codes_beside_a_binary_code(backend):
    """A 5G NR block (bits: its decoded positions) and a GF(16) code (bit LLRs of its binary
    image in, symbols out) in one batch with WiFi 648 r1/2."""
    nr, wifi, nb = gl.codes.nr(200, 300), gl.codes.get("wifi-648-1/2"), gl.codes.get("gf16-300-150")
    rng = np.random.default_rng(6)
    idx = rng.permutation(np.repeat([0, 1, 2], 4))
    field = gf.GF(16)
    llr = np.zeros((12, 1200), np.float32)
    for c, code in enumerate((nr, wifi)):
        rows = np.flatnonzero(idx == c)
        llr[rows, :code.n] = channel.transmit(code, code.encode(rng.integers(0, 2, (4, code.k), dtype=np.uint8)),
                                              4.0, rng)
    rows = np.flatnonzero(idx == 2)
    bits = field.to_bits(nb.encode(rng.integers(0, 16, (4, nb.k)))).reshape(4, -1)
    llr[rows] = channel.awgn_llr(bits, channel.sigma_from_ebn0(4.0, 0.5), rng)
    res = gl.MixedDecoder([nr, wifi, nb], backend=backend, max_iterations=6).decode(llr, idx)
    np.testing.assert_array_equal(res.n[idx == 0], len(nr.decoded_positions))
    np.testing.assert_array_equal(res.n[idx == 2], 300)
    for c, (code, width) in enumerate(((nr, 300), (wifi, 648), (nb, 1200))):
        rows = np.flatnonzero(idx == c)
        want = gl.Decoder(code, backend=backend, max_iterations=6).decode(llr[rows, :width])
        assert_same(res, c, want)
        np.testing.assert_array_equal(res.info[rows, :code.k], want.info)
    assert res.valid.all()


@pytest.mark.parametrize("llr, index, error, message", [
    ("ok", [0, 3, 1], ValueError, r"code_index: frame 1 has index 3, outside 0\.\.2"),
    ("ok", [0, -1, 1], ValueError, r"code_index: frame 1 has index -1"),
    ("ok", [0.0, 1.0, 1.0], TypeError, r"code_index must be a 1-D integer array"),
    ("ok", [[0, 1, 1]], TypeError, r"code_index must be a 1-D integer array"),
    ("ok", [0, 1], ValueError, r"llrs must be a 2-D array \[frames, width\] with 2 rows"),
    ("narrow", [2, 2, 0], ValueError, r"llrs: rows hold 1944 LLRs, frame 2 \(code 'wimax-2304-1/2'\) needs 2304"),
    ("int", [0, 1, 2], TypeError, r"llrs: LLRs must be floating point"),
    ("list", [0, 1, 2], ValueError, r"llrs\[1\]: code 'wimax-2304-5/6' takes 2304 LLRs a frame"),
    ("short list", [0, 1, 2], ValueError, r"llrs: 2 frames for 3 entries of code_index"),
])
def test_bad_arguments_are_refused_before_decoding(backend, llr, index, error, message):
    arrays = {"ok": np.zeros((3, 2304), np.float32), "narrow": np.zeros((3, 1944), np.float32),
              "int": np.zeros((3, 2304), np.int32),
              "list": [np.zeros(2304, np.float32), np.zeros(1944, np.float32), np.zeros(1944, np.float32)],
              "short list": [np.zeros(2304, np.float32)] * 2}
    dec = gl.MixedDecoder(NAMES, backend=backend)
    with pytest.raises(error, match=message):
        dec.decode(arrays[llr], index)
    assert all(b is None for b in dec._buffers)      # nothing was gathered


@pytest.mark.parametrize("codes, options, message", [
    ([], {}, "codes must be a non-empty list"),
    ("wifi-648-1/2", {}, "codes must be a non-empty list"),
    (["wifi-648-1/2", "wifi-648-1/2"], {}, r"codes: \['wifi-648-1/2'\] given more than once"),
    (["wifi-648-1/3"], {}, "no code named 'wifi-648-1/3'"),
    (["wifi-648-1/2", "gf16-300-150"], {"soft_output": "posterior"}, "soft output for binary codes only"),
    (["wifi-648-1/2"], {"piece_frames": 0}, "piece_frames must be None or an integer >= 1"),
    (["wifi-648-1/2"], {"on_bad_llr": "drop"}, "on_bad_llr='drop' is not one of"),
    (["wifi-648-1/2"], {"max_iterations": 0}, "max_iterations must be an integer >= 1"),
    (["wifi-648-1/2", "gf16-300-150"], {"algorithm": "nms"}, "algorithm='nms' is not one of"),   # the second fails
])
def test_bad_construction(backend, codes, options, message):
    with pytest.raises((ValueError, KeyError), match=message):
        gl.MixedDecoder(codes, backend=backend, **options)


def test_code_position_takes_names_and_indices():
    names = list(NAMES)
    assert [code_position(names, k) for k in ("wifi-1944-2/3", b"wimax-2304-5/6", 0, np.int64(2))] == [2, 1, 0, 2]
    for key in ("wifi-648-1/2", 3, -1, True, 1.0, None):
        with pytest.raises(ValueError, match=r"ldpc_code=.* is neither one of the codes"):
            code_position(names, key)


class _OnGpu:
    """What a CuPy array or a PyTorch CUDA tensor shows of itself (never read here)."""
    __cuda_array_interface__ = {"shape": (2, 2304), "typestr": "<f4", "data": (1 << 40, False), "version": 3}


def test_gpu_arrays_are_refused_with_the_way_out(backend):
    with pytest.raises(TypeError, match="llrs: a MixedDecoder takes host arrays .* that code's gl.Decoder"):
        gl.MixedDecoder(NAMES, backend=backend).decode(_OnGpu(), [0, 1])


def test_the_benchmark_runs_on_the_cpu(bench_module, native_core, tmp_path):
    """bench/gpu_mixed.py --backend cpu --frames small: every row measured (results asserted
    bit-identical inside), a ratio against each code-by-code row, the JSON and the table."""
    import json

    bench_module("gpu_mixed").main(["--backend", "cpu", "--frames", "small", "--quick", "--out", str(tmp_path)])
    doc = json.loads((tmp_path / "cpu-mixed.json").read_text())
    measured = [(r["config"], r["api"], r["input"], r.get("how")) for r in doc["rows"] if "coded_gbps" in r]
    baselines = [("gl.Decoder", "numpy", "decode"), ("gl.Decoder", "numpy", "submit"),
                 ("gl.Decoder", "pinned", "decode"), ("gl.Decoder", "numpy, grouped per call", "decode")]
    assert measured == [(config, *b) for config in ("float32", "int8 messages")
                        for b in baselines + [("gl.MixedDecoder", "numpy", None)]]
    ratios = [r for r in doc["rows"] if "ratio" in r]
    assert len(ratios) == 8 and all(r["ratio"] > 0 for r in ratios)
    assert all(r["frames_per_batch"] == 600 and r["early_stop"] is False for r in doc["rows"] if "coded_gbps" in r)
    assert "gl.MixedDecoder / gl.Decoder pinned (decode)" in (tmp_path / "cpu-mixed.txt").read_text()
