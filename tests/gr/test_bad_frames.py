"""A live receive chain never dies (issue 19), in real GNU Radio flowgraphs.

``vector_source_f`` (320 frames, a ``seq`` tag on each) -> decoder block (batch 64,
GNU Radio's sign) -> ``vector_sink_b``, with frames holding NaN/+-inf LLRs placed as
in the issue (17, 18, 150, 299 NaN, 200 +inf), first, last, at a batch boundary and as
a whole batch: every frame leaves (``erase``, the bad ones tagged ``bad_llr``) or
exactly the bad ones are dropped with their tags (``drop``); the good frames' bits
are those ``gl.Decoder`` gives them alone, in order, with their tags; the stats port
and ``stats()`` count ``bad_llr_frames``.  The same for the GF(q) decoder and the PDU
decoder.  A backend fault on the third call moves the block to another backend with
no frame lost (``fallbacks`` = 1); a programming error ends the flowgraph with the
message instead of a hang.
"""
import threading
import time

import numpy as np
import pmt
import pytest
from gnuradio import blocks, gr

import gpuldpc as gl
from gnuradio import gpuldpc
from gpuldpc.errors import BackendFault

FRAMES, BATCH = 320, 64
LAYOUTS = {
    "issue": {17: np.nan, 18: np.nan, 150: np.nan, 299: np.nan, 200: np.inf},
    "first": {0: np.nan},
    "last": {319: -np.inf},
    "boundary": {63: np.nan, 64: np.inf},
    "whole batch": {f: np.nan for f in range(128, 192)},
}


def make_frames(code_name, frames, seed=19):
    """(code, textbook LLRs [frames, vlen] of random codewords at Eb/N0 = 3 dB)."""
    code = gl.codes.get(code_name)
    rng = np.random.default_rng(seed)
    info = rng.integers(0, code.q if not code.is_binary else 2, (frames, code.k), dtype=np.uint8)
    if code.is_binary:
        return code, gl.channel.transmit(code, code.encode(info), 3.0, rng).astype(np.float32)
    bits = gl.gf.GF(code.q).to_bits(code.encode(info)).reshape(frames, -1)
    sigma = gl.channel.sigma_from_ebn0(3.0, code.k / code.n)
    return code, gl.channel.awgn_llr(bits, sigma, rng).astype(np.float32)


def spoil(llr, layout):
    bad = llr.copy()
    for frame, value in layout.items():
        bad[frame, [3, 40]] = value
    return bad


def run_flowgraph(block, frames, out_vlen, timeout=120.0):
    """Push ``frames`` through ``block`` with a ``seq`` tag on every frame; (rows, sink tags).
    Fails instead of hanging when the flowgraph does not finish within ``timeout``."""
    tags = [gr.tag_utils.python_to_tag((i, pmt.intern("seq"), pmt.from_long(i))) for i in range(len(frames))]
    source = blocks.vector_source_f(np.asarray(frames).ravel().tolist(), False, frames.shape[1], tags)
    sink = blocks.vector_sink_b(out_vlen)
    tb = gr.top_block()
    tb.connect(source, block, sink)
    tb.start()
    finished = threading.Event()
    threading.Thread(target=lambda: (tb.wait(), finished.set()), daemon=True).start()
    if not finished.wait(timeout):
        tb.stop()
        pytest.fail(f"the flowgraph did not finish within {timeout} s")
    return np.array(sink.data(), dtype=np.uint8).reshape(-1, out_vlen), sink.tags()


def tags_by_item(tags, key):
    return {t.offset: pmt.to_python(t.value) for t in tags if pmt.symbol_to_string(t.key) == key}


