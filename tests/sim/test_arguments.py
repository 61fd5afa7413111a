"""Wrong arguments give exit status 2 and a message that names the input and the fix."""
import pytest

from gpuldpc.sim import CampaignSpec, SimError, parse_ebn0
from gpuldpc.sim.cli import main


def _cli_error(capsys, argv) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["wifi-649-1/2", "--ebn0", "1", "--out", "x"], "unknown code 'wifi-649-1/2': not a file, and no code named"),
    (["wifi-648-1/2", "--ebn0", "", "--out", "x"], "--ebn0: the list of Eb/N0 points is empty"),
    (["wifi-648-1/2", "--ebn0", "3:1:0.5", "--out", "x"], "--ebn0: range '3:1:0.5' is empty (STOP 1.0 is below START 3.0)"),
    (["wifi-648-1/2", "--ebn0", "1:3:0", "--out", "x"], "--ebn0: range '1:3:0' needs a positive STEP"),
    (["wifi-648-1/2", "--ebn0", "1:3", "--out", "x"], "--ebn0: range '1:3' must be START:STOP:STEP"),
    (["wifi-648-1/2", "--ebn0", "one", "--out", "x"], "--ebn0: value 'one' is not a number of dB"),
    (["wifi-648-1/2", "--ebn0", "1", "1.0", "--out", "x"], "--ebn0: points repeat (1 dB)"),
    (["wifi-648-1/2", "--ebn0", "1", "--max-errors", "-5", "--out", "x"], "--max-errors must be a positive integer, got -5"),
    (["wifi-648-1/2", "--ebn0", "1", "--max-frames", "0", "--out", "x"], "--max-frames must be a positive integer, got 0"),
    (["wifi-648-1/2", "--ebn0", "1", "--max-seconds", "-1", "--out", "x"], "--max-seconds must be a positive number"),
    (["wifi-648-1/2", "--ebn0", "1", "--iterations", "0", "--out", "x"], "--iterations must be a positive integer, got 0"),
    (["wifi-648-1/2", "--ebn0", "1", "--batch", "-16", "--out", "x"], "--batch must be a positive integer, got -16"),
    (["wifi-648-1/2", "--ebn0", "1", "--min-fer", "2", "--out", "x"], "--min-fer must lie in (0, 1)"),
    (["wifi-648-1/2", "--ebn0", "1", "--seed", "-1", "--out", "x"], "--seed must be an integer >= 0, got -1"),
    (["wifi-648-1/2", "--ebn0", "1", "--algorithm", "minmax", "--out", "x"],
     "--algorithm 'minmax' does not apply to the binary code 'wifi-648-1/2'; use one of nms, oms, spa"),
    (["wifi-648-1/2", "--ebn0", "1"], "--out DIR is required"),
    (["wifi-648-1/2", "--out", "x"], "--ebn0 is required"),
    (["--ebn0", "1", "--out", "x"], "give a CODE"),
])
def test_cli_rejects(capsys, argv, message):
    err = _cli_error(capsys, argv)
    assert "gpuldpc-sim: error:" in err
    assert message in err


def test_cli_rejects_bad_code_file_and_reference_curve(capsys, tmp_path):
    bad = tmp_path / "bad.alist"
    bad.write_text("3 2\n")
    assert f"code file {bad}:" in _cli_error(capsys, [str(bad), "--ebn0", "1", "--out", str(tmp_path / "o")])
    ref = tmp_path / "ref.txt"
    ref.write_text("# Eb/N0 FER\n1.0 0.5\n1.5 abc\n")
    err = _cli_error(capsys, ["wifi-648-1/2", "--ebn0", "1", "--out", str(tmp_path / "o"), "--reference-curve",
                              str(ref)])
    assert f"--reference-curve {ref}, line 3: '1.5 abc' is not two numbers" in err


def test_parse_ebn0_forms():
    assert parse_ebn0("0.5:3.0:0.5") == (0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
    assert parse_ebn0(["0:0.2:0.1", "1,2"]) == (0.0, 0.1, 0.2, 1.0, 2.0)
    assert parse_ebn0([2.5, "-1"]) == (-1.0, 2.5)
    assert parse_ebn0("1:1.25:0.1") == (1.0, 1.1, 1.2)            # STOP not on the grid: not passed


def test_api_raises_simerror_a_valueerror():
    with pytest.raises(ValueError, match="frames that end a point|--max-frames must be a positive integer"):
        CampaignSpec.make("wifi-648-1/2", "1", max_frames=-3)
    assert issubclass(SimError, ValueError)
    with pytest.raises(SimError, match="the same code, algorithm and iteration count is given twice"):
        CampaignSpec.make("wifi-648-1/2", "1", algorithms=["nms", "nms"])


def test_failing_batch_exits_1_naming_the_batch(capsys, tmp_path):
    """Every batch raises (no GPU for --backend cuda): each point is tried twice, marked
    failed with the cause, and the exit status is 1 (tests/sim/test_failures.py: the rest)."""
    import gpuldpc.cuda

    if gpuldpc.cuda.available():
        pytest.skip("a GPU is usable here: the cuda backend would not fail")
    assert main(["wifi-648-1/2", "--ebn0", "1", "--backend", "cuda", "--batch", "16", "--quiet",
                 "--out", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert ("failed: wifi-648-1/2 nms 10 it 1.00 dB: batch 0 raised 2 times: BackendUnavailable: "
            "backend 'cuda' is not usable here") in out
    assert "1 of 1 points failed" in err and "add --resume" in err
