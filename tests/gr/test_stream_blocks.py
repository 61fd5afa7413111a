"""Stream blocks in real flowgraphs: vector_source -> block -> vector_sink, exact outputs.

Frames are random codewords sent by BPSK over AWGN at an Eb/N0 where every
frame decodes (checked against ``gl.Decoder`` on the same LLRs), plus frames of
pure noise that fail the syndrome check.
"""
import time

import numpy as np
import pmt
import pytest
from gnuradio import blocks, gr

import gpuldpc as gl
from gnuradio import gpuldpc

BINARY = "wifi-648-1/2"
NB = "gf16-300-150"


def run_stream(block, frames, sink_vlen, tags=()):
    """Push ``frames`` (one row per item) through ``block``; return (output rows, sink tags)."""
    frames = np.asarray(frames)
    source_type = blocks.vector_source_f if frames.dtype.kind == "f" else blocks.vector_source_b
    source = source_type(frames.ravel().tolist(), False, frames.shape[1], list(tags))
    sink = blocks.vector_sink_b(sink_vlen)
    tb = gr.top_block()
    tb.connect(source, block, sink)
    tb.run()
    out = np.array(sink.data(), dtype=np.uint8).reshape(-1, sink_vlen)
    return out, sink.tags()


def tag_values(tags, key):
    """{output item: value} of the tags named ``key``."""
    return {t.offset: pmt.to_python(t.value) for t in tags if pmt.symbol_to_string(t.key) == key}


@pytest.fixture(scope="module")
def wifi_frames():
    """6 codewords of wifi-648-1/2 and their LLRs (textbook sign) at Eb/N0 = 3 dB."""
    code = gl.codes.get(BINARY)
    rng = np.random.default_rng(7)
    info = rng.integers(0, 2, (6, code.k), dtype=np.uint8)
    llr = gl.channel.transmit(code, code.encode(info), 3.0, rng)
    return code, info, llr


def test_ldpc_decoder_gnuradio_sign_decodes_every_frame(wifi_frames, backend):
    code, info, llr = wifi_frames
    expected = gl.Decoder(code, backend=backend).decode(llr)
    assert expected.valid.all() and np.array_equal(expected.info, info)
    block = gpuldpc.ldpc_decoder(BINARY, backend=backend, batch=4)
    out, tags = run_stream(block, -llr, code.k)             # GNU Radio sign: positive = bit 1
    assert np.array_equal(out, info)
    assert tag_values(tags, "iterations") == dict(enumerate(expected.iterations.tolist()))
    assert tag_values(tags, "valid") == {i: True for i in range(6)}
    stats = block.stats()
    assert (stats["frames"], stats["failures"], stats["dropped"]) == (6, 0, 0)
    assert stats["mean_iterations"] == pytest.approx(expected.iterations.mean())
    assert stats["backend"] == backend


@pytest.mark.parametrize("precision, backend_name", [("float16", "reference"), ("int8", "cpu")])
def test_ldpc_decoder_precision(wifi_frames, precision, backend_name):
    """The block's precision reaches the decoder: its iteration counts are the ones of
    gl.Decoder with that precision (the available backend that offers it)."""
    code, info, llr = wifi_frames
    kind = "auto" if backend_name == "reference" else backend_name
    try:
        expected = gl.Decoder(code, backend=kind, precision=precision).decode(llr)
    except gl.decoders.BackendUnavailable:
        pytest.skip(f"no backend for precision={precision!r} here")
    block = gpuldpc.ldpc_decoder(BINARY, backend=kind, precision=precision, batch=3)
    out, tags = run_stream(block, -llr, code.k)
    assert np.array_equal(out, info) and np.array_equal(expected.info, info)
    assert tag_values(tags, "iterations") == dict(enumerate(expected.iterations.tolist()))
    assert block.stats()["backend"] == gl.Decoder(code, backend=kind, precision=precision).backend
    with pytest.raises(ValueError, match=r"precision='float64' is not one of"):
        gpuldpc.ldpc_decoder(BINARY, precision="float64")


