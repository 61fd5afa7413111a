"""Campaigns end to end: same seed same counts, budgets, resume after a kill, Dask and local workers."""
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from gpuldpc.sim import CampaignSpec, ResultsStore, read_csv, run_campaign


def test_same_seed_same_counts(small_spec, reference_rows, row_counts, tmp_path):
    again = run_campaign(small_spec, tmp_path, progress=False)
    assert row_counts(again) == row_counts(reference_rows)
    assert len(reference_rows) == 2


def test_budgets_and_rates(reference_rows):
    low, high = sorted(reference_rows, key=lambda r: r["ebn0_db"])
    # 1.5 dB: stopped by the error budget, after whole 16-frame batches
    assert low["status"] == "errors" and low["frame_errors"] >= 10 and low["frames"] % 16 == 0
    assert low["frame_errors"] - 16 < 10 <= low["frame_errors"]
    assert 0.1 < low["fer"] < 0.7                      # NMS 10 it, WiFi 648 r1/2 at 1.5 dB: FER ~0.3
    # 2.5 dB: the 256-frame budget ends it; FER ~5e-3, so at most a few errors
    assert high["status"] == "frames" and high["frames"] == 256 and high["frame_errors"] < 10
    assert high["fer_low"] <= high["fer"] <= high["fer_high"]
    assert high["mean_iterations"] < low["mean_iterations"] <= 10
    assert low["ber"] < low["fer"] and 0 < low["ber_low"] < low["ber"] < low["ber_high"]


def test_other_seed_other_counts(small_args, reference_rows, row_counts, tmp_path):
    rows = run_campaign(CampaignSpec.make(**{**small_args, "seed": 8}), tmp_path, progress=False)
    assert row_counts(rows) != row_counts(reference_rows)


def test_existing_store_needs_resume(small_spec, tmp_path):
    run_campaign(small_spec, tmp_path, progress=False)
    with pytest.raises(ValueError, match="already holds .* finished batches; pass --resume"):
        run_campaign(small_spec, tmp_path, progress=False)
    with ResultsStore(tmp_path) as store:
        before = store.batch_count()
    run_campaign(small_spec, tmp_path, resume=True, progress=False)   # nothing left to do
    with ResultsStore(tmp_path) as store:
        assert store.batch_count() == before


def _stored_batches(path) -> int:
    try:
        with sqlite3.connect(path, timeout=10) as db:
            return db.execute("SELECT COUNT(*) FROM batches").fetchone()[0]
    except sqlite3.OperationalError:          # not created yet
        return 0


def _start_and_kill(args, out, env, after_batches: int):
    """Start the CLI, SIGKILL it once ``after_batches`` batches are stored; False if it finished first."""
    proc = subprocess.Popen(args + ["--out", str(out)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _stored_batches(out / "results.sqlite") < after_batches:
        if proc.poll() is not None:
            assert proc.returncode == 0, proc.stderr.read().decode()
            return False
        assert time.monotonic() < deadline, "the campaign stored too few batches within 120 s"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True


def test_resume_after_kill_gives_the_same_counts(backend, cli_env, row_counts, tmp_path):
    """Kill the CLI once some batches are stored, resume, compare with an uninterrupted run."""
    base = [sys.executable, "-m", "gpuldpc.sim", "wifi-648-1/2", "--ebn0", "2.0:2.5:0.5", "--algorithm", "nms",
            "--iterations", "8", "--max-errors", "100000", "--batch", "16", "--seed", "3", "--backend", backend,
            "--quiet"]
    for frames in (640, 6400, 64000):          # a larger campaign when the backend outran the kill
        args = base + ["--max-frames", str(frames)]
        killed = tmp_path / f"killed{frames}"
        if _start_and_kill(args, killed, cli_env, after_batches=8):
            break
    else:
        pytest.fail("every campaign finished before it could be killed")
    total = 2 * frames // 16
    partial = _stored_batches(killed / "results.sqlite")
    assert 8 <= partial < total
    resumed = subprocess.run(args + ["--out", str(killed), "--resume"], env=cli_env, capture_output=True)
    assert resumed.returncode == 0, resumed.stderr.decode()
    whole = subprocess.run(args + ["--out", str(tmp_path / "whole")], env=cli_env, capture_output=True)
    assert whole.returncode == 0, whole.stderr.decode()
    a = read_csv(killed / "results.csv")
    b = read_csv(tmp_path / "whole" / "results.csv")
    assert row_counts(a) == row_counts(b)
    assert [r["frames"] for r in a] == [frames, frames]
    assert _stored_batches(killed / "results.sqlite") == total     # nothing counted twice, nothing lost


def test_local_worker_processes_match_one_process(small_spec, reference_rows, row_counts, tmp_path):
    rows = run_campaign(small_spec, tmp_path, workers=2, progress=False)
    assert row_counts(rows) == row_counts(reference_rows)


def test_dask_cluster_matches_one_process(small_spec, reference_rows, row_counts, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        rows = run_campaign(small_spec, tmp_path, scheduler=cluster.scheduler_address, progress=False)
        with distributed.Client(cluster) as client:
            decoders_built = client.run(_decoders_in_this_process)
    assert list(decoders_built.values()) == [1, 1]           # both workers decoded batches
    assert row_counts(rows) == row_counts(reference_rows)
    with ResultsStore(tmp_path) as store:
        backends = {c.backend for pts in store.batches(small_spec.runs[0].key).values() for c in pts.values()}
    assert backends == {small_spec.backend}


def _decoders_in_this_process() -> int:
    from gpuldpc.sim import worker

    return len(worker._decoders)


def test_min_fer_skips_higher_points_and_max_seconds_cuts_points(small_args, tmp_path):
    # 2.5 dB ends with FER ~5e-3 < 0.05, so 3.5 dB is never simulated
    spec = CampaignSpec.make(**{**small_args, "ebn0": "1.5:3.5:1.0", "min_fer": 0.05})
    rows = run_campaign(spec, tmp_path / "minfer", progress=False)
    assert [r["ebn0_db"] for r in rows] == [1.5, 2.5]
    # a point's wall time is checked between batches: with 1 ns (shorter than any batch, even
    # the C++ backend's sub-millisecond ones) each point stops after its first batch
    spec = CampaignSpec.make(**{**small_args, "max_seconds": 1e-9})
    rows = run_campaign(spec, tmp_path / "seconds", progress=False)
    assert [(r["frames"], r["batches"]) for r in rows] == [(16, 1), (16, 1)]
    assert {r["status"] for r in rows} <= {"partial", "errors"}
