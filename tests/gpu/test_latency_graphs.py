"""The latency presets' launched kernels replayed as CUDA graphs (gpuldpc.cuda.graphs): a
decoder's calls after its first give what a fresh decoder's first call (no graph) gives, frame
for frame, for the GF(q) one-frame kernel, 5G NR (recovery + decoding kernel) in float32 and
int8 + binary16, and the binary16 latency kernel; a graph is kept per shape."""
import numpy as np
import pytest

import gpuldpc as gl

pytestmark = pytest.mark.cuda


def _cases():
    nb = gl.codes.get("gf32-620-310")
    nr = gl.codes.nr(8448, 9504)
    wimax = gl.codes.get("wimax-2304-1/2")
    return [
        ("gf32-one-frame", nb, dict(algorithm="minmax", max_iterations=10, resident=False), 3.0, "bits"),
        ("nr-float32", nr, dict(max_iterations=5), 4.5, None),
        ("nr-int8-binary16", nr, dict(max_iterations=5, precision="float16", llr_dtype="int8", llr_scale=0.25),
         4.5, "int8"),
        ("wimax-binary16", wimax, dict(max_iterations=10, precision="float16"), 1.8, None),
    ]


def _llrs(code, ebn0_db, frames, form, seed):
    rng = np.random.default_rng(seed)
    if not code.is_binary:
        words = code.encode(rng.integers(0, code.q, (frames, code.k), dtype=np.uint8))
        bits = gl.gf.GF(code.q).to_bits(words).reshape(frames, -1)
        return gl.channel.awgn_llr(bits, gl.channel.sigma_from_ebn0(ebn0_db, code.k / code.n), rng)
    info = rng.integers(0, 2, (frames, code.k), dtype=np.uint8)
    llr = gl.channel.transmit(code, code.encode(info), ebn0_db, rng)
    return np.clip(np.round(llr * 4), -127, 127).astype(np.int8) if form == "int8" else llr


@pytest.mark.parametrize("name, code, settings, ebn0_db, form", _cases(), ids=[c[0] for c in _cases()])
def test_replayed_calls_equal_first_calls(cuda, name, code, settings, ebn0_db, form):
    settings = dict(backend="cuda", devices=[0], preset="latency", early_stop=False, **settings)
    llr = _llrs(code, ebn0_db, 7, form, seed=41)
    dec = gl.Decoder(code, **settings)
    low = dec._impl.decoder if hasattr(dec._impl, "decoder") else dec._impl._impl.decoder
    slot = low._small
    assert slot is not None and slot.resident is None            # launched, not resident: graphs apply
    got = [dec.decode(llr[i:i + 1]) for i in range(6)] + [dec.decode(llr[5:7]), dec.decode(llr[5:7])]
    assert any(key[0] == 1 for key in slot.graphs._execs)          # the one-frame calls: a graph
    for i, res in enumerate(got):
        rows = slice(i, i + 1) if i < 6 else slice(5, 7)
        fresh = gl.Decoder(code, **settings)
        want = fresh.decode(llr[rows])                             # a first call: no graph
        fresh.close()
        for field in ("bits", "info", "iterations", "valid", "bad_llr"):
            np.testing.assert_array_equal(getattr(res, field), getattr(want, field), err_msg=f"call {i} {field}")
    assert sum(r.valid.sum() for r in got[:6]) >= 3
    dec.close()
    assert slot.graphs._execs == {}