def test_ldpc_decoder_textbook_sign_and_codeword_output(wifi_frames, backend):
    code, info, llr = wifi_frames
    out, _ = run_stream(gpuldpc.ldpc_decoder(BINARY, backend=backend, positive_llr_bit=0,
                                             output="codeword"), llr, code.n)
    assert np.array_equal(out, code.encode(info))


def test_ldpc_decoder_wrong_sign_fails_every_frame(wifi_frames, backend):
    code, info, llr = wifi_frames
    block = gpuldpc.ldpc_decoder(BINARY, backend=backend, positive_llr_bit=0, max_iterations=3)
    out, tags = run_stream(block, -llr, code.k)              # sign mismatch: complemented words
    assert tag_values(tags, "valid") == {i: False for i in range(6)}
    assert block.stats()["failures"] == 6
    assert np.mean(out != info) > 0.3


@pytest.mark.parametrize("on_failure", ["pass", "drop"])
def test_failed_frames_pass_or_drop_with_counts_and_tags(wifi_frames, backend, on_failure, rng):
    code, info, llr = wifi_frames
    frames = -llr.copy()
    bad = [1, 4]
    frames[bad] = rng.normal(0.0, 0.3, (2, code.n)).astype(np.float32)   # no codeword near
    marks = [gr.tag_utils.python_to_tag((i, pmt.intern("frame_no"), pmt.from_long(i)))
             for i in range(6)]
    block = gpuldpc.ldpc_decoder(BINARY, backend=backend, on_failure=on_failure,
                                 max_iterations=5, batch=3)
    out, tags = run_stream(block, frames, code.k, marks)
    good = [0, 2, 3, 5]
    stats = block.stats()
    assert (stats["frames"], stats["failures"]) == (6, 2)
    if on_failure == "pass":
        assert out.shape[0] == 6 and np.array_equal(out[good], info[good])
        assert tag_values(tags, "valid") == {i: i not in bad for i in range(6)}
        assert tag_values(tags, "frame_no") == {i: i for i in range(6)}
        assert stats["dropped"] == 0
    else:
        assert np.array_equal(out, info[good])
        assert tag_values(tags, "valid") == {i: True for i in range(4)}
        assert tag_values(tags, "frame_no") == dict(enumerate(good))   # tags move with their frame
        assert stats["dropped"] == 2


def test_frame_tags_off_keeps_input_and_bad_llr_tags(wifi_frames, backend):
    """frame_tags=False: no per-frame ``iterations`` / ``valid`` tags, while the input's tags
    still move with their frames and a frame with a NaN LLR is still tagged ``bad_llr``."""
    code, info, llr = wifi_frames
    frames = -llr.copy()
    frames[2, 5] = np.nan
    marks = [gr.tag_utils.python_to_tag((i, pmt.intern("frame_no"), pmt.from_long(i))) for i in range(6)]
    block = gpuldpc.ldpc_decoder(BINARY, backend=backend, batch=4, frame_tags=False)
    out, tags = run_stream(block, frames, code.k, marks)
    keep = [0, 1, 3, 4, 5]
    assert np.array_equal(out[keep], info[keep])
    assert tag_values(tags, "iterations") == {} and tag_values(tags, "valid") == {}
    assert tag_values(tags, "frame_no") == {i: i for i in range(6)}
    assert tag_values(tags, "bad_llr") == {2: True}
    assert block.stats()["bad_llr_frames"] == 1
    block.set_frame_tags(True)
    assert block.frame_tags is True
    with pytest.raises(ValueError, match="frame_tags must be True or False, got 'no'"):
        block.set_frame_tags("no")
    with pytest.raises(ValueError, match="frame_tags must be True or False, got 1"):
        gpuldpc.nb_ldpc_decoder(NB, frame_tags=1)


