"""The receive chain over the committed SigMF recording, and the example flowgraphs run."""
import importlib.util
import json
import os

import numpy as np
import pytest
from gnuradio import blocks

import gpuldpc as gl
from gnuradio.gpuldpc import rx_demo
from gpuldpc import framing

RECORDING = os.path.join("examples", "data", "wifi1944_bpsk")


@pytest.fixture(scope="module")
def meta(repo):
    with open(os.path.join(repo, RECORDING + ".sigmf-meta")) as f:
        return json.load(f)


def load_example(repo, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(repo, "examples", name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_recording_is_small_and_self_describing(repo, meta):
    g = meta["global"]
    assert g["core:datatype"] == "cf32_le"
    assert {"name": "ldpc", "version": "1.0.0", "optional": True} in g["core:extensions"]
    code = gl.codes.get(g["ldpc:code"])
    assert (g["ldpc:standard"], g["ldpc:n"], g["ldpc:k"], g["ldpc:q"], g["ldpc:rate"]) == \
        (code.standard, code.n, code.k, 2, "1/2")
    assert len(meta["annotations"]) == g["ldpc:frame_count"] == 48
    size = os.path.getsize(os.path.join(repo, RECORDING + ".sigmf-data"))
    assert size < 4_000_000 and size % 8 == 0


def test_every_frame_of_the_recording_decodes_to_its_payload(repo, meta, backend):
    g = meta["global"]
    tb = rx_demo.recording_receiver(os.path.join(repo, RECORDING + ".sigmf-meta"), backend)
    llr_sink = blocks.vector_sink_f(g["ldpc:n"])
    tb.connect(tb.receiver, llr_sink)
    tb.run()
    counts = tb.check.counts
    assert (counts.frames, counts.frame_errors, counts.bit_errors) == (48, 0, 0)
    assert (counts.missing, counts.out_of_order, counts.next_seq) == (0, 0, 48)
    assert tb.decoder.stats()["failures"] == 0
    # the channel is not trivial: the LLRs' hard decisions carry errors the decoder removes
    code = gl.codes.get(g["ldpc:code"])
    sent = code.encode(np.stack([framing.payload(i, code.k, g["ldpc:payload_seed"]) for i in range(48)]))
    raw = gl.channel.count_errors(gl.channel.hard_decision(np.reshape(llr_sink.data(), (48, -1))), sent)
    assert 0.003 < raw.ber < 0.05 and raw.frame_errors == 48


def test_receiver_output_does_not_depend_on_how_the_scheduler_cuts_the_stream(repo, meta, backend):
    """The same frame LLRs whether blocks get one item per call or thousands (the timing
    recovery of GNU Radio 3.10.5's pfb_clock_sync_ccf did not: a dropped symbol, a lost frame)."""
    n = meta["global"]["ldpc:n"]
    outputs = []
    for cut in (1, 7, 100000):
        tb = rx_demo.recording_receiver(os.path.join(repo, RECORDING + ".sigmf-meta"), backend)
        sink = blocks.vector_sink_f(n)
        tb.connect(tb.receiver, sink)
        tb.run(cut)
        outputs.append(np.array(sink.data(), dtype=np.float32))
    assert outputs[0].size == 48 * n
    for other in outputs[1:]:
        np.testing.assert_array_equal(other, outputs[0])


def test_rx_demo_prints_the_summary(capsys, backend):
    assert rx_demo.main(["--backend", backend]) == 0
    out = capsys.readouterr().out
    assert "frames      48 decoded of 48 sent, 0 lost, 0 out of order" in out
    assert "FER 0 (0/48), BER 0 (0/46656 info bits)" in out
    assert f"({backend} backend" in out


def test_loopback_wifi1944_example(repo, backend):
    module = load_example(repo, "loopback_wifi1944")
    tb = module.loopback_wifi1944(ebn0_db=4.0, frames=30)
    tb.run()
    assert tb.errors.counts() == {"frames": 30, "frame_errors": 0, "bit_errors": 0, "fer": 0.0, "ber": 0.0}
    assert tb.decoder.stats()["frames"] == 30


def test_loopback_gf32_example(repo):
    module = load_example(repo, "loopback_gf32")
    tb = module.loopback_gf32(ebn0_db=5.0, frames=3)
    tb.run()
    counts = tb.errors.counts()
    assert (counts["frames"], counts["frame_errors"], counts["bit_errors"]) == (3, 0, 0)


def test_nr_harq_loopback_example_combining_gains(repo, backend):
    """examples/nr_harq_loopback: a 5G NR block (k 1000, E 1200) sent as rv 0 and rv 2 over
    BPSK/AWGN at 3 dB; rv 0 alone loses many frames, rv 0 + rv 2 soft-combined in one
    decoder (the code named 'rv0+rv2') none."""
    module = load_example(repo, "nr_harq_loopback")
    tb = module.nr_harq_loopback(ebn0_db=3.0, frames=200)
    tb.run()
    alone, combined = tb.errors_rv0.counts(), tb.errors_combined.counts()
    assert alone["frames"] == combined["frames"] == 200
    assert alone["frame_errors"] > 20
    assert combined["frame_errors"] == 0
    assert tb.decoder_combined.stats()["frames"] == 200


def test_dvbs2_rx_example_below_threshold_bch_ok_means_the_sent_frame(repo):
    """examples/dvbs2_rx at Es/N0 0 dB, in the waterfall of QPSK 1/2 short frames: many frames
    fail, the LDPC decoder's failures are the BCH failures, and every frame BCH reports ok is
    the BBFRAME sent (the frame errors are exactly the BCH failures)."""
    module = load_example(repo, "dvbs2_rx")
    tb = module.dvbs2_rx(esn0_db=0.0, frames=40)
    tb.run()
    errors, bch, ldpc = tb.errors.counts(), tb.bch_decoder.counts(), tb.decoder.stats()
    assert errors["frames"] == bch["frames"] == ldpc["frames"] == 40
    # BCH corrects what LDPC leaves of a few bits (a failed syndrome with <= t errors), so it
    # fails on at most the frames LDPC failed; each BCH failure is a frame error, nothing more
    assert 10 <= bch["bch_failures"] == errors["frame_errors"] <= ldpc["failures"] <= 35


def test_dvbs2_8psk_rx_example_in_the_waterfall(repo):
    """examples/dvbs2_8psk_rx (DVB-S2 Soft Demapper, 8PSK 3/5 short) at Es/N0 5.2 dB, FER ~0.4
    (docs/dvbs2.md): BCH failures = frame errors <= LDPC failures, as for dvbs2_rx."""
    tb = load_example(repo, "dvbs2_8psk_rx").dvbs2_8psk_rx(esn0_db=5.2, frames=40)
    tb.run()
    errors, bch, ldpc = tb.errors.counts(), tb.bch_decoder.counts(), tb.decoder.stats()
    assert errors["frames"] == bch["frames"] == ldpc["frames"] == 40
    assert 5 <= bch["bch_failures"] == errors["frame_errors"] <= ldpc["failures"] <= 35


def test_ccsds_rx_example_in_the_waterfall(repo):
    """examples/ccsds_rx (AR4JA k = 1024 r1/2) at Eb/N0 1.0 dB: FER near docs/ccsds.md's
    0.22 (spa, 50 iterations), every frame error a frame the decoder reports failed."""
    module = load_example(repo, "ccsds_rx")
    tb = module.ccsds_rx(ebn0_db=1.0, frames=200)
    tb.run()
    errors, stats = tb.errors.counts(), tb.decoder.stats()
    assert errors["frames"] == stats["frames"] == 200
    assert 20 <= errors["frame_errors"] == stats["failures"] <= 70
