"""gl.Decoder(packed=True) on the cuda backend: the kernels' packed decisions are the
numpy.packbits of the unpacked decoder's, land once in page-locked blocks (info a view where
whole bytes hold it, else shifted on the GPU: CCSDS C2), for the throughput preset over several
streams, the resident latency kernel, binary16 with int8 input, and 5G NR blocks recovered on
the GPU.  The test without the ``cuda`` marker needs no GPU (the stage plan, kernel faked)."""
import numpy as np
import pytest

import gpuldpc as gl

OPTIONS = pytest.mark.parametrize("options", [
    dict(streams=3, chunk_frames=64),
    dict(precision="float16", llr_dtype="int8", llr_scale=0.25, streams=2, chunk_frames=70),
    dict(preset="latency"),                      # WiMAX: the resident kernel
], ids=["float32-streams", "binary16-int8", "latency"])


def _same_packed(got, want, n_info):
    np.testing.assert_array_equal(got.bits, np.packbits(want.bits, axis=1))
    np.testing.assert_array_equal(np.unpackbits(got.info, axis=1, count=n_info), want.info)
    for field in ("iterations", "valid", "bad_llr"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)


def _packed_and_unpacked(frames, code, ebn0_db, count, seed, iterations, options):
    """(LLRs, the unpacked decoder's result, the packed decoder, its result) of ``count`` noisy
    frames (int8 where ``options`` say so), the packed result checked against the unpacked."""
    _, llr = frames(code, ebn0_db, count, seed=seed)
    if options.get("llr_dtype") == "int8":
        llr = np.clip(np.round(llr * 4), -127, 127).astype(np.int8)
    settings = dict(backend="cuda", devices=[0], max_iterations=iterations, **options)
    want = gl.Decoder(code, **settings).decode(llr)
    dec = gl.Decoder(code, packed=True, **settings)
    got = dec.decode(llr)
    _same_packed(got, want, code.k)
    return llr, want, dec, got


def _same_from_pinned_and_into_out(dec, llr, want, got, k):
    pinned = dec.pinned_llr(llr.shape[0])
    pinned[:] = llr
    _same_packed(dec.submit(pinned).result(), want, k)
    out = np.zeros_like(got.bits)
    res = dec.decode(llr, out=out)
    assert res.bits is out
    np.testing.assert_array_equal(out, got.bits)
    np.testing.assert_array_equal(res.info, got.info)


@pytest.mark.cuda
@OPTIONS
def test_packed_equals_unpacked(cuda, frames, options):
    code = gl.codes.get("wimax-2304-1/2")
    llr, want, dec, got = _packed_and_unpacked(frames, code, 1.6, 6 if options.get("preset") else 1100, 31, 8,
                                               options)
    assert got.bits.shape == (llr.shape[0], 288)
    assert cuda.is_pinned(got.bits) or options.get("preset")          # throughput: landed once, by DMA
    assert np.shares_memory(got.info, got.bits)                      # k = 1152: whole bytes, a view
    assert 0 < want.valid.sum() < llr.shape[0] or options.get("preset")
    _same_from_pinned_and_into_out(dec, llr, want, got, code.k)


@pytest.mark.cuda
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


@pytest.mark.cuda
def test_packed_results_stay_on_the_host(cuda):
    dec = gl.Decoder(gl.codes.get("wimax-576-1/2"), backend="cuda", devices=[0], packed=True)
    with pytest.raises(ValueError, match="out_device=True is not offered with packed=True"):
        dec.decode(np.zeros((2, 576), np.float32), out_device=True)


@pytest.mark.cuda
@OPTIONS
def test_c2_information_bits_shifted_out_of_the_packed_decisions(cuda, frames, options):
    """CCSDS C2's 7136 information bits start at decoded bit 18: the throughput preset shifts
    them to bit 0 on the GPU (``transport/packed_run``) and copies the rows into ``info`` by DMA;
    the latency preset shifts on the host.  Either way ``info`` is the packed unpacked ``info``
    (and ``numpy.packbits`` of it: the low bits of its last byte 0), with ``out=`` and from
    page-locked input too."""
    code = gl.codes.get("ccsds-c2")
    throughput = not options.get("preset")
    llr, want, dec, got = _packed_and_unpacked(frames, code, 3.6, 203 if throughput else 4, 33, 10, options)
    assert got.info.shape == (llr.shape[0], 892) and got.bits.shape == (llr.shape[0], 1023)
    np.testing.assert_array_equal(got.info, np.packbits(want.info, axis=1))
    assert not np.shares_memory(got.info, got.bits)
    assert dec._impl._impl.decoder.engines[0].plan.name.endswith("transport/packed_run") == throughput
    assert cuda.is_pinned(got.info) == throughput                    # landed by DMA, not made on the host
    assert 0 < want.valid.sum() < llr.shape[0] or not throughput
    _same_from_pinned_and_into_out(dec, llr, want, got, code.k)

def test_packed_info_plan_shifts_the_inner_decisions_into_the_stage_buffer(fake_kernels):
    """PackedInfoPlan (no GPU: kernel faked): the inner launch first, its scratch after the
    stage buffer (256-aligned), then ``packed_run`` from the slot's decisions (``out[0]``) into
    the stage buffer, a byte a thread; ``info_rows`` the stage buffer, ceil(count/8) bytes a
    row; no resident kernel; other attributes the inner plan's."""
    from gpuldpc.cuda import stages

    ctx = fake_kernels({("transport", "packed_run"): stages.RUN_ARGS})

    inner = ctx.inner_plan("sp34_f16_sh_layered_i8", 1023, frame_bytes=8160, scratch_per_frame=8)
    plan = stages.PackedInfoPlan(ctx, inner, 18, 18 + 7136)
    assert plan.frame_bytes("llr") == 8160 and plan.bits_width == 1023 and plan.resident(None) is None
    assert plan.name == "sp34_f16_sh_layered_i8 + transport/packed_run"
    capacity = 100
    rows = -(-capacity * 892 // 256) * 256
    assert plan.scratch_bytes(capacity) == rows + 800
    assert plan.info_rows(1 << 20) == (1 << 20, 892)
    plan.launch("stream", 70, 4096, "llr", (5 << 20, "it", "flags", 0), 1 << 20, capacity)
    decode, (name, grid, block, args) = ctx.calls
    assert decode == ("decode", 70, 4096, (5 << 20, "it", "flags", 0), (1 << 20) + rows, capacity)
    assert name == "packed_run" and grid == (-(-70 * 892 // 256), 1) and block == (256, 1, 1)
    assert args == (5 << 20, 1 << 20, 1023, 18, 7136, 70)


def test_info_at_outside_the_decisions_is_refused():
    """``CudaDecoder(info_at=...)`` (where ``DecodeResult.info`` lies; make_shaped passes a shaped
    code's): a slice of step 1 or positions within the n decisions, else ValueError naming them."""
    from gpuldpc.cuda.decoder import _checked_info_at

    code = gl.codes.get("wimax-576-1/2")
    assert _checked_info_at(slice(18, 300), code) == slice(18, 300)
    assert _checked_info_at(slice(5, None), code) == slice(5, None)
    np.testing.assert_array_equal(_checked_info_at([3, 1, 575], code), [3, 1, 575])
    for bad in (slice(0, 600), slice(0, 100, 2), slice(-4, None), slice(9, 9), [1, 2, 576], [-1], [0.5], []):
        with pytest.raises(ValueError, match=r"info_at must be a slice of step 1 or integer positions within the "
                                             r"576 decisions of code 'wimax-576-1/2'"):
            _checked_info_at(bad, code)