def test_batch_larger_than_stream_loses_no_frame(wifi_frames, backend):
    code, info, llr = wifi_frames
    block = gpuldpc.ldpc_decoder(BINARY, backend=backend, batch=64)
    out, _ = run_stream(block, -llr[:5], code.k)
    assert block.batch == 64 and np.array_equal(out, info[:5])


def test_stats_port_reports_the_counters(wifi_frames, backend):
    code, info, llr = wifi_frames
    source = blocks.vector_source_f((-llr).ravel().tolist(), False, code.n)
    block = gpuldpc.ldpc_decoder(BINARY, backend=backend, batch=2, stats_interval=0.0)
    store = blocks.message_debug()
    tb = gr.top_block()
    tb.connect(source, block, blocks.null_sink(gr.sizeof_char * code.k))
    tb.msg_connect(block, "stats", store, "store")
    tb.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        last = store.get_message(store.num_messages() - 1) if store.num_messages() else None
        if last is not None and pmt.to_python(last)["frames"] == 6:
            break
        time.sleep(0.02)
    tb.stop()
    tb.wait()
    stats = pmt.to_python(last)
    assert stats["frames"] == 6 and stats["failures"] == 0 and stats["dropped"] == 0
    assert stats["backend"] == backend
    assert stats["mean_iterations"] == pytest.approx(block.stats()["mean_iterations"])
    assert stats["coded_mbps"] > 0


def test_nb_ldpc_decoder_bit_and_symbol_llrs(backend):
    code = gl.codes.get(NB)
    rng = np.random.default_rng(11)
    info = rng.integers(0, code.q, (3, code.k), dtype=np.uint8)
    cw = code.encode(info)
    m = code.bits_per_symbol
    bits = gl.gf.GF(code.q).to_bits(cw).reshape(3, -1)
    bit_llr = gl.channel.awgn_llr(bits, gl.channel.sigma_from_ebn0(4.0, code.rate), rng)
    out, tags = run_stream(gpuldpc.nb_ldpc_decoder(NB, backend="reference"), -bit_llr, code.k)
    assert np.array_equal(out, info)
    assert tag_values(tags, "valid") == {0: True, 1: True, 2: True}
    out, _ = run_stream(gpuldpc.nb_ldpc_decoder(NB, backend="reference", positive_llr_bit=0,
                                                output="codeword", output_format="bits"),
                        bit_llr, code.n * m)
    assert np.array_equal(out, bits)
    symbol_llr = gl.channel.bit_llr_to_symbol_llr(bit_llr, code.q).reshape(3, -1)
    out, _ = run_stream(gpuldpc.nb_ldpc_decoder(NB, backend="reference", llr_input="symbol"),
                        symbol_llr, code.k)
    assert np.array_equal(out, info)


def test_encoders_equal_code_encode():
    rng = np.random.default_rng(3)
    code = gl.codes.get(BINARY)
    info = rng.integers(0, 2, (4, code.k), dtype=np.uint8)
    out, _ = run_stream(gpuldpc.ldpc_encoder(BINARY), info, code.n)
    assert np.array_equal(out, code.encode(info))
    nb = gl.codes.get(NB)
    field = gl.gf.GF(nb.q)
    symbols = rng.integers(0, nb.q, (4, nb.k), dtype=np.uint8)
    out, _ = run_stream(gpuldpc.nb_ldpc_encoder(NB), symbols, nb.n)
    assert np.array_equal(out, nb.encode(symbols))
    bits_in = field.to_bits(symbols).reshape(4, -1)
    out, _ = run_stream(gpuldpc.nb_ldpc_encoder(NB, symbols=False), bits_in, nb.n * nb.bits_per_symbol)
    assert np.array_equal(out, field.to_bits(nb.encode(symbols)).reshape(4, -1))


