"""DVB-S2 LDPC codes (gpuldpc.codes.dvbs2, EN 302 307-1 5.3.2).

The encoder is checked bit for bit against GNU Radio's gr-dtv ``dvb_ldpc_bb`` (a real
flowgraph, one bit per byte in and out) for every code of both frame sizes, the DVB-S2X
rates (EN 302 307-2) included; decoding on
the reference and cpu backends at a high Eb/N0, and the waterfall of normal 1/2 against
EN 302 307-1 Table 13 (QPSK 1/2 normal frames: quasi-error-free at Es/N0 = Eb/N0 = 1.0 dB).
"""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.codes import dvb_s2, dvbs2_bch

ALL = [(f, r) for f in dvb_s2.K_LDPC for r in dvb_s2.K_LDPC[f]]
S2X = [(f, r) for f in dvb_s2.K_LDPC_S2X for r in dvb_s2.K_LDPC_S2X[f]]


def _ids(p):
    return f"{p[0]}-{p[1]}"


def test_names_sizes_and_structure():
    names = [n for n in gl.codes.names() if n.startswith("dvbs2-")]
    assert len(names) == 21 + 30 == len(ALL) and len(S2X) == 23 + 7   # S2, then S2X rates
    assert "dvbs2-normal-9/10" in names and "dvbs2-short-9/10" not in names
    assert "dvbs2-normal-13/45" in names and "dvbs2-short-13/45" not in names
    assert (gl.codes.get("dvbs2-normal-90/180").k, gl.codes.dvbs2("short", "32/45").k) == (32400, 11520)
    assert gl.codes.dvbs2("normal", "18/30") is not gl.codes.dvbs2("normal", "3/5")  # same k, own table
    c = gl.codes.get("dvbs2-short-1/4")
    assert c is gl.codes.dvbs2("short", "1/4")
    assert (c.n, c.k) == (16200, 3240)                     # Table 5b: effective k of 1/4 short
    assert (gl.codes.dvbs2("normal", "9/10").k, gl.codes.dvbs2("short", "8/9").k) == (58320, 14400)
    for frame, rate in (("normal", "1/2"), ("short", "3/5")):
        c = gl.codes.dvbs2(frame, rate)
        colw = np.diff(c.H.tocsc().indptr)
        assert (colw[c.k:-1] == 2).all() and colw[-1] == 1  # staircase
        assert set(np.unique(colw[:c.k])) <= {3, 8, 12, 13}


@pytest.mark.parametrize("frame, rate, word", [
    ("long", "1/2", "frame"), (64800, "1/2", "frame"),
    ("short", "9/10", "rate"), ("normal", "7/8", "rate"), ("normal", 0.5, "rate"),
    ("short", "13/45", "rate"), ("normal", "2/9", "rate")])
def test_bad_parameters_name_the_parameter_and_valid_values(frame, rate, word):
    with pytest.raises(ValueError) as err:
        gl.codes.dvbs2(frame, rate)
    msg = str(err.value)
    assert f"{word}=" in msg
    assert ("'normal', 'short'" in msg) if word == "frame" else ("'1/4'" in msg and "'8/9'" in msg)
    if word == "rate":                                     # S2 and S2X rates of that frame
        assert "(DVB-S2X)" in msg and ("'32/45'" in msg) == (frame == "short")
    if frame == "short":
        assert "'9/10'" not in msg.split("use one of")[1]


@pytest.mark.parametrize("frame, rate", ALL, ids=map(_ids, ALL))
def test_encoder_equals_gr_dtv(frame, rate):
    gr = pytest.importorskip("gnuradio.gr")
    blocks = pytest.importorskip("gnuradio.blocks")
    dtv = pytest.importorskip("gnuradio.dtv")
    code = gl.codes.dvbs2(frame, rate)
    info = np.random.default_rng(hash((frame, rate)) % 2**32).integers(0, 2, (2, code.k), dtype=np.uint8)
    fec = {"normal": dtv.FECFRAME_NORMAL, "short": dtv.FECFRAME_SHORT}[frame]
    crate = getattr(dtv, "C" + rate.replace("/", "_"))
    tb = gr.top_block()
    src = blocks.vector_source_b(info.ravel().tolist())       # one bit per byte (gr-dtv's input)
    ldpc = dtv.dvb_ldpc_bb(dtv.STANDARD_DVBS2, fec, crate, dtv.MOD_OTHER)
    sink = blocks.vector_sink_b()
    tb.connect(src, ldpc, sink)
    tb.run()
    theirs = np.array(sink.data(), dtype=np.uint8).reshape(-1, code.n)
    ours = code.encode(info)
    assert theirs.shape == ours.shape
    np.testing.assert_array_equal(ours, theirs)


