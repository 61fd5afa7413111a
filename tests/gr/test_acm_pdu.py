"""Several codes chosen PDU by PDU (ACM/VCM, issue 16 item 1): the PDU decoder and encoder with
``codes=[...]`` and each PDU's ``ldpc_code`` metadata, malformed PDUs rejected and counted, and
examples/acm_pdu_loopback run and checked at two channel SNRs."""
import importlib.util
import os
import time

import numpy as np
import pmt
import pytest
from gnuradio import blocks, gr

import gpuldpc as gl
from gnuradio import gpuldpc

CODES = ["wimax-2304-1/2", "wimax-2304-5/6", "wifi-1944-2/3"]


def run_pdus(block, port, pdus, wait_for=None, timeout=30.0):
    """Post ``pdus`` to ``block``'s ``port`` in a running flowgraph; the PDUs of its ``out`` port
    (waiting until ``wait_for`` of them came, default: as many as were posted)."""
    store = blocks.message_debug()
    tb = gr.top_block()
    tb.msg_connect(block, "out", store, "store")
    tb.start()
    for msg in pdus:
        block.to_basic_block()._post(pmt.intern(port), msg)
    want, deadline = len(pdus) if wait_for is None else wait_for, time.monotonic() + timeout
    while store.num_messages() < want and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.1)                      # nothing more comes
    tb.stop()
    tb.wait()
    return [store.get_message(i) for i in range(store.num_messages())]


def meta_with(**entries):
    meta = pmt.make_dict()
    for key, value in entries.items():
        meta = pmt.dict_add(meta, pmt.intern(key), value)
    return meta


def f32_pdu(meta, llr):
    flat = np.asarray(llr, np.float32).ravel()
    return pmt.cons(meta, pmt.init_f32vector(flat.size, flat.tolist()))


def noisy(name, frames, seed, ebn0=4.5):
    code = gl.codes.get(name)
    rng = np.random.default_rng(seed)
    info = rng.integers(0, 2, (frames, code.k), dtype=np.uint8)
    return code, info, gl.channel.transmit(code, code.encode(info), ebn0, rng)


def test_pdu_decoder_takes_each_pdus_code_from_its_metadata(backend):
    """PDUs of three codes named by name, by index and by the code's own name; the output
    metadata names the code; PDUs without or with an unknown ldpc_code, or of another code's
    length, are rejected and counted; the frames equal gl.Decoder's of their code."""
    decoder = gpuldpc.ldpc_decoder_pdu(codes=CODES, backend=backend, max_iterations=8)
    sent = [noisy(name, frames, seed) for name, frames, seed in ((CODES[0], 2, 1), (CODES[1], 1, 2), (CODES[2], 3, 3))]
    keys = [pmt.intern(CODES[0]), pmt.from_long(1), pmt.intern("wifi-1944-2/3")]
    good = [f32_pdu(meta_with(ldpc_code=key, burst=pmt.from_long(i)), -llr)      # GNU Radio sign
            for i, (key, (_, _, llr)) in enumerate(zip(keys, sent))]
    bad = [f32_pdu(pmt.make_dict(), -sent[0][2]),                                   # no ldpc_code
           f32_pdu(meta_with(ldpc_code=pmt.intern("wifi-648-1/2")), -sent[0][2]),  # not one of the codes
           f32_pdu(meta_with(ldpc_code=pmt.from_long(3)), -sent[0][2]),            # index outside
           f32_pdu(meta_with(ldpc_code=pmt.intern(CODES[2])), -sent[0][2])]        # 2304 LLRs for WiFi 1944
    out = run_pdus(decoder, "in", good[:1] + bad + good[1:], wait_for=3)
    assert len(out) == 3
    for msg, (code, info, llr), name in zip(out, sent, CODES):
        meta = pmt.to_python(pmt.car(msg))
        assert meta["ldpc_code"] == name and meta["frames"] == info.shape[0]
        want = gl.Decoder(code, backend=backend, max_iterations=8).decode(llr)
        np.testing.assert_array_equal(np.array(pmt.u8vector_elements(pmt.cdr(msg))), want.info.ravel())
        assert list(meta["iterations"]) == want.iterations.tolist()
    assert [pmt.to_python(pmt.car(m))["burst"] for m in out] == [0, 1, 2]
    stats = decoder.stats()
    assert (stats["frames"], stats["rejected"], stats["backend"]) == (6, 4, backend)
    assert stats["mean_iterations"] == pytest.approx(
        np.mean(np.concatenate([list(pmt.to_python(pmt.car(m))["iterations"]) for m in out])))


