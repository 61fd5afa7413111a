"""A failing batch never stops a campaign: it runs once more, and a batch that fails twice
marks its point failed (store, results.csv, CLI) while the other points complete.

The small campaign of conftest.py (1.5 and 2.5 dB) with faults injected by sim_faults.py:
batch 1 of 1.5 dB raises on its first run, batch 0 of 2.5 dB on its first two.
"""
import contextlib
import importlib
import os
import sys
from collections import OrderedDict

import pytest

from gpuldpc.sim import BatchTask, ResultsStore, read_csv, run_batch, run_campaign, runner, worker
from gpuldpc.sim.cli import main
from gpuldpc.sim.executors import DaskExecutor, InlineExecutor, LocalProcessExecutor

FAULTS = {(1.5, 1): 1, (2.5, 0): 2}
FAILURE = "batch 0 raised 2 times: RuntimeError: injected fault: batch 0 at 2.5 dB, run 2"


@pytest.fixture(scope="module")
def sim_faults():
    """tests/sim/sim_faults.py, importable by its name here and in spawned workers."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    yield importlib.import_module("sim_faults")
    sys.path.remove(here)


@contextlib.contextmanager
def executor(kind):
    if kind == "inline":
        yield InlineExecutor()
    elif kind == "processes":
        pool = LocalProcessExecutor(2)
        yield pool
        pool.close()
    else:
        distributed = pytest.importorskip("distributed")
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                      dashboard_address=None) as cluster:
            dask = DaskExecutor(cluster.scheduler_address)
            yield dask
            dask.close()


def by_ebn0(rows):
    return {r["ebn0_db"]: r for r in rows}


@pytest.mark.parametrize("kind", ["inline", "processes", "dask"])
def test_retry_once_then_mark_the_point_failed(kind, sim_faults, small_spec, reference_rows, row_counts, tmp_path):
    out = tmp_path / "out"
    with executor(kind) as inner:
        faulty = sim_faults.FaultyExecutor(inner, tmp_path / "faults", FAULTS)
        rows = run_campaign(small_spec, out, progress=False, executor=faulty)
    got, want = by_ebn0(rows), by_ebn0(reference_rows)
    # 1.5 dB: its batch 1 failed once and ran again: the counts of the clean run
    assert row_counts([got[1.5]]) == row_counts([want[1.5]])
    assert (got[1.5]["status"], got[1.5]["failure"]) == (want[1.5]["status"], "") == ("errors", "")
    # 2.5 dB: batch 0 failed twice: the point is failed, with the reason, and nothing counted
    assert (got[2.5]["status"], got[2.5]["failure"], got[2.5]["frames"]) == ("failed", FAILURE, 0)
    assert sim_faults.runs(tmp_path / "faults") == {(1.5, 1): 2, (2.5, 0): 2}     # no third run
    assert by_ebn0(read_csv(out / "results.csv"))[2.5]["failure"] == FAILURE
    with ResultsStore(out) as store:
        assert store.failures(small_spec.runs[0].key) == {2500: FAILURE}


def test_resume_simulates_a_failed_point_again(sim_faults, small_spec, reference_rows, row_counts, tmp_path):
    faulty = sim_faults.FaultyExecutor(InlineExecutor(), tmp_path / "faults", FAULTS)
    run_campaign(small_spec, tmp_path, progress=False, executor=faulty)
    rows = run_campaign(small_spec, tmp_path, resume=True, progress=False)       # the cause is gone
    assert row_counts(rows) == row_counts(reference_rows)
    assert [(r["status"], r["failure"]) for r in rows] == [("errors", ""), ("frames", "")]
    with ResultsStore(tmp_path) as store:
        assert store.failures(small_spec.runs[0].key) == {}


def test_a_dead_worker_process_is_replaced(sim_faults, small_spec, reference_rows, row_counts, tmp_path):
    """A batch that kills its worker process (a crash in a backend) fails with
    BrokenProcessPool, runs again in a new process, and the counts are the clean run's."""
    with executor("processes") as inner:
        faulty = sim_faults.FaultyExecutor(inner, tmp_path / "faults", {(1.5, 0): 1}, crash=True)
        rows = run_campaign(small_spec, tmp_path / "out", progress=False, executor=faulty)
    assert row_counts(rows) == row_counts(reference_rows)
    assert all(r["failure"] == "" for r in rows)
    assert sim_faults.runs(tmp_path / "faults") == {(1.5, 0): 2}


def test_cli_prints_the_failed_point_and_exits_1(sim_faults, small_args, reference_rows, monkeypatch,
                                                 capsys, tmp_path):
    faulty = sim_faults.FaultyExecutor(InlineExecutor(), tmp_path / "faults", FAULTS)
    monkeypatch.setattr(runner, "make_executor", lambda *args: faulty)
    status = main(["wifi-648-1/2", "--ebn0", "1.5:2.5:1.0", "--algorithm", "nms", "--iterations", "10",
                   "--max-errors", "10", "--max-frames", "256", "--batch", "16", "--seed", "7",
                   "--backend", small_args["backend"], "--quiet", "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert status == 1
    table = [line.split() for line in captured.out.splitlines()]
    assert [line[-1] for line in table[1:3]] == ["errors", "failed"]
    assert f"failed: wifi-648-1/2 nms 10 it 2.50 dB: {FAILURE}" in captured.out.splitlines()
    assert "1 of 2 points failed (the others are complete)" in captured.err


def test_a_failed_batch_drops_the_workers_cached_decoder(small_spec, monkeypatch):
    monkeypatch.setattr(worker, "_decoders", OrderedDict())          # this test's decoders only
    task = BatchTask.of(small_spec.runs[0], 1.5, 3, small_spec.backend)
    want = run_batch(task)
    (first,) = worker._decoders.values()

    def broken(*args):
        raise RuntimeError("injected: the decoder is unusable now")

    real = worker.simulate_batch
    monkeypatch.setattr(worker, "simulate_batch", broken)
    with pytest.raises(RuntimeError, match="unusable"):
        run_batch(task)
    assert not worker._decoders                                      # dropped, not reused
    monkeypatch.setattr(worker, "simulate_batch", real)
    got = run_batch(task)                                             # built again: same counts
    assert got._replace(seconds=0.0) == want._replace(seconds=0.0)
    (second,) = worker._decoders.values()
    assert second is not first
