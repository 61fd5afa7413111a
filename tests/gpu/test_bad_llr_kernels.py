"""Non-finite LLRs in every decoding kernel's load (kernels/llr_load.cuh, gpuldpc.bad_llr).

The rule: NaN becomes 0, +-inf becomes +-2^64 (float32 and float16 input; int8 is always
finite; GF(q) bit LLRs before the bit -> symbol conversion, symbol LLRs as they are), and bit 1
of the frame's flag byte is set (DecodeResult.bad_llr), bit 0 staying "syndrome satisfied".
For each kernel family, input type and load path (n a multiple of 4: vector loads; n odd:
scalar loads), a batch with non-finite values at the first LLR, the last LLR, several places,
in the first and the last frame and in frames between (and a batch of bad frames only):

* exactly the bad frames are flagged;
* every other frame decodes as in the same batch without the bad values (bits, iterations,
  syndrome flag);
* a bad frame decodes as the same frame with the rule applied on the host: the same kernel on
  the float32 LLRs the kernel sees (float16: value * scale), and for min-sum the reference
  decoder (gpuldpc.decoders.reference, bit for bit) on those LLRs.

The constant check at the end needs no GPU.
"""
import re
from pathlib import Path

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import bad_llr
from gpuldpc.codes.code import Code
from gpuldpc.codes.qc import qc_expand
from gpuldpc.gflinalg import gf_rank

KERNELS = Path(__file__).resolve().parents[2] / "kernels"
SAT = np.float32(bad_llr.LLR_SATURATION)
MAX_ITER = 10


def _odd_code():
    """A QC code with n = 575 (23 base columns of WiMAX 576 r1/2, z = 25): n is not a multiple
    of 4, so the kernels take their scalar load paths."""
    base = np.array(gl.codes.get("wimax-576-1/2").base)[:, :23]
    base = np.where(base >= 0, base % 25, -1)
    H = qc_expand(base, 25)
    return Code("odd-575", H, H.shape[1] - gf_rank(H, 2), base=base, z=25)


def _code(name):
    return _odd_code() if name == "odd-575" else gl.codes.get(name)


def _host_rule(x):
    """The rule on the host (float32)."""
    return np.nan_to_num(np.asarray(x, np.float32), nan=0.0, posinf=SAT, neginf=-SAT)


def _poison(llr, rows, seed):
    """A copy of ``llr`` with non-finite values in ``rows``: NaN at the first LLR of the first of
    them, +inf at the last LLR of the last, and in the others NaN, +inf and -inf at a few random
    places (GF(q) symbol LLRs: of the flattened frame)."""
    out = llr.copy()
    flat = out.reshape(out.shape[0], -1)
    width = flat.shape[1]
    rng = np.random.default_rng(seed)
    for i, r in enumerate(rows):
        if i == 0:
            flat[r, 0] = np.nan
        elif i == len(rows) - 1:
            flat[r, width - 1] = np.inf
        else:
            cols = rng.choice(width, size=1 + i % 4, replace=False)
            flat[r, cols] = np.array([np.nan, np.inf, -np.inf])[(np.arange(cols.size) + i) % 3]
    return out


def _all_bad(llr):
    """Every frame bad: whole frames of NaN (all LLRs erased: the all-zero word, valid), of
    +inf, of -inf, the rest one non-finite value each."""
    out = llr.copy()
    flat = out.reshape(out.shape[0], -1)
    flat[0], flat[1], flat[2] = np.nan, np.inf, -np.inf
    for r in range(3, flat.shape[0]):
        flat[r, (37 * r) % flat.shape[1]] = (np.nan, np.inf, -np.inf)[r % 3]
    return out


def _same_rows(got, want, rows, what):
    for field in ("bits", "iterations", "valid"):
        np.testing.assert_array_equal(getattr(got, field)[rows], getattr(want, field)[rows],
                                      err_msg=f"{what}: {field}")