def test_nr_code_block_loopback_by_name(backend):
    """A 5G NR code block named in the blocks' code parameter (``nr-k<k>-e<E>-rv<rv>``):
    LDPC Encoder -> bits as GNU Radio-sign LLRs -> LDPC Decoder gives the info bits back,
    vector lengths k and E from the name."""
    name = "nr-k500-e1000-rv3"
    code = gpuldpc.load_code(name)
    assert gpuldpc.decoder_lengths(name) == (1000, 500) and gpuldpc.encoder_lengths(name) == (500, 1000)
    info = np.random.default_rng(8).integers(0, 2, (5, code.k), dtype=np.uint8)
    source = blocks.vector_source_b(info.ravel().tolist(), False, code.k)
    encoder = gpuldpc.ldpc_encoder(name)
    to_llr = blocks.char_to_float(code.n, 0.25)          # bit b -> 4 b: ...
    offset = blocks.add_const_vff([-2.0] * code.n)       # ... -> +-2, positive = bit 1
    decoder = gpuldpc.ldpc_decoder(name, backend=backend, batch=2)
    sink = blocks.vector_sink_b(code.k)
    tb = gr.top_block()
    tb.connect(source, encoder, to_llr, offset, decoder, sink)
    tb.run()
    assert np.array_equal(np.array(sink.data(), np.uint8).reshape(-1, code.k), info)
    assert decoder.stats()["frames"] == 5


def test_nr_code_block_from_fields_noisy_loopback(backend):
    """5G NR from the blocks' own fields (k, e, rv; what GRC's "5G NR" family generates):
    LDPC Encoder(k=500, e=700, rv=[0, 2]) sends both redundancy versions side by side, GNU
    Radio BPSK (bit 1 -> +1) plus Gaussian noise (sigma 0.8: a tenth of the hard decisions
    wrong, too many for rv 0 alone), LDPC Decoder(k=500, e=700, rv=[0, 2]) soft-combines
    them and gives every frame's info bits back."""
    from gnuradio import analog
    frames, k, e = 12, 500, 700
    encoder = gpuldpc.ldpc_encoder(k=k, e=e, rv=[0, 2])
    decoder = gpuldpc.ldpc_decoder(k=k, e=e, rv=[0, 2], backend=backend, batch=4)
    assert encoder.core.code is decoder.core.code            # one code object for the same fields
    assert encoder.core.code.name == "nr-bg1-z24-k500-e700-rv0+nr-bg1-z24-k500-e700-rv2"
    assert (encoder.core.vlen_in, encoder.core.vlen_out) == (k, 2 * e)
    assert (decoder.core.vlen_in, decoder.core.vlen_out) == (2 * e, k)
    info = np.random.default_rng(14).integers(0, 2, (frames, k), dtype=np.uint8)
    source = blocks.vector_source_b(info.ravel().tolist(), False, k)
    to_stream = blocks.vector_to_stream(gr.sizeof_char, 2 * e)
    bpsk = blocks.char_to_float(1, 0.5)                        # bit b -> 2b ...
    centre = blocks.add_const_ff(-1.0)                         # ... -> 2b - 1: positive = bit 1
    noise = analog.noise_source_f(analog.GR_GAUSSIAN, 0.8, 5)
    channel = blocks.add_ff()
    to_frames = blocks.stream_to_vector(gr.sizeof_float, 2 * e)
    received = blocks.vector_sink_f(2 * e)
    sink = blocks.vector_sink_b(k)
    tb = gr.top_block()
    tb.connect(source, encoder, to_stream, bpsk, centre, (channel, 0))
    tb.connect(noise, (channel, 1))
    tb.connect(channel, to_frames, decoder, sink)
    tb.connect(to_frames, received)
    tb.run()
    sent = np.stack([gl.codes.nr(k, e, rv=rv).encode(info) for rv in (0, 2)], axis=1).reshape(frames, -1)
    llr = np.array(received.data(), np.float32).reshape(frames, 2 * e)
    assert ((llr > 0) != sent).mean() > 0.08                  # the channel flips about 10% of the bits
    rv0_alone = gl.Decoder(gl.codes.nr(k, e, rv=0), backend=backend).decode(-llr[:, :e])
    assert not rv0_alone.valid.all()                          # rv 0 alone is not enough here
    assert np.array_equal(np.array(sink.data(), np.uint8).reshape(frames, k), info)
    stats = decoder.stats()
    assert (stats["frames"], stats["failures"]) == (frames, 0)


