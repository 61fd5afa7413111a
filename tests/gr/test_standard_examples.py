"""examples/dvbs2_rx.grc, dvbs2_8psk_rx.grc and ccsds_rx.grc compiled by the system's grcc
and run headless, as a GNU Radio user runs them: what they print at the end, for a bounded
number of frames at their default SNR (DVB-S2: Es/N0 1.0 dB, QPSK 1/2 short frames; 6.0 dB,
8PSK 3/5 short frames; CCSDS AR4JA k = 1024 r1/2: Eb/N0 2.0 dB).  (test_grc_and_errors.py checks that grcc gives the committed
.py; test_receive_chain.py runs them in this process below their thresholds.)"""
import os
import re
import subprocess
import sys

COUNTS = re.compile(r"^(\w+): (\d+) frames, FER \S+ \((\d+)/\d+\), BER \S+ \((\d+)/(\d+) bits\)$", re.M)
BCH = re.compile(r"^bch: (\d+) frames, (\d+) BCH ok, (\d+) failed, (\d+) bits corrected$", re.M)


def compile_and_run(grcc, repo, tmp_path, name, *args):
    """grcc -o tmp_path examples/<name>.grc, then run the generated script with ``args``: its stdout."""
    compiled = grcc(os.path.join(repo, "examples", name + ".grc"), tmp_path)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    result = subprocess.run([sys.executable, str(tmp_path / (name + ".py")), *args], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_dvbs2_rx_decodes_every_bbframe(grcc, repo, tmp_path):
    """gr-dtv's BCH and LDPC encoders, interleaver and QPSK modulator -> AWGN -> our LDPC and
    BCH decoders: every BBFRAME back, every frame BCH ok."""
    out = compile_and_run(grcc, repo, tmp_path, "dvbs2_rx", "--frames", "30")
    assert COUNTS.findall(out) == [("bbframe_errors", "30", "0", "0", str(30 * 7032))], out
    assert BCH.findall(out) == [("30", "30", "0", "0")], out


def test_dvbs2_8psk_rx_decodes_every_bbframe(grcc, repo, tmp_path):
    """gr-dtv's 8PSK 3/5 short frames (Es/N0 6.0 dB) -> DVB-S2 Soft Demapper -> our LDPC and
    BCH decoders: every BBFRAME (9552 bits) back, every frame BCH ok."""
    out = compile_and_run(grcc, repo, tmp_path, "dvbs2_8psk_rx", "--frames", "40")
    assert COUNTS.findall(out) == [("bbframe_errors", "40", "0", "0", str(40 * 9552))], out
    assert BCH.findall(out) == [("40", "40", "0", "0")], out


def test_ccsds_rx_decodes_every_frame(grcc, repo, tmp_path):
    out = compile_and_run(grcc, repo, tmp_path, "ccsds_rx", "--frames", "200")
    assert COUNTS.findall(out) == [("info_errors", "200", "0", "0", str(200 * 1024))], out



def test_ccsds_rx_with_c2_decodes_every_frame_and_fails_some_in_the_waterfall(grcc, repo, tmp_path):
    """examples/ccsds_rx.grc with ``--code ccsds-c2`` (8160, 7136; the standard's generator),
    sum-product, 50 iterations: no error at 4.0 dB Eb/N0; at 3.6 dB FER near docs/ccsds.md's
    0.028 (7 of 200 with the example's seeds)."""
    out = compile_and_run(grcc, repo, tmp_path, "ccsds_rx", "--code", "ccsds-c2", "--ebn0-db", "4.0",
                          "--frames", "100")
    assert COUNTS.findall(out) == [("info_errors", "100", "0", "0", str(100 * 7136))], out
    result = subprocess.run([sys.executable, str(tmp_path / "ccsds_rx.py"), "--code", "ccsds-c2", "--frames", "200",
                             "--ebn0-db", "3.6"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    (name, frames, failed, bit_errors, bits), = COUNTS.findall(result.stdout)
    assert (name, frames, bits) == ("info_errors", "200", str(200 * 7136)) and 2 <= int(failed) <= 25, result.stdout
    assert int(bit_errors) > int(failed)
