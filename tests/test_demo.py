"""The main job, python -m gpuldpc.demo (small runs on the NumPy reference decoder)."""
import subprocess
import sys

import pytest

from gpuldpc import demo


def run(*argv):
    return demo.run(demo.parse_args(["--backend", "reference", *argv]))


def test_high_snr_decodes_every_frame():
    r = run("--ebn0", "4", "--frames", "60", "--batch", "25", "--seed", "3")
    assert (r["code"], r["n"], r["k"], r["backend"], r["frames"]) == ("wifi-1944-1/2", 1944, 972, "reference", 60)
    assert (r["frame_errors"], r["bit_errors"], r["fer"], r["ber"]) == (0, 0, 0.0, 0.0)
    assert 1.0 <= r["mean_iterations"] < 4.0
    assert r["coded_mbps"] == pytest.approx(2 * r["info_mbps"])


def test_low_snr_fails_most_frames_and_is_reproducible():
    # 0 dB is far below the waterfall of the rate-1/2 code (about 1.5 dB).
    args = ("--ebn0", "0", "--frames", "20", "--seed", "5", "--iterations", "5")
    r = run(*args)
    assert r["frame_errors"] >= 18
    assert r["ber"] == r["bit_errors"] / (20 * 972) and 0.01 < r["ber"] < 0.2
    counts = ("frame_errors", "bit_errors", "undetected", "mean_iterations")
    again = run(*args)
    assert [again[key] for key in counts] == [r[key] for key in counts]


def test_command_line_report():
    out = subprocess.run([sys.executable, "-m", "gpuldpc.demo", "--backend", "reference", "--frames", "10",
                          "--ebn0", "5", "--code", "wifi-648-1/2"],
                         capture_output=True, text=True, check=True).stdout
    assert "wifi-648-1/2 (n=648, k=324), BPSK/AWGN at Eb/N0 = 5 dB" in out
    assert "backend=reference" in out
    assert "frames      10  frame errors 0 (undetected: 0)  bit errors 0" in out
    assert "FER         0.000e+00" in out and "Mb/s coded" in out


@pytest.mark.parametrize("argv, message", [
    (["--frames", "0"], "--frames must be >= 1, got 0"),
    (["--code", "gf32-744-653"], "the demo sends binary codes over BPSK; 'gf32-744-653' is over GF(32)"),
    (["--code", "wifi-1944-1/3"], "no code named 'wifi-1944-1/3'"),
])
def test_bad_arguments(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        demo.parse_args(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_unusable_backend_is_reported_without_traceback(capsys, monkeypatch):
    from gpuldpc.decoders import front

    # A backend module that cannot load stands for "no GPU here" / "not built".
    monkeypatch.setitem(front._BACKEND_MODULES, "cuda", "gpuldpc.decoders.no_such_backend")
    assert demo.main(["--backend", "cuda", "--frames", "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("python -m gpuldpc.demo: backend 'cuda' is not usable here: ")
    assert "Traceback" not in err