@pytest.mark.parametrize("policy", ["erase", "drop"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_binary_decoder_bad_frames(backend, policy, layout):
    code, llr = make_frames("wifi-648-1/2", FRAMES)
    bad_frames = sorted(LAYOUTS[layout])
    good = np.setdiff1d(np.arange(FRAMES), bad_frames)
    expected = gl.Decoder(code, backend=backend).decode(llr[good])
    block = gpuldpc.ldpc_decoder("wifi-648-1/2", backend=backend, batch=BATCH, on_bad_llr=policy)
    out, tags = run_flowgraph(block, -spoil(llr, LAYOUTS[layout]), code.k)
    seq = tags_by_item(tags, "seq")
    marked = sorted(tags_by_item(tags, "bad_llr"))
    if policy == "erase":
        assert out.shape[0] == FRAMES
        assert seq == {i: i for i in range(FRAMES)}
        assert marked == bad_frames
        assert np.array_equal(out[good], expected.info)
    else:
        assert out.shape[0] == good.size
        assert seq == {i: int(f) for i, f in enumerate(good)}
        assert marked == []
        assert np.array_equal(out, expected.info)
    stats = block.stats()
    assert (stats["frames"], stats["bad_llr_frames"]) == (FRAMES, len(bad_frames))
    assert stats["dropped"] == (len(bad_frames) if policy == "drop" else 0)
    assert block.error is None


@pytest.mark.parametrize("policy", ["erase", "drop"])
def test_gf_decoder_bad_frames(backend, policy):
    layout = {0: np.nan, 31: np.inf, 32: np.nan, 95: -np.inf}
    code, llr = make_frames("gf16-300-150", 96)
    good = np.setdiff1d(np.arange(96), sorted(layout))
    expected = gl.Decoder(code, backend=backend).decode(llr[good])
    block = gpuldpc.nb_ldpc_decoder("gf16-300-150", backend=backend, batch=32, on_bad_llr=policy)
    out, tags = run_flowgraph(block, -spoil(llr, layout), code.k)
    if policy == "erase":
        assert out.shape[0] == 96 and sorted(tags_by_item(tags, "bad_llr")) == sorted(layout)
        assert np.array_equal(out[good], expected.info)
    else:
        assert np.array_equal(out, expected.info)
        assert tags_by_item(tags, "seq") == {i: int(f) for i, f in enumerate(good)}
    assert block.stats()["bad_llr_frames"] == len(layout)


@pytest.mark.parametrize("policy", ["erase", "drop"])
def test_pdu_decoder_bad_frames(backend, policy):
    layout = {1: np.nan, 4: np.inf}
    code, llr = make_frames("wifi-648-1/2", 6)
    good = np.array([0, 2, 3, 5])
    expected = gl.Decoder(code, backend=backend).decode(llr[good])
    block = gpuldpc.ldpc_decoder_pdu("wifi-648-1/2", backend=backend, on_bad_llr=policy)
    sink = blocks.message_debug()
    tb = gr.top_block()
    tb.msg_connect(block, "out", sink, "store")
    tb.start()
    bad = -spoil(llr, layout)
    block.to_basic_block()._post(pmt.intern("in"),
                                 pmt.cons(pmt.make_dict(), pmt.init_f32vector(bad.size, bad.ravel().tolist())))
    deadline = time.monotonic() + 30.0
    while sink.num_messages() < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    tb.stop()
    tb.wait()
    msg = sink.get_message(0)
    meta, bits = pmt.car(msg), np.array(pmt.u8vector_elements(pmt.cdr(msg)), np.uint8).reshape(-1, code.k)
    marks = list(pmt.u8vector_elements(pmt.dict_ref(meta, pmt.intern("bad_llr"), pmt.PMT_NIL)))
    if policy == "erase":
        assert bits.shape[0] == 6 and marks == [0, 1, 0, 0, 1, 0]
        assert np.array_equal(bits[good], expected.info)
    else:
        assert marks == [0, 0, 0, 0] and np.array_equal(bits, expected.info)
        assert pmt.to_long(pmt.dict_ref(meta, pmt.intern("dropped"), pmt.PMT_NIL)) == 2
    assert block.stats()["bad_llr_frames"] == 2 and block.stats()["rejected"] == 0


def test_backend_fault_mid_stream_no_frame_lost(backend):
    code, llr = make_frames("wifi-648-1/2", FRAMES)
    expected = gl.Decoder(code, backend=backend).decode(llr)
    block = gpuldpc.ldpc_decoder("wifi-648-1/2", backend=backend, batch=BATCH)
    impl, calls = block.core.decoder._impl, []

    def faulty(*args):
        calls.append(1)
        if len(calls) == 3:
            raise BackendFault("CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure (injected)")
        return decode(*args)

    decode, impl.decode = impl.decode, faulty
    out, tags = run_flowgraph(block, -llr, code.k)
    assert np.array_equal(out, expected.info)
    assert tags_by_item(tags, "seq") == {i: i for i in range(FRAMES)}
    stats = block.stats()
    assert (stats["fallbacks"], stats["frames"]) == (1, FRAMES)
    assert stats["backend"] != backend and block.error is None


def test_programming_error_ends_the_flowgraph_with_the_message(backend):
    code, llr = make_frames("wifi-648-1/2", FRAMES)
    block = gpuldpc.ldpc_decoder("wifi-648-1/2", backend=backend, batch=BATCH)

    def broken(*args):
        raise TypeError("a programming error (injected)")

    block.core.decoder._impl.decode = broken
    out, _ = run_flowgraph(block, -llr, code.k, timeout=60.0)
    assert out.shape[0] == 0
    assert block.error == "TypeError: a programming error (injected)"
    assert block.stats()["fallbacks"] == 0
