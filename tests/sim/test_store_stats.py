"""The store never double counts; the counted prefix and the intervals."""
import pytest

from gpuldpc.sim import Budget, CampaignSpec, ResultsStore
from gpuldpc.sim.frames import BatchCounts
from gpuldpc.sim.stats import ber_interval, clopper_pearson, counted_prefix, summarize


def _b(frames=16, fe=0, be=0):
    return BatchCounts(frames, fe, be, be * be, frames * 3, 0.5, "reference")


def test_store_keeps_one_row_per_batch(tmp_path):
    run = CampaignSpec.make("wifi-648-1/2", "1", backend="reference", frames_per_batch=16).runs[0]
    with ResultsStore(tmp_path) as store:
        store.set_run(run, Budget(10, 100))
        assert store.add(run.key, 1.0, 0, _b(fe=2, be=9)) is True
        assert store.add(run.key, 1.0, 0, _b(fe=5, be=50)) is False            # same batch again: ignored
        assert store.add(run.key, 1.0004, 1, _b(fe=1, be=1)) is True           # 1.0004 dB is the 1 dB point
        assert store.batches(run.key) == {1000: {0: _b(fe=2, be=9), 1: _b(fe=1, be=1)}}
        (stored_run,) = store.runs()
    assert stored_run["budget"] == Budget(10, 100) and (stored_run["n"], stored_run["k"]) == (648, 324)
    with ResultsStore(tmp_path) as again:                                       # reopened: still there
        assert again.batch_count() == 2


def test_counted_prefix_stops_at_the_budget_and_at_gaps():
    budget = Budget(max_errors=5, max_frames=64)
    batches = {0: _b(fe=2), 1: _b(fe=2), 2: _b(fe=2), 3: _b(fe=9)}
    counted, why = counted_prefix(batches, budget)
    assert (len(counted), why) == (3, "errors")                  # 6 >= 5 after batch 2; batch 3 not counted
    counted, why = counted_prefix({0: _b(), 1: _b(), 2: _b(), 3: _b(), 4: _b()}, budget)
    assert (len(counted), why) == (4, "frames")                  # 64 frames
    counted, why = counted_prefix({0: _b(fe=1), 2: _b(fe=9)}, budget)
    assert (len(counted), why) == (1, "partial")                 # batch 1 missing: stop before the gap


def test_clopper_pearson_values():
    low, high = clopper_pearson(0, 100)
    assert low == 0 and high == pytest.approx(0.036217, abs=1e-6)     # 1 - 0.025^(1/100)
    low, high = clopper_pearson(10, 100)
    assert low == pytest.approx(0.049005, abs=1e-6) and high == pytest.approx(0.176223, abs=1e-6)


def test_ber_interval_over_frames():
    # 100 frames, 10 in error with 5 bit errors each, 100 bits per frame: BER 5e-3
    low, high = ber_interval(50, 10 * 25, 100, 100, fer_high=0.18)
    half = 1.959964 * (2.5 - 0.25) ** 0.5 * (100 / 99) ** 0.5 / 10 / 100   # sd of X over frames
    assert low == pytest.approx(0.005 - half, rel=1e-5) and high == pytest.approx(0.005 + half, rel=1e-5)
    assert ber_interval(0, 0, 100, 100, fer_high=0.036) == (0.0, 0.036)


def test_summarize_rates():
    p = summarize(2.0, {0: _b(fe=2, be=10), 1: _b(fe=1, be=3)}, Budget(100, 32), info_bits=324, coded_bits=648)
    assert (p.frames, p.frame_errors, p.bit_errors, p.status) == (32, 3, 13, "frames")
    assert p.fer == 3 / 32 and p.ber == 13 / (32 * 324) and p.mean_iterations == 3.0
    assert p.frames_per_second == 32.0 and p.coded_mbps == pytest.approx(32 * 648 / 1e6)
