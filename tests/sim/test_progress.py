"""The live display: one line per point with its counts."""
from gpuldpc.sim import Budget
from gpuldpc.sim.progress import RichProgress
from gpuldpc.sim.stats import summarize
from gpuldpc.sim.frames import BatchCounts


def test_one_bar_per_point_with_counts(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    budget = Budget(max_errors=10, max_frames=1000)
    batches = {0: BatchCounts(16, 4, 40, 400, 100, 0.5, "reference")}
    with RichProgress() as display:
        display.update("wifi-648-1/2 nms layered 10 it  1.50 dB", summarize(1.5, batches, budget, 324, 648),
                       budget, done=False)
        display.update("wifi-648-1/2 nms layered 10 it  2.00 dB", summarize(2.0, batches, budget, 324, 648),
                       budget, done=True)
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "dB" in line]
    assert len(lines) == 2
    assert "1.50 dB" in lines[0] and "16 fr  4 fe  FER 2.50e-01  BER 7.72e-03  32 fr/s" in lines[0]
    assert "2.00 dB" in lines[1] and "[partial]" in lines[1]


def test_a_failed_point_says_why(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    budget = Budget(max_errors=10, max_frames=1000)
    batches = {0: BatchCounts(16, 4, 40, 400, 100, 0.5, "reference")}
    with RichProgress() as display:
        display.update("a  1.50 dB", summarize(1.5, batches, budget, 324, 648), budget, done=False)
        display.fail("a  1.50 dB", "batch 1 raised 2 times: RuntimeError: lost")
        display.fail("a  2.50 dB", "batch 0 raised 2 times: RuntimeError: lost")   # no batch before
    lines = [line for line in capsys.readouterr().out.splitlines() if "dB" in line]
    assert len(lines) == 2
    assert all("[failed] batch" in line and "RuntimeError: lost" in line for line in lines)
