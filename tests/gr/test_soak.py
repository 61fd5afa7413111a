"""Soak (CI): 60 s of continuous decoding through GNU Radio, cpu backend, 1 % bad frames.

Runs ``bench/soak.py``'s flowgraph (source -> ``gpuldpc.ldpc_decoder(on_bad_llr="drop")``
-> checking sink, each frame tagged with its sequence number): bursts of NaN, +-inf,
all-zero and 1e30 frames.  Every frame made leaves the decoder, in order, except exactly
the NaN/inf frames, which the policy drops (with their tags); every good frame's payload
is exact; the decoder's ``bad_llr_frames`` is the number of NaN/inf frames made; resident
memory at the end is within 5 % of its value after a 15 s warm-up.
``python bench/soak.py --path block --seconds 600`` runs the same for 10 minutes
(``bench/results/debian12-2core-soak-block-cpu.txt``).
"""
import importlib.util
import os

SECONDS, WARMUP = 60.0, 15.0


def load_soak(repo):
    spec = importlib.util.spec_from_file_location("soak", os.path.join(repo, "bench", "soak.py"))
    soak = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(soak)
    return soak


def test_soak_60s_bad_bursts_dropped_none_lost_bounded_memory(repo, backend):
    soak = load_soak(repo)
    r = soak.run(SECONDS, backend, warmup=WARMUP, path="block", on_bad_llr="drop")
    d = r["decoder"]
    assert r["backend"] == d["backend"] == backend and d["fallbacks"] == 0
    assert r["frames_in"] > 1000 and r["bad_frames_made"] > 0
    # every frame accounted for: checked at the sink, or dropped by the policy; nothing else
    assert r["frames_in"] == r["frames_out"] + r["dropped_by_policy"] == d["frames"]
    assert (r["lost"], r["out_of_order"]) == (0, 0), r["lost_first"]
    assert r["dropped_by_policy"] == d["dropped"] == d["bad_llr_frames"] == r["non_finite_frames_made"] > 0
    assert r["good_frames_out"] == r["good_frames"] and r["good_frames_wrong"] == 0
    # each kind was made; only the finite ones came out, none of them marked bad_llr
    kinds = r["bad_frames"]
    assert {name.split()[0] for name, t in kinds.items() if t["made"]} == set(soak.KINDS)
    for name, t in kinds.items():
        assert t["out"] == (0 if name.split()[0] in soak.NON_FINITE else t["made"]), (name, t)
        assert t["flagged"] == 0, (name, t)
    assert r["bad_frames_mismarked"] == 0
    # an all-zero frame is the all-zero codeword: it passes the syndrome check
    zero = kinds["zero (whole frame)"]
    assert zero["all_zero"] == zero["valid"] == zero["made"]
    rss = r["memory"]["rss"]
    assert rss["within_bound"] and abs(rss["change"]) <= 0.05, rss
    assert r["failures"] == []
