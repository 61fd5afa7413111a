"""gl.Decoder(packed=True) on the cuda backend: the kernels' packed decisions are the
numpy.packbits of the unpacked decoder's, land once in page-locked blocks (info a view where
whole bytes hold it), for the throughput preset over several streams, the resident latency
kernel, binary16 with int8 input, and 5G NR blocks recovered on the GPU."""
import numpy as np
import pytest

import gpuldpc as gl

pytestmark = pytest.mark.cuda


def _same_packed(got, want, n_info):
    np.testing.assert_array_equal(got.bits, np.packbits(want.bits, axis=1))
    np.testing.assert_array_equal(np.unpackbits(got.info, axis=1, count=n_info), want.info)
    for field in ("iterations", "valid", "bad_llr"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)


@pytest.mark.parametrize("options", [
    dict(streams=3, chunk_frames=256),
    dict(precision="float16", llr_dtype="int8", llr_scale=0.25, streams=2, chunk_frames=300),
    dict(preset="latency"),
], ids=["float32-streams", "binary16-int8", "latency-resident"])
def test_packed_equals_unpacked(cuda, frames, options):
    code = gl.codes.get("wimax-2304-1/2")
    _, llr = frames(code, 1.6, 6 if options.get("preset") else 1100, seed=31)
    if options.get("llr_dtype") == "int8":
        llr = np.clip(np.round(llr * 4), -127, 127).astype(np.int8)
    settings = dict(backend="cuda", devices=[0], max_iterations=8, **options)
    want = gl.Decoder(code, **settings).decode(llr)
    dec = gl.Decoder(code, packed=True, **settings)
    got = dec.decode(llr)
    _same_packed(got, want, code.k)
    assert got.bits.shape == (llr.shape[0], 288)
    assert cuda.is_pinned(got.bits) or options.get("preset")          # throughput: landed once, by DMA
    assert np.shares_memory(got.info, got.bits)                      # k = 1152: whole bytes, a view
    assert 0 < want.valid.sum() < llr.shape[0] or options.get("preset")
    pinned = dec.pinned_llr(llr.shape[0])
    pinned[:] = llr
    _same_packed(dec.submit(pinned).result(), want, code.k)
    out = np.zeros((llr.shape[0], 288), np.uint8)
    assert dec.decode(llr, out=out).bits is out
    np.testing.assert_array_equal(out, got.bits)


@pytest.mark.parametrize("k, e, ebn0_db", [(8448, 9504, 4.5), (1001, 1500, 3.0)], ids=["bg1-z384", "bg2-filler"])
def test_packed_nr_blocks_recovered_on_the_gpu(cuda, k, e, ebn0_db):
    code = gl.codes.nr(k, e)
    rng = np.random.default_rng(32)
    info = rng.integers(0, 2, (40, code.k), dtype=np.uint8)
    llr = gl.channel.transmit(code, code.encode(info), ebn0_db, rng)
    q = np.clip(np.round(llr * 4), -127, 127).astype(np.int8)
    settings = dict(backend="cuda", devices=[0], max_iterations=5, early_stop=False, precision="float16",
                    llr_dtype="int8", llr_scale=0.25)
    want = gl.Decoder(code, **settings).decode(q)
    got = gl.Decoder(code, packed=True, **settings).decode(q)
    _same_packed(got, want, code.k)
    assert got.bits.shape == (40, (len(code.decoded_positions) + 7) // 8)
    assert np.shares_memory(got.info, got.bits)                      # the information bits lead: a view
    assert (np.unpackbits(got.info, axis=1, count=code.k) != info).any(axis=1).mean() <= 0.1


def test_packed_results_stay_on_the_host(cuda):
    dec = gl.Decoder(gl.codes.get("wimax-576-1/2"), backend="cuda", devices=[0], packed=True)
    with pytest.raises(ValueError, match="out_device=True is not offered with packed=True"):
        dec.decode(np.zeros((2, 576), np.float32), out_device=True)
