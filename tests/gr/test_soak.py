"""Soak (CI): 60 s of continuous decoding through GNU Radio with the CPU backend.

Runs ``bench/soak.py``'s flowgraph: every frame made must arrive, correct and
in order (payload sequence numbers), and resident memory at the end must stay
within 8 MiB of its value after a 15 s warm-up.  ``python bench/soak.py``
runs the same for 10 minutes.
"""
import importlib.util
import os

SECONDS, WARMUP, RSS_BOUND_MB = 60.0, 15.0, 8.0


def test_soak_60s_no_loss_no_reorder_bounded_memory(repo, backend):
    spec = importlib.util.spec_from_file_location("soak", os.path.join(repo, "bench", "soak.py"))
    soak = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(soak)
    result = soak.run(SECONDS, backend, warmup=WARMUP)
    assert result["backend"] == backend
    assert result["frames_made"] > 1000
    assert result["frames_checked"] == result["frames_made"] == result["decoder"]["frames"]
    assert (result["missing"], result["out_of_order"], result["frame_errors"]) == (0, 0, 0)
    growth = result["rss_max_after_warmup_mb"] - result["rss_warm_mb"]
    assert growth < RSS_BOUND_MB, result
