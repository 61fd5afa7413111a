"""gl.MixedDecoder on the cuda backend (issue 16 item 1): three codes in random order decoded in
one call give, frame for frame, what gl.Decoder gives for each code's frames on their own (bit
for bit, iterations included: each frame stops on its own), with the groups gathered straight
into each decoder's page-locked input and split into pieces that overlap on the streams; NaN
frames in one group are named by their input position."""
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
    """Each code's frames of ``res`` equal gl.Decoder(code, **options) on them alone."""
    for c, name in enumerate(NAMES):
        code = gl.codes.get(name)
        rows = np.flatnonzero(idx == c)
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
    assert dec.backends == ("cuda",) * 3
    res = dec.decode(llr, idx)
    assert_per_code(res, idx, llr, **{k: v for k, v in options.items() if k != "devices"})
    assert res.iterations.min() <= 3 and res.iterations.max() == 10 and 0 < res.valid.mean() < 1
    assert not res.bad_llr.any()                     # the NaN row tails are never read
    # the groups went straight into each decoder's page-locked input, kept for the next call
    buffers = list(dec._buffers)
    assert all(cuda.is_pinned(b) for b in buffers)
    again = dec.decode(llr, idx)
    assert all(a is b for a, b in zip(dec._buffers, buffers))
    np.testing.assert_array_equal(again.bits, res.bits)
    np.testing.assert_array_equal(again.iterations, res.iterations)
    dec.close()


def test_no_early_stop_int8_binary16_and_soft_output(cuda):
    """The benchmark's second configuration (int8 LLRs, binary16 messages, no early stop) and
    soft output (float32 messages) give the per-code results too."""
    idx, llr = mixed_batch(3000, seed=32)
    q = np.clip(np.round(np.nan_to_num(llr) / 0.25), -127, 127).astype(np.int8)
    options = dict(max_iterations=10, early_stop=False, llr_dtype="int8", llr_scale=0.25, precision="float16")
    res = gl.MixedDecoder(NAMES, backend="cuda", devices=[0], **options).decode(q, idx)
    assert (res.iterations == 10).all()
    assert_per_code(res, idx, q, **options)
    soft = gl.MixedDecoder(NAMES, backend="cuda", devices=[0], soft_output="posterior").decode(llr, idx)
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
