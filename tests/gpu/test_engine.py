"""The stream engine shared by the binary and GF(q) decoders (gpuldpc/cuda/engine.py).

Device-resident input (``decode_device``) must give exactly what ``decode`` gives on the
same LLRs; the GF(q) decoder must split a batch over every visible GPU and queue
several tickets like the binary one; bad calls name what is wrong.
"""
import numpy as np
import pytest

import gpuldpc as gl

pytestmark = pytest.mark.cuda


def _same(got, want):
    np.testing.assert_array_equal(got.bits, want.bits)
    np.testing.assert_array_equal(got.info, want.info)
    np.testing.assert_array_equal(got.iterations, want.iterations)
    np.testing.assert_array_equal(got.valid, want.valid)


def _nb_llrs(code, frames, ebn0, seed):
    rng = np.random.default_rng(seed)
    words = code.encode(rng.integers(0, code.q, (frames, code.k), dtype=np.uint8))
    bits = gl.gf.GF(code.q).to_bits(words).reshape(frames, -1)
    bit_llr = gl.channel.awgn_llr(bits, gl.channel.sigma_from_ebn0(ebn0, code.k / code.n), rng)
    return words, bit_llr, gl.channel.bit_llr_to_symbol_llr(bit_llr, code.q)


@pytest.mark.parametrize("name, packed", [("wimax-2304-1/2", False), ("wifi-648-1/2", True)])
def test_binary_decode_device_equals_decode(cuda, frames, name, packed):
    code = gl.codes.get(name)
    cw, llr = frames(code, 1.5, 700, seed=3)
    dec = gl.Decoder(code, backend="cuda", devices=[0], streams=2, chunk_frames=256, packed=packed)
    want = dec.decode(llr)
    drv = cuda.driver()
    with dec._impl.decoder.engines[0].ctx.active():
        dev = drv.to_device(llr)
    got = dec.decode_device(dev, llr.shape[0])
    _same(got, want)
    assert got.bits.shape == (700, (code.n + 7) // 8 if packed else code.n)      # packed=True: gpuldpc.packed_bits
    bits = np.unpackbits(got.bits, axis=1, count=code.n) if packed else got.bits
    assert (bits[got.valid] == cw[got.valid]).all() and got.valid.mean() > 0.5


@pytest.mark.parametrize("name, algorithm, schedule", [("gf32-744-653", "mmma", "layered"),
                                                       ("gf16-300-150", "minmax", "flooding"),
                                                       ("gf64-384-128", "fft-spa", "flooding")])
def test_nb_decode_device_equals_decode(cuda, name, algorithm, schedule):
    code = gl.codes.get(name)
    words, bit_llr, sym_llr = _nb_llrs(code, 300, 4.0, seed=11)
    dec = gl.Decoder(code, algorithm=algorithm, schedule=schedule, backend="cuda", devices=[0],
                     chunk_frames=64, streams=3)
    want = dec.decode(sym_llr)
    drv = cuda.driver()
    with dec._impl.decoder.engines[0].ctx.active():
        dev_sym, dev_bits = drv.to_device(sym_llr), drv.to_device(bit_llr)
    _same(dec.decode_device(dev_sym, 300), want)
    _same(dec._impl.decoder.decode_device(dev_bits, 300, kind="bits"), dec.decode(bit_llr))
    assert (want.bits[want.valid] == words[want.valid]).all() and want.valid.mean() > 0.5


def test_nb_every_gpu_and_tickets(cuda):
    """A GF(q) batch over every visible GPU equals one GPU's; tickets may overlap."""
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder

    code = gl.codes.get("gf32-620-310")
    _, bit_llr, _ = _nb_llrs(code, 1000, 3.0, seed=5)
    one = NbCudaDecoder(code, "minmax", "flooding", devices=[0], chunk_frames=100)
    every = NbCudaDecoder(code, "minmax", "flooding", devices="all", chunk_frames=100)
    assert len(every.engines) == cuda.driver().Device.count()
    want = one.decode(bit_llr)
    _same(every.decode(bit_llr), want)
    t1 = one.submit(bit_llr[:600])
    t2 = one.submit(bit_llr[600:])
    r2, r1 = one.result(t2), one.result(t1)
    _same(r1, one.decode(bit_llr[:600]))
    np.testing.assert_array_equal(np.concatenate([r1.bits, r2.bits]), want.bits)
    assert one.preferred_batch("throughput") == 2 * one.streams * one.chunk_frames


def test_decode_device_bad_calls(cuda):
    code = gl.codes.get("wifi-648-1/2")
    dec = cuda.CudaDecoder(code, devices=[0])
    drv = cuda.driver()
    with dec.engines[0].ctx.active():
        dev = drv.mem_alloc(4 * code.n)
    with pytest.raises(ValueError, match="frames must be an integer >= 1"):
        dec.decode_device(dev, 0)
    with pytest.raises(ValueError, match="device=7 is not one of this decoder's devices"):
        dec.decode_device(dev, 1, device=7)


def test_nb_out_of_memory_names_the_need(cuda):
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder

    with pytest.raises(MemoryError, match=r"gf256-384-128.*MiB of device memory.*lower streams"):
        NbCudaDecoder(gl.codes.get("gf256-384-128"), "fft-spa", devices=[0], streams=4, chunk_frames=10**7)


@pytest.mark.parametrize("batch", [1, 6, 300])
@pytest.mark.parametrize("pinned", [False, True])
def test_zero_copy_latency_path_equals_throughput_path(cuda, frames, layered_as, batch, pinned):
    """The latency preset reads the LLRs and writes its results in mapped host memory (the
    throughput path decodes the code with its layers in the latency kernel's order)."""
    code = gl.codes.get("wimax-2304-1/2")
    cw, llr = frames(code, 2.0, batch, seed=batch)
    fast = cuda.CudaDecoder(code, devices=[0], preset="latency")
    bulk = cuda.CudaDecoder(layered_as(code, fast), devices=[0])
    assert fast.engines[0].plan.mapped_input and fast.engines[0].plan.mapped_output
    assert not (bulk.engines[0].plan.mapped_input or bulk.engines[0].plan.mapped_output)
    src = fast.pinned_llr(batch) if pinned else llr.copy()
    src[:] = llr
    out = fast.pinned_bits(batch) if pinned else None
    got = fast.decode(src, out=out)
    _same(got, bulk.decode(llr))
    if pinned:
        assert got.bits is out
    _same(fast.decode(src), got)                     # the slot reused
    assert fast.kernel_seconds(llr, frames=batch, repeats=2) > 0


def test_nb_latency_preset_runs_the_frame_kernel(cuda):
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder

    code = gl.codes.get("gf32-620-310")
    _, bit_llr, _ = _nb_llrs(code, 5, 3.0, seed=8)
    fast = NbCudaDecoder(code, "minmax", "flooding", devices=[0], preset="latency")
    bulk = NbCudaDecoder(code, "minmax", "flooding", devices=[0])
    assert fast.engines[0].plan.name == "nb_frame_q32"
    assert fast.engines[0].plan.mapped_output and not fast.engines[0].plan.mapped_input
    _same(fast.decode(bit_llr), bulk.decode(bit_llr))
    _same(fast.decode(bit_llr[:1]), bulk.decode(bit_llr[:1]))
    assert NbCudaDecoder(code, "mmma", "layered", devices=[0], preset="latency").engines[0].plan.name == \
        "nb_minmax_q32"
