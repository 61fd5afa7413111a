"""GF(q) block shapes by measurement (gpuldpc.cuda.nb_autotune): what a throughput decoder times when
it is made, what it keeps, and that the shape changes the speed only, never the decisions."""
import numpy as np
import pytest

import gpuldpc as gl


@pytest.mark.cuda
@pytest.mark.parametrize("name, algorithm, schedule, ebn0", [
    ("gf32-620-310", "minmax", "flooding", 2.5),
    ("gf16-300-150", "tmm1", "layered", 2.25),
])
def test_measured_shape_decodes_as_every_other(cuda, frames, same, monkeypatch, name, algorithm, schedule, ebn0):
    from gpuldpc.cuda import nb_autotune
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder
    from gpuldpc.cuda.nb_layout import ranked_shapes

    code = gl.codes.get(name)
    dec = NbCudaDecoder(code, algorithm, schedule, max_iterations=10)
    plan = dec.engines[0].plan
    ranked = ranked_shapes(algorithm, dec.layout, dec.engines[0].ctx.limits,
                           dec.kernel_attributes, dec.rows_at_once)[:nb_autotune.CANDIDATES]
    rates = dec.tuning
    assert rates is not None and sorted(rates) == sorted(s.units for s in ranked)
    assert all(rate > 0 for rate in rates.values())
    kept = dec.shape.units
    first = ranked[0].units
    assert kept == first or rates[kept] > (1 + nb_autotune.SAME) * rates[first]
    assert rates[kept] == max(rates.values()) or kept == first
    assert plan.frames_per_wave == dec.engines[0].ctx.limits.sm_count * dec.shape.blocks_per_sm

    # measured once a process: a second decoder of the same key times nothing
    count = len(nb_autotune.measured)
    again = NbCudaDecoder(code, algorithm, schedule, max_iterations=10)
    assert len(nb_autotune.measured) == count and again.tuning == rates and again.shape == dec.shape

    # the decisions of every shape timed are the same
    _, llr = frames(code, ebn0, 96, seed=5)
    want = dec.decode(llr)
    assert 0 < want.valid.sum() < 96, "the SNR point should mix decoded and failed frames"
    for units in rates:
        if units != kept:
            same(NbCudaDecoder(code, algorithm, schedule, max_iterations=10, units=units).decode(llr), want)

    # switched off: the model's first shape, nothing timed
    monkeypatch.setenv(nb_autotune.ENV, "0")
    off = NbCudaDecoder(code, algorithm, schedule, max_iterations=10)
    assert off.tuning is None and off.shape.units == first