def test_nr_fields_in_the_pdu_decoder():
    """The PDU decoder takes the same fields: a frame of rv 3 alone, e LLRs."""
    block = gpuldpc.ldpc_decoder_pdu(k=500, e=1000, rv=3, backend="reference")
    assert block.core.code is gpuldpc.load_code("nr-k500-e1000-rv3")   # the name path: the same code
    assert (block.core.vlen_in, block.core.vlen_out) == (1000, 500)


@pytest.mark.parametrize("fields, message", [
    (dict(k=9000, e=12000), r"k=9000 is outside 12\.\.8448 \(5G NR code blocks; larger ones need code block segmentation\)"),
    (dict(k=8, e=100), r"k=8 is outside 12\.\.8448"),
    (dict(k=1000, e=1000), r"n_or_e=1000 is outside >= 1053 \(E >= k/0\.95 for k=1000"),
    (dict(k=1000, e=1200, rv=4), r"rv=4 is outside 0\.\.3 \(the redundancy versions of TS 38\.212"),
    (dict(k=1000, e=1200, rv=[0, -1]), r"rv=-1 is outside 0\.\.3"),
    (dict(k=1000, e=1200, rv=[]), r"rv=\[\]: give a redundancy version 0\.\.3"),
    (dict(k=1000, e=[1200, 1300, 1400], rv=[0, 2]), r"gives 3 E for the 2 transmissions of rv=\[0, 2\]"),
    (dict(k=1000, e=1200, bg=3), r"bg=3 is not a 5G NR base graph; use 1 or 2"),
    (dict(k=4000, e=12000, bg=2), r"k=4000 is outside 12\.\.3840 \(base graph 2 holds code blocks up to K_cb = 3840\)"),
    (dict(k=1000, e=1201, qm=4), r"n_or_e=1201 must be a multiple of qm=4"),
    (dict(k=1000, e=1200, n_ref=100), r"n_ref=100 is outside >= 960"),
    (dict(k=1000), r"a 5G NR code needs both k and e, got k=1000, e=None"),
    (dict(code="wifi-648-1/2", k=1000, e=1200), r"code='wifi-648-1/2' and the 5G NR fields k=1000, e=1200 both given"),
])
@pytest.mark.parametrize("block", [gpuldpc.ldpc_encoder, gpuldpc.ldpc_decoder, gpuldpc.ldpc_decoder_pdu],
                         ids=lambda b: b.__name__)
def test_nr_fields_bad_values_raise_the_code_librarys_errors(block, fields, message):
    with pytest.raises(ValueError, match=message):
        block(**fields)


@pytest.mark.parametrize("soft_output", ["posterior", "extrinsic"])
def test_ldpc_decoder_soft_output_port(wifi_frames, backend, soft_output):
    """The second port: each frame's LLRs in the input's (GNU Radio) sign, as gl.Decoder gives them."""
    code, info, llr = wifi_frames
    want = gl.Decoder(code, backend=backend, positive_llr_bit=1, soft_output=soft_output).decode(-llr)
    block = gpuldpc.ldpc_decoder(BINARY, backend=backend, batch=4, soft_output=soft_output)
    source = blocks.vector_source_f((-llr).ravel().tolist(), False, code.n)
    bits, soft = blocks.vector_sink_b(code.k), blocks.vector_sink_f(code.n)
    tb = gr.top_block()
    tb.connect(source, block, bits)
    tb.connect((block, 1), soft)
    tb.run()
    np.testing.assert_array_equal(np.array(bits.data(), np.uint8).reshape(-1, code.k), info)
    np.testing.assert_array_equal(np.array(soft.data(), np.float32).reshape(-1, code.n), want.llr)
    assert block.output_signature().sizeof_stream_item(1) == 4 * code.n
    assert gpuldpc.ldpc_decoder(BINARY, backend=backend).output_signature().max_streams() == 1
