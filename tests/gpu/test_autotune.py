"""Launch shapes by measurement (gpuldpc.cuda.autotune): what a throughput decoder times when it is
made, what it keeps, that a second decoder of the same key times nothing, and that the shape changes
the speed only, never the decisions (binary and GF(q) kernels)."""
import numpy as np
import pytest

import gpuldpc as gl


def _check_choice(rates, kept, first):
    from gpuldpc.cuda import autotune

    assert rates is not None and len(rates) >= 2 and first in rates and kept in rates
    assert all(rate > 0 for rate in rates.values())
    if kept != first:
        assert rates[kept] == max(rates.values()) and rates[kept] > (1 + autotune.SAME) * rates[first]


@pytest.mark.cuda
@pytest.mark.parametrize("name, algorithm, schedule, ebn0", [
    ("gf32-620-310", "minmax", "flooding", 2.5),
    ("gf16-300-150", "tmm1", "layered", 2.25),
])
def test_gf_q_measured_shape(cuda, frames, same, monkeypatch, name, algorithm, schedule, ebn0):
    from gpuldpc.cuda import autotune
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder
    from gpuldpc.cuda.nb_layout import ranked_shapes

    code = gl.codes.get(name)
    dec = NbCudaDecoder(code, algorithm, schedule, max_iterations=10)
    ctx = dec.engines[0].ctx
    ranked = ranked_shapes(algorithm, dec.layout, ctx.limits, dec.kernel_attributes, dec.rows_at_once)
    assert sorted(dec.tuning) == sorted(s.units for s in ranked[:autotune.CANDIDATES])
    _check_choice(dec.tuning, dec.shape.units, ranked[0].units)
    assert dec.engines[0].plan.frames_per_wave == ctx.limits.sm_count * dec.shape.blocks_per_sm

    count = len(autotune.measured)
    again = NbCudaDecoder(code, algorithm, schedule, max_iterations=10)
    assert len(autotune.measured) == count and again.tuning == dec.tuning and again.shape == dec.shape

    _, llr = frames(code, ebn0, 96, seed=5)
    want = dec.decode(llr)
    assert 0 < want.valid.sum() < 96, "the SNR point should mix decoded and failed frames"
    for units in dec.tuning:
        if units != dec.shape.units:
            same(NbCudaDecoder(code, algorithm, schedule, max_iterations=10, units=units).decode(llr), want)

    monkeypatch.setenv(autotune.ENV, "0")
    off = NbCudaDecoder(code, algorithm, schedule, max_iterations=10)
    assert off.tuning is None and off.shape == ranked[0]


@pytest.mark.cuda
@pytest.mark.parametrize("precision, llr_dtype", [("float16", "int8"), ("float32", "float32")])
def test_binary_measured_shape(cuda, frames, same, monkeypatch, precision, llr_dtype):
    from gpuldpc.cuda import CudaDecoder, autotune
    from gpuldpc.cuda.decoder import kernel_pairs, kernel_state_bytes
    from gpuldpc.cuda.tuning import ranked_shapes

    code = gl.codes.get("wimax-2304-1/2")
    kw = dict(max_iterations=10, precision=precision, llr_dtype=llr_dtype,
              llr_scale=0.25 if llr_dtype == "int8" else 1.0)
    dec = CudaDecoder(code, **kw)
    plan, ctx = dec.engines[0].plan, dec.engines[0].ctx
    pack, blocks = kernel_pairs(dec.kernel)
    ranked = ranked_shapes(dec.layout, ctx.limits, plan.attributes, False, frames_per_thread=pack, row_blocks=blocks,
                           state_bytes=kernel_state_bytes(dec.kernel, dec.layout, plan.attributes.max_threads))
    assert sorted(dec.tuning) == sorted(s.frames_per_block for s in ranked[:autotune.CANDIDATES])
    _check_choice(dec.tuning, plan.shape.frames_per_block, ranked[0].frames_per_block)
    assert plan.frames_per_wave == plan.shape.frames_per_wave and dec.engines[0].chunk == 2 * plan.frames_per_wave

    count = len(autotune.measured)
    again = CudaDecoder(code, **kw)
    assert len(autotune.measured) == count and again.engines[0].plan.shape == plan.shape
    # a decoder given chunk_frames times its shapes on launches of that many frames: a key of its own
    chunked = CudaDecoder(code, chunk_frames=4000, **kw)
    assert len(autotune.measured) == count + 1 and sorted(chunked.tuning) == sorted(dec.tuning)

    _, llr = frames(code, 1.75, 200, seed=3)
    if llr_dtype == "int8":
        llr = np.clip(np.round(llr * 4), -127, 127).astype(np.int8)     # steps of llr_scale 0.25
    want = dec.decode(llr)
    assert 0 < want.valid.sum() < 200, "the SNR point should mix decoded and failed frames"
    for fpb in dec.tuning:
        if fpb != plan.shape.frames_per_block:
            same(CudaDecoder(code, frames_per_block=fpb, **kw).decode(llr), want)

    monkeypatch.setenv(autotune.ENV, "0")
    off = CudaDecoder(code, **kw)
    assert off.tuning is None and off.engines[0].plan.shape == ranked[0]
