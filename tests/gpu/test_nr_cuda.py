"""5G NR codes on the cuda backend (issue 14 item 3): the existing QC kernels take both base
graphs, BG1 at Zc = 384 included, and give the cpu backend's bits (which are the reference
decoder's, tests/decoders/test_nr_decode.py) for layered min-sum in float32, from the E
received LLRs of a rate-matched code block (rate recovery on the host, the mother code's
kernels on the GPU); a shape that does not fit the device (flooding on BG1 Zc >= 288) makes
``backend="auto"`` fall back to the cpu backend instead of failing."""
import numpy as np
import pytest

import gpuldpc as gl

pytestmark = pytest.mark.cuda
BLOCKS = [(8448, 25344, 0), (8448, 9504, 0), (8448, 12672, 2), (3840, 11520, 0), (500, 1000, 3), (40, 120, 1)]


def _received(code, frames, ebn0_db, seed):
    rng = np.random.default_rng(seed)
    info = rng.integers(0, 2, (frames, code.k), dtype=np.uint8)
    sent = code.encode(info)
    sigma = gl.channel.sigma_from_ebn0(ebn0_db, code.k / code.n)
    return info, gl.channel.awgn_llr(sent, sigma, rng).astype(np.float32)


@pytest.mark.parametrize("k,e,rv", BLOCKS, ids=lambda v: str(v))
def test_nr_block_on_the_gpu_gives_the_cpu_bits(cuda, k, e, rv):
    code = gl.codes.nr(k, e, rv=rv)
    info, llr = _received(code, 96, 3.0 if e > 2 * k else 4.5, seed=k + e + rv)
    settings = dict(algorithm="nms", schedule="layered", max_iterations=5, early_stop=True)
    want = gl.Decoder(code, backend="cpu", **settings).decode(llr)
    got = gl.Decoder(code, backend="cuda", devices=[0], **settings).decode(llr)
    for field in ("bits", "info", "iterations", "valid", "bad_llr"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)
    assert got.info.shape == (96, k)
    if rv in (0, 3):                    # self-decodable; rv 1 and 2 alone carry few systematic bits
        assert (got.info == info).all(axis=1).mean() > 0.5


def test_nr_gnu_radio_sign_and_bad_llrs_on_the_gpu(cuda):
    code = gl.codes.nr(8448, 12672)
    _, llr = _received(code, 32, 3.0, seed=5)
    llr[4, 100] = np.nan
    want = gl.Decoder(code, backend="cuda", on_bad_llr="erase", devices=[0]).decode(llr)
    got = gl.Decoder(code, backend="cuda", on_bad_llr="erase", positive_llr_bit=1, devices=[0]).decode(-llr)
    np.testing.assert_array_equal(got.info, want.info)
    assert got.bad_llr.tolist() == [i == 4 for i in range(32)]


def test_a_shape_the_device_cannot_hold_falls_back_to_the_cpu(cuda):
    code = gl.codes.get("nr-bg1-z384")
    with pytest.raises(gl.BackendUnavailable, match="shared memory"):
        gl.Decoder(code, backend="cuda", schedule="flooding", devices=[0])
    dec = gl.Decoder(code, schedule="flooding", max_iterations=2)
    assert dec.backend == "cpu"