def _gr_dtv(frame, rate, bits, *blocks_of):
    """Run ``bits`` (one per byte) through the gr-dtv blocks made by ``blocks_of(dtv, fec, crate)``."""
    gr = pytest.importorskip("gnuradio.gr")
    blocks = pytest.importorskip("gnuradio.blocks")
    dtv = pytest.importorskip("gnuradio.dtv")
    fec = {"normal": dtv.FECFRAME_NORMAL, "short": dtv.FECFRAME_SHORT}[frame]
    crate = getattr(dtv, "C" + rate.replace("/", "_"))
    tb = gr.top_block()
    chain = [blocks.vector_source_b(bits.ravel().tolist())]
    chain += [make(dtv, fec, crate) for make in blocks_of]
    chain.append(blocks.vector_sink_b())
    tb.connect(*chain)
    tb.run()
    return np.array(chain[-1].data(), dtype=np.uint8)


def _bch_block(dtv, fec, crate):
    return dtv.dvb_bch_bb(dtv.STANDARD_DVBS2, fec, crate)


def _ldpc_block(dtv, fec, crate):
    return dtv.dvb_ldpc_bb(dtv.STANDARD_DVBS2, fec, crate, dtv.MOD_OTHER)


@pytest.mark.parametrize("frame, rate", ALL, ids=map(_ids, ALL))
def test_bch_encoder_equals_gr_dtv(frame, rate):
    k_bch, n_bch = dvbs2_bch.sizes(frame, rate)
    assert n_bch == gl.codes.dvbs2(frame, rate).k
    bits = np.random.default_rng(5).integers(0, 2, (2, k_bch), dtype=np.uint8)
    theirs = _gr_dtv(frame, rate, bits, _bch_block).reshape(-1, n_bch)
    np.testing.assert_array_equal(dvbs2_bch.bch_encode(frame, rate, bits), theirs)


def test_bch_then_ldpc_chain_equals_gr_dtv():
    frame, rate = "short", "3/5"
    bits = np.random.default_rng(6).integers(0, 2, (2, dvbs2_bch.sizes(frame, rate)[0]), dtype=np.uint8)
    theirs = _gr_dtv(frame, rate, bits, _bch_block, _ldpc_block).reshape(-1, 16200)
    ours = gl.codes.dvbs2(frame, rate).encode(dvbs2_bch.bch_encode(frame, rate, bits))
    np.testing.assert_array_equal(ours, theirs)


def test_encoder_many_frames_are_codewords():
    code = gl.codes.dvbs2("short", "1/2")
    info = np.random.default_rng(3).integers(0, 2, (300, code.k), dtype=np.uint8)
    cw = code.encode(info)
    assert cw.shape == (300, code.n) and (cw[:, :code.k] == info).all()
    assert code.is_codeword(cw).all()
    assert code.encode(info[0]).shape == (code.n,)


@pytest.mark.parametrize("frame, rate", ALL, ids=map(_ids, ALL))
def test_qc_form_is_block_circulant_but_for_the_accumulator_wrap(frame, rate):
    code = gl.codes.dvbs2(frame, rate)
    f = dvb_s2.qc_form(code)
    mb, nb = f.shape
    assert mb * 360 == code.n - code.k and nb * 360 == code.n
    assert np.array_equal(np.sort(f.cols), np.arange(code.n))
    permuted = code.H[f.rows][:, f.cols].tocsr()
    full = f.expand()
    diff = (permuted != full).tocoo()
    assert diff.nnz == 1                                   # exactly one non-circulant entry
    assert (diff.row[0], diff.col[0]) == f.missing == (0, code.n - 1)
    assert full[f.missing] == 1 and permuted[f.missing] == 0
    # information part: one entry per table address; some blocks are the sum of 2..4
    # circulants (addresses of one table row with equal x mod q; 4 once, in normal 5/6)
    kb = code.k // 360
    info = f.entries[f.entries[:, 1] < kb]
    assert len(info) == sum(len(r) for r in dvb_s2.address_table(frame, rate))
    _, counts = np.unique(info[:, 0] * nb + info[:, 1], return_counts=True)
    assert counts.max() <= 4 and (counts.max() == 4) == ((frame, rate) == ("normal", "5/6"))
    if (frame, rate) in S2X:                               # S2X: one circulant per block
        assert counts.max() == 1
    # the standard's check i is row check_order(m)[i] of code.H
    order = dvb_s2.check_order(code.n - code.k)
    assert np.array_equal(np.sort(order), np.arange(code.n - code.k))
    assert order[1] == 360 and order[mb] == 1


