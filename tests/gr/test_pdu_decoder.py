"""LDPC Decoder (PDU) in a running flowgraph: frames per PDU, metadata, malformed PDUs."""
import time

import numpy as np
import pmt
from gnuradio import blocks, gr

import gpuldpc as gl
from gnuradio import gpuldpc

CODE = "wifi-648-1/2"


def wait_for(store, count, timeout=30.0):
    deadline = time.monotonic() + timeout
    while store.num_messages() < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return [store.get_message(i) for i in range(store.num_messages())]


def test_pdu_frames_metadata_drop_and_rejects(backend):
    code = gl.codes.get(CODE)
    rng = np.random.default_rng(5)
    info = rng.integers(0, 2, (3, code.k), dtype=np.uint8)
    llr = gl.channel.transmit(code, code.encode(info), 3.0, rng)
    noise = rng.normal(0.0, 0.3, code.n).astype(np.float32)
    decoder = gpuldpc.ldpc_decoder_pdu(CODE, backend=backend, on_failure="drop", max_iterations=5)
    out_store, stats_store = blocks.message_debug(), blocks.message_debug()
    tb = gr.top_block()
    tb.msg_connect(decoder, "out", out_store, "store")
    tb.msg_connect(decoder, "stats", stats_store, "store")
    tb.start()
    port = pmt.intern("in")
    meta = pmt.dict_add(pmt.make_dict(), pmt.intern("burst"), pmt.from_long(17))
    frames = np.concatenate([-llr[0], -llr[1], noise, -llr[2]])        # GNU Radio sign
    decoder.to_basic_block()._post(port, pmt.cons(meta, pmt.init_f32vector(frames.size, frames.tolist())))
    decoder.to_basic_block()._post(port, pmt.cons(pmt.PMT_NIL, pmt.init_f32vector(5, [1.0] * 5)))
    decoder.to_basic_block()._post(port, pmt.intern("not a pdu"))
    pdus = wait_for(out_store, 1)
    stats = wait_for(stats_store, 3)
    tb.stop()
    tb.wait()
    assert len(pdus) == 1
    out_meta, bits = pmt.car(pdus[0]), np.array(pmt.u8vector_elements(pmt.cdr(pdus[0])))
    assert np.array_equal(bits, info.ravel())
    meta_py = pmt.to_python(out_meta)
    assert meta_py["burst"] == 17 and meta_py["frames"] == 3 and meta_py["dropped"] == 1
    assert list(meta_py["valid"]) == [1, 1, 1]
    expected = gl.Decoder(code, backend=backend, max_iterations=5).decode(llr)
    assert list(meta_py["iterations"]) == expected.iterations.tolist()
    last = pmt.to_python(stats[-1])
    assert (last["frames"], last["failures"], last["dropped"], last["rejected"]) == (4, 1, 1, 2)
    assert decoder.stats()["rejected"] == 2


def test_pdu_soft_output_in_the_metadata(backend):
    """``soft_output``: the ``llr`` entry holds the kept frames' LLRs one after the other, in the
    input's (GNU Radio) sign, as gl.Decoder gives them; none without it."""
    code = gl.codes.get(CODE)
    rng = np.random.default_rng(6)
    llr = gl.channel.transmit(code, code.encode(rng.integers(0, 2, (2, code.k), dtype=np.uint8)), 3.0, rng)
    want = gl.Decoder(code, backend=backend, positive_llr_bit=1, soft_output="posterior").decode(-llr)
    metas = []
    for soft_output in ("posterior", None):
        decoder = gpuldpc.ldpc_decoder_pdu(CODE, backend=backend, soft_output=soft_output)
        store = blocks.message_debug()
        tb = gr.top_block()
        tb.msg_connect(decoder, "out", store, "store")
        tb.start()
        frames = (-llr).ravel()
        decoder.to_basic_block()._post(pmt.intern("in"),
                                       pmt.cons(pmt.PMT_NIL, pmt.init_f32vector(frames.size, frames.tolist())))
        pdus = wait_for(store, 1)
        tb.stop()
        tb.wait()
        metas.append(pmt.to_python(pmt.car(pdus[0])))
    np.testing.assert_array_equal(np.asarray(metas[0]["llr"], np.float32), want.llr.ravel())
    assert "llr" not in metas[1]
