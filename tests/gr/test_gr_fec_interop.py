"""Interoperability with GNU Radio's own LDPC code (gr-fec), both directions.

The parity-check matrices are the alists gr-fec installs
(share/gnuradio/fec/ldpc/).  Conventions met on the way:

* gr-fec's parity-matrix encoder (``ldpc_par_mtrx_encoder`` over
  ``ldpc_H_matrix``, Richardson-Urbanke with the gap in the file name) puts
  the k information bits in the LAST k positions, ``[parity | info]``, and its
  decoders return those k positions; our encoders put the information at
  ``code.encoder.info_positions`` (first positions where the matrix allows).
  Both produce codewords of the same H, so each side decodes the other's.
* Soft values: gr-fec maps bit b to ``2b - 1`` and its decoders read positive
  as bit 1; our LLR is ``L = ln P(0)/P(1) = 2y/sigma^2`` with ``y = 1 - 2b +
  noise`` (positive = bit 0).  So ``y_gr = -y`` and ``L = -2 y_gr / sigma^2``.

Each direction sends frames through a real flowgraph at an SNR where the raw
hard decisions are wrong in most frames, and checks that the other side's
decoder recovers every frame exactly.
"""
import pathlib

import numpy as np
import pytest

fec = pytest.importorskip("gnuradio.fec", reason="GNU Radio (gr-fec) is not installed")
from gnuradio import analog, blocks, gr  # noqa: E402

import gpuldpc as gl  # noqa: E402

LDPC_DIR = pathlib.Path("/usr/share/gnuradio/fec/ldpc")
# (alist, gap of its Richardson-Urbanke form, Eb/N0 in dB)
CODES = [("n_0100_k_0042_gap_02.alist", 2, 7.0), ("n_1800_k_0902_gap_28.alist", 28, 4.5)]
FRAMES = 12


def alist_path(name):
    path = LDPC_DIR / name
    if not path.is_file():
        pytest.skip(f"gr-fec's {path} is not installed")
    return str(path)


def gr_encode_and_send(H, info, sigma, seed):
    """GNU Radio flowgraph: info bits -> gr-fec LDPC encoder -> 2b-1 -> + AWGN.

    Returns the codewords (tapped after the encoder) and the received soft
    values in GNU Radio's convention (positive = bit 1), [frames, n] each.
    """
    n = H.n()
    tb = gr.top_block()
    src = blocks.vector_source_b(info.ravel().tolist())
    encoder = fec.extended_encoder(fec.ldpc_par_mtrx_encoder.make_H(H), threading=None, puncpat="11")
    to_float = blocks.char_to_float(1, 0.5)            # b -> 2b
    level = blocks.add_const_ff(-1.0)                  # 2b -> 2b - 1
    noise = analog.noise_source_f(analog.GR_GAUSSIAN, sigma, seed)
    add = blocks.add_ff()
    code_sink, rx_sink = blocks.vector_sink_b(), blocks.vector_sink_f()
    tb.connect(src, encoder, to_float, level, (add, 0))
    tb.connect(noise, (add, 1))
    tb.connect(encoder, code_sink)
    tb.connect(add, rx_sink)
    tb.run()
    codewords = np.array(code_sink.data(), dtype=np.uint8).reshape(-1, n)
    received = np.array(rx_sink.data(), dtype=np.float32).reshape(-1, n)
    return codewords, received


def gr_decode(decoder, soft, k):
    """GNU Radio flowgraph: soft values (positive = bit 1) -> gr-fec decoder -> k bits per frame."""
    tb = gr.top_block()
    src = blocks.vector_source_f(soft.ravel().tolist())
    dec = fec.extended_decoder(decoder, threading=None, ann=None, puncpat="11", integration_period=10000)
    sink = blocks.vector_sink_b()
    tb.connect(src, dec, sink)
    tb.run()
    return np.array(sink.data(), dtype=np.uint8).reshape(-1, k)


@pytest.mark.parametrize("name, gap, ebn0", CODES)
def test_gnuradio_encoder_our_decoder(name, gap, ebn0):
    path = alist_path(name)
    code = gl.codes.from_alist(path)
    H = fec.ldpc_H_matrix(path, gap)
    assert (H.n(), H.k()) == (code.n, code.k)
    n, k = code.n, code.k
    rng = np.random.default_rng(2024)
    info = rng.integers(0, 2, size=(FRAMES, k), dtype=np.uint8)
    sigma = gl.channel.sigma_from_ebn0(ebn0, k / n)

    codewords, y_gr = gr_encode_and_send(H, info, sigma, seed=77)
    np.testing.assert_array_equal(codewords[:, n - k:], info)        # gr-fec: [parity | info]
    assert code.is_codeword(codewords).all()                          # a codeword of our H too
    llr = (-2.0 / sigma**2) * y_gr                                    # positive = 1 -> positive = 0
    raw_wrong = ((llr < 0) != codewords).any(axis=1)
    assert raw_wrong.sum() >= FRAMES // 2, "the channel should corrupt most frames"

    res = gl.Decoder(code, algorithm="nms", schedule="layered", max_iterations=50,
                     backend="reference").decode(llr.astype(np.float32))
    np.testing.assert_array_equal(res.bits, codewords)
    np.testing.assert_array_equal(res.bits[:, n - k:], info)
    assert res.valid.all()


@pytest.mark.parametrize("decoder_kind", ["ldpc_decoder", "ldpc_bit_flip_decoder"])
@pytest.mark.parametrize("name, gap, ebn0", CODES[:1])
def test_our_encoder_gnuradio_decoder(name, gap, ebn0, decoder_kind):
    path = alist_path(name)
    code = gl.codes.from_alist(path)
    n, k = code.n, code.k
    rng = np.random.default_rng(99)
    info = rng.integers(0, 2, size=(FRAMES, k), dtype=np.uint8)
    codewords = code.encode(info)
    np.testing.assert_array_equal(codewords[:, code.encoder.info_positions], info)
    sigma = gl.channel.sigma_from_ebn0(ebn0, k / n)
    llr = gl.channel.transmit(code, codewords, ebn0, rng)             # 2y/sigma^2, positive = 0
    y_gr = (-sigma**2 / 2.0) * llr                                    # GNU Radio: 2b-1 + noise
    assert ((y_gr > 0) != codewords).any(axis=1).sum() >= FRAMES // 2

    if decoder_kind == "ldpc_decoder":                                # sum-product, reads the alist
        decoder = fec.ldpc_decoder.make(path, sigma, 50)
    else:                                                             # hard decisions, bit flipping
        decoder = fec.ldpc_bit_flip_decoder.make(fec.ldpc_H_matrix(path, gap).get_base_sptr(), 100)
    out = gr_decode(decoder, y_gr.astype(np.float32), k)
    # gr-fec's decoders return the last k positions of the codeword they found.
    np.testing.assert_array_equal(out, codewords[:, n - k:])