def _check_batch(dec, oracle, llr, bad, as_float, what, ref=None):
    """Decode ``bad`` (``llr`` with non-finite values) and check flags, the good frames against
    ``llr`` and the bad ones against ``oracle`` on the host-ruled float32 LLRs (and ``ref``, a
    reference decoder, when given)."""
    flat = bad.reshape(bad.shape[0], -1)
    is_bad = ~np.isfinite(as_float(flat)).all(axis=1)
    assert is_bad.any()
    got = dec.decode(bad)
    np.testing.assert_array_equal(got.bad_llr, is_bad, err_msg=f"{what}: bad_llr")
    good = np.flatnonzero(~is_bad)
    if good.size:
        clean = dec.decode(llr)
        assert not clean.bad_llr.any(), what
        _same_rows(got, clean, good, f"{what}, good frames")
    rows = np.flatnonzero(is_bad)
    ruled = _host_rule(as_float(bad))
    want = oracle.decode(ruled)
    assert not want.bad_llr.any(), what
    _same_rows(got, want, rows, f"{what}, bad frames against the host rule")
    if ref is not None:
        r = ref(ruled[rows])
        for field in ("bits", "iterations", "valid"):
            np.testing.assert_array_equal(getattr(got, field)[rows], getattr(r, field),
                                          err_msg=f"{what}, bad frames against the reference: {field}")
    return got


# binary kernel families: (id, CudaDecoder options, entry point prefix; None: forced below)
BINARY = [
    ("ms-layered", dict(algorithm="nms"), "qc_ms12x7_layered"),
    ("ms-flooding", dict(algorithm="oms", schedule="flooding"), "qc_ms12x7_flooding"),
    ("stored-layered", dict(algorithm="spa"), "qc_stored_layered"),
    ("stored-flooding", dict(algorithm="spa", schedule="flooding"), "qc_stored_flooding"),
    ("ep-layered", dict(preset="latency"), "qc_ep12x1x8_layered"),    # WiMAX 1/2: qc_pl12x2x7 (PAIRED_ROWS)
    ("ep-flooding", dict(preset="latency", schedule="flooding", algorithm="oms"), "qc_ep12x2x4_flooding"),
    ("ep12x8x1-layered", dict(algorithm="oms"), "qc_ep12x8x1_layered"),
    ("ep12x8x1-flooding", dict(schedule="flooding"), "qc_ep12x8x1_flooding"),
    ("hs-layered", dict(precision="float16"), "qc_hs12x7_layered"),
    ("hs-flooding", dict(precision="float16", schedule="flooding", algorithm="oms"), "qc_hs12x7_flooding"),
]
DTYPES = {"float32": ("f32", np.float32), "float16": ("f16", np.float16), "int8": ("i8", np.int8)}
SCALE = {"float32": 1.0, "float16": 0.5}


def _binary_decoder(cuda, monkeypatch, code, opts, prefix, dtype, scale):
    """CudaDecoder of the family (the ep12x8x1 kernels, which no preset picks, by name; the
    latency preset's layered one with two layers a step where the code's layers pair up)."""
    from gpuldpc.cuda import decoder as decoder_module

    if prefix.startswith("qc_ep12x8x1"):
        monkeypatch.setattr(decoder_module, "kernel_name", lambda *a, **k: f"{prefix}_{DTYPES[dtype][0]}")
    kw = dict(opts, max_iterations=MAX_ITER, devices=[0], llr_dtype=dtype, llr_scale=scale)
    if kw.get("preset") != "latency":
        kw.update(streams=2, chunk_frames=16)        # several chunks: bad frames at their edges
    dec = cuda.CudaDecoder(code, **kw)
    want = f"{prefix}_{DTYPES[dtype][0]}"
    if getattr(dec.layout, "order", None) is not None:  # qc_ep12x1x8_layered_... -> qc_pl12x2x7_layered_...
        head = "_".join(want.split("_")[:3]) + "_"
        want = decoder_module.PAIRED_ROWS[head][0] + want[len(head):]
    assert dec.kernel == want, dec.kernel
    return dec