def _noisy(code, frames, ebn0_db, seed):
    rng = np.random.default_rng(seed)
    cw = code.encode(rng.integers(0, 2, (frames, code.k), dtype=np.uint8))
    sigma = np.sqrt(1 / (2 * code.rate * 10 ** (ebn0_db / 10)))   # BPSK, real rate k/n
    y = 1 - 2.0 * cw + sigma * rng.standard_normal(cw.shape)
    return cw, (2 * y / sigma**2).astype(np.float32)              # positive = bit 0


@pytest.mark.parametrize("name, frames", [
    ("dvbs2-short-1/4", 8), ("dvbs2-short-2/3", 8), ("dvbs2-short-8/9", 8), ("dvbs2-normal-3/5", 3),
    ("dvbs2-short-4/15", 8), ("dvbs2-normal-154/180", 3)])              # S2X rates
def test_decode_high_ebn0_reference_and_cpu(name, frames):
    code = gl.codes.get(name)
    cw, llr = _noisy(code, frames, 4.0, seed=7)
    ref = gl.Decoder(code, backend="reference", algorithm="spa", max_iterations=30).decode(llr)
    assert (ref.bits == cw).all() and ref.valid.all()
    try:
        cpu = gl.Decoder(code, backend="cpu", algorithm="spa", max_iterations=30).decode(llr)
    except gl.BackendUnavailable:
        pytest.skip("gpuldpc._core (cpu backend) not built")
    assert (cpu.bits == cw).all() and cpu.valid.all()
    assert np.array_equal(cpu.info, cw[:, :code.k])


def test_waterfall_normal_1_2_against_en_302_307_table_13(backend):
    # Table 13: QPSK 1/2, normal frames, QEF (PER 1e-7, 50 iterations, with BCH) at
    # Es/N0 = 1.00 dB, i.e. Eb/N0 = 1.00 dB.  SPA, 50 iterations: no frame lost at
    # 1.2 dB, and 0.4 dB (0.6 dB under the threshold, the waterfall is ~0.2 dB wide)
    # loses most frames.
    code = gl.codes.dvbs2("normal", "1/2")
    dec = gl.Decoder(code, backend=backend, algorithm="spa", max_iterations=50)
    frames = 16 if backend == "cpu" else 2
    for ebn0, lo, hi in ((1.2, 0.0, 0.0), (0.4, 0.75, 1.0)):
        cw, llr = _noisy(code, frames, ebn0, seed=11)
        fer = (dec.decode(llr).bits != cw).any(axis=1).mean()
        assert lo <= fer <= hi, (ebn0, fer)


@pytest.mark.parametrize("frame, rate, layers", [("normal", "1/2", 102), ("normal", "3/5", 132),
                                                 ("short", "1/2", 39), ("normal", "9/20", 99)])
def test_rows_come_in_classes_of_disjoint_checks(frame, rate, layers):
    """H stores each block row's checks in classes with disjoint supports, so the layered
    schedule (runs of consecutive disjoint rows) takes about a class at a time; check_rows
    maps the standard's check i (accumulator p_i, with p_{i-1} for i > 0) to its row."""
    from gpuldpc.codes.tanner import TannerGraph

    code = gl.codes.dvbs2(frame, rate)
    assert len(TannerGraph(code).layers) == layers
    rows = dvb_s2.check_rows(code)
    m = code.n - code.k
    assert np.array_equal(np.sort(rows), np.arange(m))
    H = code.H.tocsr()
    i = np.arange(m)
    assert np.all(np.asarray(H[rows, code.k + i]).ravel() == 1)
    assert np.all(np.asarray(H[rows[1:], code.k + i[:-1]]).ravel() == 1)
    assert H[rows[0]].nnz == H[rows[0], :code.k].nnz + 1       # p_0 alone: no p_{-1}