def test_one_code_pdu_decoder_names_its_code_and_refuses_another():
    code, info, llr = noisy("wifi-648-1/2", 1, 4, ebn0=4.0)
    decoder = gpuldpc.ldpc_decoder_pdu("wifi-648-1/2", backend="reference")
    out = run_pdus(decoder, "in", [f32_pdu(pmt.make_dict(), -llr),
                                   f32_pdu(meta_with(ldpc_code=pmt.intern("wifi-648-2/3")), -llr),
                                   f32_pdu(meta_with(ldpc_code=pmt.intern("wifi-648-1/2")), -llr)], wait_for=2)
    assert [pmt.to_python(pmt.car(m))["ldpc_code"] for m in out] == ["wifi-648-1/2"] * 2
    assert decoder.stats()["rejected"] == 1


def test_codes_and_code_together_are_refused():
    with pytest.raises(ValueError, match=r"codes=\['wifi-648-1/2'\] and code='wifi-648-2/3' .* both given"):
        gpuldpc.ldpc_decoder_pdu("wifi-648-2/3", codes=["wifi-648-1/2"])
    with pytest.raises(ValueError, match=r"codes: \['wifi-648-1/2'\] given more than once"):
        gpuldpc.ldpc_decoder_pdu(codes=["wifi-648-1/2", "wifi-648-1/2"])


def test_pdu_encoder_encodes_with_the_code_the_metadata_names():
    encoder = gpuldpc.ldpc_encoder_pdu(codes=CODES)
    rng = np.random.default_rng(5)
    infos = [rng.integers(0, 2, (frames, gl.codes.get(name).k), dtype=np.uint8)
             for name, frames in zip(CODES, (1, 2, 1))]
    pdus = [pmt.cons(meta_with(ldpc_code=key), pmt.init_u8vector(info.size, info.ravel().tolist()))
            for key, info in zip((pmt.intern(CODES[0]), pmt.intern(CODES[1]), pmt.from_long(2)), infos)]
    bad = pmt.cons(meta_with(ldpc_code=pmt.intern(CODES[0])), pmt.init_u8vector(100, [0] * 100))
    out = run_pdus(encoder, "in", pdus[:2] + [bad] + pdus[2:], wait_for=3)
    assert len(out) == 3 and encoder.rejected == 1
    for msg, name, info in zip(out, CODES, infos):
        meta = pmt.to_python(pmt.car(msg))
        assert (meta["ldpc_code"], meta["frames"]) == (name, info.shape[0])
        np.testing.assert_array_equal(np.array(pmt.u8vector_elements(pmt.cdr(msg))),
                                      gl.codes.get(name).encode(info).ravel())


def load_example(repo, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(repo, "examples", name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_acm_pdu_loopback_example(repo):
    """examples/acm_pdu_loopback: 300 frames, the code chosen at random per frame, one decoder
    block for all three codes.  Es/N0 3 dB: every payload back.  Es/N0 1 dB: WiMAX r5/6 (Eb/N0
    1.8 dB) loses every frame, r1/2 and WiFi r2/3 none -- the reason a link adapts its code."""
    module = load_example(repo, "acm_pdu_loopback")
    for esn0, lost in ((3.0, 0), (1.0, None)):
        tb = module.acm_pdu_loopback(esn0_db=esn0, frames=300)
        tb.run()
        c, by_code, errors = tb.check.counts, tb.check.by_code, tb.check.errors_by_code
        assert (c.frames, c.next_seq, c.missing, c.out_of_order) == (300, 300, 0, 0)
        assert set(by_code) == set(CODES) and min(by_code.values()) > 60
        assert tb.decoder.stats()["frames"] == 300 and tb.decoder.stats()["rejected"] == 0
        if lost == 0:
            assert c.frame_errors == 0 and sum(errors.values()) == 0
        else:
            assert errors[CODES[1]] == by_code[CODES[1]] and errors[CODES[0]] == errors[CODES[2]] == 0


def test_grcc_refuses_an_unknown_code_in_the_list(repo, tmp_path, grcc):
    """GRC evaluates each block's code list at build time (an assertion naming ``codes``: GRC
    shows no exception text for assertions); the block itself names the code."""
    with open(os.path.join(repo, "examples", "acm_pdu_loopback.grc")) as f:
        text = f.read().replace("''wifi-1944-2/3''", "''wifi-1944-2/5''")
    (tmp_path / "bad.grc").write_text(text)
    result = grcc(tmp_path / "bad.grc", tmp_path)
    assert result.returncode != 0
    for block in ("gpuldpc_payload_pdu_source", "gpuldpc_ldpc_encoder_pdu", "gpuldpc_ldpc_decoder_pdu"):
        assert f"({block}):\n\tAssertion" in result.stdout, block
    assert result.stdout.count("for c in codes") == result.stdout.count("did not evaluate") == 3
    with pytest.raises(ValueError, match="no code named 'wifi-1944-2/5'"):
        gpuldpc.ldpc_decoder_pdu(codes=["wifi-1944-2/5"])