def _reference(code, opts):
    """Reference min-sum decoder with the family's settings (None for sum-product); ``code``
    with its layers in the kernel's order (fixture ``layered_as``)."""
    if opts.get("algorithm") == "spa":
        return None
    settings = dict(algorithm=opts.get("algorithm", "nms"), schedule=opts.get("schedule", "layered"),
                    max_iterations=MAX_ITER, early_stop=True)
    if opts.get("precision") == "float16":
        settings["precision"] = "float16"
    return lambda llr: gl.Decoder(code, backend="reference", **settings).decode(llr)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", ["wimax-2304-1/2", "odd-575"])
@pytest.mark.parametrize("family, opts, prefix", BINARY, ids=[b[0] for b in BINARY])
def test_binary_kernels_flag_and_rule(cuda, frames, layered_as, monkeypatch, family, opts, prefix, name, dtype):
    code = _code(name)
    _, llr32 = frames(code, 2.0, 37, seed=[b[0] for b in BINARY].index(family))
    np_type, scale = DTYPES[dtype][1], np.float32(SCALE[dtype])
    llr = (llr32 / scale).astype(np_type)
    dec = _binary_decoder(cuda, monkeypatch, code, opts, prefix, dtype, scale)
    oracle = dec if dtype == "float32" else _binary_decoder(cuda, monkeypatch, code, opts, prefix, "float32", 1.0)
    as_float = lambda x: np.asarray(x, np.float32) * scale  # noqa: E731  (what the kernel sees)
    ref = _reference(layered_as(code, dec), opts)
    what = f"{dec.kernel} {name}"
    rows = [0, 5, 15, 16, 17, 36]                          # first, chunk edges, middle, last
    got = _check_batch(dec, oracle, llr, _poison(llr, rows, 1), as_float, what, ref)
    assert 0 < got.valid.mean()                             # the good frames decode
    got = _check_batch(dec, oracle, llr[:9], _all_bad(llr[:9]), as_float, what + " (all bad)", ref)
    assert got.valid[0] and got.iterations[0] == 1          # all NaN: all erased, the zero word
    assert (got.bits[0] == 0).all() and got.valid[1]        # all +inf: the zero word too
    dec.close()
    if oracle is not dec:
        oracle.close()


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["wimax-2304-1/2", "odd-575"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_resident_kernel_flags_and_rule(cuda, frames, layered_as, name, dtype):
    """Latency preset, batches of up to 8 frames: the resident kernel (kernels/qc_resident.cu)."""
    code = _code(name)
    _, llr32 = frames(code, 2.0, 8, seed=3)
    scale = np.float32(SCALE[dtype])
    llr = (llr32 / scale).astype(DTYPES[dtype][1])
    kw = dict(preset="latency", max_iterations=MAX_ITER, devices=[0])
    dec = cuda.CudaDecoder(code, llr_dtype=dtype, llr_scale=scale, **kw)
    oracle = cuda.CudaDecoder(code, llr_dtype="float32", **kw) if dtype != "float32" else dec
    assert dec.engines[0].plan.resident_kernel is not None, dec.kernel
    as_float = lambda x: np.asarray(x, np.float32) * scale  # noqa: E731
    ref = _reference(layered_as(code, dec), {})
    what = f"resident {dec.kernel} {name}"
    _check_batch(dec, oracle, llr[:6], _poison(llr[:6], [0, 2, 5], 2), as_float, what, ref)
    _check_batch(dec, oracle, llr[:1], _poison(llr[:1], [0], 3), as_float, what + " (one frame)", ref)
    _check_batch(dec, oracle, llr, _all_bad(llr), as_float, what + " (all bad)", ref)
    dec.close()
    if oracle is not dec:
        oracle.close()


@pytest.mark.cuda
@pytest.mark.parametrize("family, opts, prefix", BINARY, ids=[b[0] for b in BINARY])
def test_int8_input_is_never_flagged(cuda, frames, monkeypatch, family, opts, prefix):
    code = gl.codes.get("wimax-2304-1/2")
    _, llr = frames(code, 3.0, 21, seed=8)
    q = np.clip(np.round(llr * 4), -128, 127).astype(np.int8)
    q[0, :] = -128
    q[1, :] = 127
    dec = _binary_decoder(cuda, monkeypatch, code, opts, prefix, "int8", 0.25)
    got = dec.decode(q)
    assert not got.bad_llr.any()
    assert got.valid[1] and got.valid[2:].mean() > 0.5     # flags are 0 or 1: the syndrome bit
    dec.close()


# GF(q) kernels: (id, code, NbCudaDecoder options, plan name)
NB = [
    ("minmax-flooding", "gf16-300-150", dict(algorithm="minmax", schedule="flooding"), "nb_minmax_q16"),
    ("mmma-layered", "gf8-224-112", dict(algorithm="mmma", schedule="layered"), "nb_minmax_q8"),
    ("fft-spa", "gf16-300-150", dict(algorithm="fft-spa"), "nb_fftspa_q16"),
    ("frame", "gf32-620-310", dict(algorithm="minmax", schedule="flooding", preset="latency"), "nb_frame_q32"),
]


@pytest.mark.cuda
@pytest.mark.parametrize("kind", ["bits", "symbols"])
@pytest.mark.parametrize("family, name, opts, plan", NB, ids=[c[0] for c in NB])
def test_gf_kernels_flag_and_rule(cuda, family, name, opts, plan, kind):
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder

    code = gl.codes.get(name)
    rng = np.random.default_rng(11)
    count = 13
    words = code.encode(rng.integers(0, code.q, (count, code.k), dtype=np.uint8))
    bits = gl.gf.GF(code.q).to_bits(words).reshape(count, -1)
    llr = gl.channel.awgn_llr(bits, gl.channel.sigma_from_ebn0(2.5, code.rate), rng)
    if kind == "symbols":
        llr = gl.channel.bit_llr_to_symbol_llr(llr, code.q)
    kw = dict(opts, max_iterations=MAX_ITER, devices=[0])
    if opts.get("preset") != "latency":
        kw.update(streams=2, chunk_frames=5)
    dec = NbCudaDecoder(code, **kw)
    assert dec.engines[0].plan.name == plan
    as_float = lambda x: np.asarray(x, np.float32)  # noqa: E731
    ref = None
    if family == "minmax-flooding":                  # Min-Max: the reference bit for bit
        ref = gl.Decoder(code, backend="reference", algorithm="minmax", schedule="flooding",
                         max_iterations=MAX_ITER).decode
    what = f"{plan} {kind}"
    got = _check_batch(dec, dec, llr, _poison(llr, [0, 4, 5, 9, 12], 4), as_float, what, ref)
    assert got.valid.mean() > 0.3
    _check_batch(dec, dec, llr[:6], _all_bad(llr[:6]), as_float, what + " (all bad)")
    dec.close()


def test_saturation_and_flag_constants_match_the_host():
    """kernels/llr_load.cuh's kLlrSaturation is gpuldpc.bad_llr.LLR_SATURATION, and its flag bit
    is the one gpuldpc.cuda.engine.split_flags reads as bad_llr (runs without a GPU)."""
    text = (KERNELS / "llr_load.cuh").read_text()
    sat = re.search(r"constexpr float kLlrSaturation = ([0-9.]+)f;", text)
    assert sat and float(sat.group(1)) == bad_llr.LLR_SATURATION == 2.0 ** 64
    assert np.float32(sat.group(1)) == np.float32(2.0 ** 64)      # exact in float32
    flag = re.search(r"constexpr unsigned char kBadLlrFlag = (\d+);", text)
    assert flag and int(flag.group(1)) == 2
    from gpuldpc.cuda.engine import split_flags

    valid, bad = split_flags(np.arange(4, dtype=np.uint8).repeat(20))
    np.testing.assert_array_equal(bad, np.arange(4).repeat(20) >= int(flag.group(1)))
    np.testing.assert_array_equal(valid, np.arange(4).repeat(20) % 2 == 1)
    for source in ("qc_decode.cuh", "nb_common.cuh"):
        assert '#include "llr_load.cuh"' in (KERNELS / source).read_text(), source
