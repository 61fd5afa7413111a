"""The DVB-S2 Soft Demapper block (gnuradio.gpuldpc.dvbs2_demapper) against gr-dtv's
interleaver and modulator for every MODCOD, its values and errors in Python.  Elsewhere:
the block through grcc (test_grc_and_errors.py), examples/dvbs2_8psk_rx compiled and run
(test_standard_examples.py, test_receive_chain.py)."""

import numpy as np
import pytest
from gnuradio import blocks, dtv, gr

from gnuradio import gpuldpc
from gpuldpc import dvbs2_demap

MODCODS = [(c, f, r) for c, frames in dvbs2_demap.MODCODS.items()
           for f, rates in frames.items() for r in rates]


def gr_dtv_symbols(constellation, frame, rate, bits):
    """bits [frames, n] -> gr-dtv dvbs2_interleaver_bb -> dvbs2_modulator_bc (interpolation
    off) -> complex64 [frames, n / m]."""
    args = (getattr(dtv, f"FECFRAME_{frame.upper()}"), getattr(dtv, "C" + rate.replace("/", "_")),
            getattr(dtv, f"MOD_{constellation.upper()}"))
    tb = gr.top_block()
    sink = blocks.vector_sink_c()
    tb.connect(blocks.vector_source_b(bits.ravel().tolist()), dtv.dvbs2_interleaver_bb(*args),
               dtv.dvbs2_modulator_bc(*args, dtv.INTERPOLATION_OFF), sink)
    tb.run()
    return np.array(sink.data(), np.complex64).reshape(len(bits), -1)


def run_demapper(symbols, **kwargs):
    """complex symbols (a stream) -> dvbs2_demapper(**kwargs) -> float32 [frames, n]."""
    block = gpuldpc.dvbs2_demapper(**kwargs)
    tb = gr.top_block()
    sink = blocks.vector_sink_f(block.mapping.n)
    tb.connect(blocks.vector_source_c(symbols.ravel().tolist()), block, sink)
    tb.run()
    return np.array(sink.data(), np.float32).reshape(-1, block.mapping.n)


@pytest.mark.parametrize("constellation, frame, rate", MODCODS,
                         ids=[f"{c}-{f}-{r}" for c, f, r in MODCODS])
def test_gr_dtv_symbols_demap_to_the_sent_bits(constellation, frame, rate, rng):
    """Every MODCOD of the four constellations (DVB-S2 and S2X): gr-dtv's symbols for two
    random frames are ``modulate``'s (the points, ring ratios and column order) and, noiseless
    through the block at Es/N0 20 dB, give LLRs whose signs are the sent bits (positive = 0)."""
    mapping = dvbs2_demap.mapping(f"dvbs2-{frame}-{rate}", constellation)
    bits = rng.integers(0, 2, (2, mapping.n), dtype=np.uint8)
    sent = gr_dtv_symbols(constellation, frame, rate, bits)
    np.testing.assert_allclose(sent, mapping.modulate(bits), atol=2e-6)
    llr = run_demapper(sent, code=f"dvbs2-{frame}-{rate}", constellation=constellation, esn0_db=20.0)
    np.testing.assert_array_equal(llr < 0, bits.astype(bool))


@pytest.mark.parametrize("max_log", [False, True])
def test_block_output_is_the_core_functions(max_log, rng):
    """Noisy 16APSK 2/3 short frames: the block's vectors equal ``dvbs2_demap.demap`` of the
    same symbols at the same N0, frame by frame; ``set_esn0_db`` changes N0."""
    mapping = dvbs2_demap.mapping("dvbs2-short-2/3", "16apsk")
    y = mapping.modulate(rng.integers(0, 2, (3, mapping.n), dtype=np.uint8))
    y = (y + 0.2 * (rng.standard_normal(y.shape) + 1j * rng.standard_normal(y.shape))).astype(np.complex64)
    out = run_demapper(y, code="dvbs2-short-2/3", constellation="16apsk", esn0_db=9.0, max_log=max_log)
    np.testing.assert_array_equal(out, dvbs2_demap.demap(y, "dvbs2-short-2/3", "16apsk", 10 ** -0.9, max_log))
    block = gpuldpc.dvbs2_demapper("dvbs2-short-2/3", "16apsk", esn0_db=9.0)
    block.set_esn0_db(3)
    assert (block.esn0_db, block.n0) == (3.0, pytest.approx(10 ** -0.3))


@pytest.mark.parametrize("code, constellation, lengths", [
    ("dvbs2-short-3/5", "8psk", (5400, 16200)), ("dvbs2-normal-9/10", "32apsk", (12960, 64800)),
    ("dvbs2-short-7/15", "16apsk", (4050, 16200)), ("dvbs2-normal-1/4", "qpsk", (32400, 64800))])
def test_lengths_are_symbols_and_llrs_of_a_frame(code, constellation, lengths):
    assert gpuldpc.demapper_lengths(code, constellation) == lengths
    block = gpuldpc.dvbs2_demapper(code, constellation)
    assert (block.mapping.symbols_per_frame, block.mapping.n) == lengths
    assert block.output_signature().sizeof_stream_item(0) == 4 * lengths[1]


def test_bad_parameters_name_the_parameter():
    with pytest.raises(ValueError, match="constellation='32apsk' is not used with rate 1/2 in normal frames"):
        gpuldpc.dvbs2_demapper("dvbs2-normal-1/2", "32apsk")
    with pytest.raises(ValueError, match="code='ccsds-c2' is not a DVB-S2 code"):
        gpuldpc.dvbs2_demapper("ccsds-c2", "qpsk")
    with pytest.raises(ValueError, match=r"esn0_db=nan must be a finite number \(dB\)"):
        gpuldpc.dvbs2_demapper("dvbs2-short-3/5", "8psk", esn0_db=float("nan"))
