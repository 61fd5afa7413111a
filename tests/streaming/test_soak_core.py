"""Soak without GNU Radio (what the GPU machine runs): 20 s of ``bench/soak.py --path core``.

:class:`gpuldpc.streaming.StreamDecoder` driven as the decoder block drives it (one batch
in flight) from a work thread, frames made by a producer thread, 1 % bad frames in bursts
(NaN, +-inf, all-zero, 1e30), ``on_bad_llr="erase"``, on the fastest CPU backend here:
every frame out once and in order, good payloads exact, exactly the NaN/inf frames marked
and counted, resident memory at the end within 5 % of its value after a 5 s warm-up.
Also: the soak's own checks catch a lost, a reordered and a wrong frame; a good frame's
decoding depends on its noise row alone, and the pool's rows all decode.
"""

import numpy as np
import pytest

import gpuldpc as gl


@pytest.fixture(scope="module")
def soak(bench_module):
    return bench_module("soak")


def test_core_soak_20s_erase_none_lost_bounded_memory(soak, backend):
    r = soak.run(20.0, backend, warmup=5.0, path="core", on_bad_llr="erase")
    d = r["decoder"]
    assert r["backend"] == d["backend"] == backend and d["fallbacks"] == 0
    assert r["frames_in"] > 1000 and r["bad_frames_made"] > 0
    assert r["frames_in"] == r["frames_out"] == d["frames"]
    assert (r["lost"], r["out_of_order"], r["dropped_by_policy"], d["dropped"]) == (0, 0, 0, 0)
    assert r["good_frames_out"] == r["good_frames"] and r["good_frames_wrong"] == 0
    assert d["bad_llr_frames"] == r["non_finite_frames_made"] > 0
    kinds = r["bad_frames"]
    assert {name.split()[0] for name, t in kinds.items() if t["made"]} == set(soak.KINDS)
    for name, t in kinds.items():
        assert t["out"] == t["made"], (name, t)
        assert t["flagged"] == (t["made"] if name.split()[0] in soak.NON_FINITE else 0), (name, t)
    # a whole frame of NaN is erased to 0 everywhere: like an all-zero frame, the all-zero codeword
    for name in ("nan (whole frame)", "zero (whole frame)"):
        assert kinds[name]["all_zero"] == kinds[name]["valid"] == kinds[name]["made"], name
    assert r["memory"]["rss"]["within_bound"], r["memory"]
    assert r["memory"]["gpu"] is None
    assert r["failures"] == []


def test_checker_catches_lost_reordered_and_wrong_frames(soak):
    code = gl.codes.get("wifi-648-1/2")
    maker = soak.FrameMaker(code, bad_fraction=0.0)
    seqs, info, kinds, _ = maker.make(40)
    check = soak.Checker(code.k, on_bad_llr="drop")
    check.sent(seqs, info, kinds)
    flags = np.zeros(40, dtype=bool)
    wrong = info.copy()
    wrong[7, 100] ^= 1
    wrong[8, 5] ^= 1
    valid = ~flags
    valid[8] = False                                                         # 8: a decoding failure
    check.received(seqs[:10], wrong[:10], flags[:10], valid[:10])           # frames 7 and 8 wrong
    check.received(seqs[[12, 11, 13]], info[[12, 11, 13]], flags[:3], ~flags[:3])  # 10 lost, 11 late
    check.received(seqs[14:30], info[14:30], flags[14:30], ~flags[14:30])
    check.close()                                                            # 30..39 never came
    c = check.counts()
    assert (c["good_frames_wrong"], c["good_frames_wrong_valid"], c["good_bit_errors"]) == (2, 1, 2)
    assert c["out_of_order"] == 1
    assert c["lost"] == 1 + 1 + 10 and c["lost_first"][:2] == [10, 11]    # 11 came after 12
    assert c["dropped_by_policy"] == 0       # good frames are never dropped by the bad-LLR policy


def test_bursts_make_the_fraction_asked_with_every_kind(soak):
    code = gl.codes.get("wifi-648-1/2")
    maker = soak.FrameMaker(code, bad_fraction=0.01, seed=5)
    kinds = np.concatenate([maker.kinds(1000) for _ in range(400)])      # the schedule alone
    bad = kinds != soak.GOOD
    assert 0.006 < bad.mean() < 0.014
    assert set(np.unique(kinds[bad] // 2)) == set(range(len(soak.KINDS)))
    starts = np.flatnonzero(bad[1:] & ~bad[:-1])
    assert bad.sum() / len(starts) > 3          # in bursts, not scattered


def test_a_good_frame_decodes_as_its_noise_row_whatever_its_payload(soak, backend):
    """Noise along the bits, y = (2b - 1)(1 + n): the decision errors, iterations and
    syndrome of a frame are its noise row's (a pool of 3 rows at 1 dB, where rows fail)."""
    code = gl.codes.get("wifi-648-1/2")
    maker = soak.FrameMaker(code, bad_fraction=0.0, seed=3, ebn0_db=1.0)
    maker.noise = maker.noise[:3]
    _, info, _, llr = maker.make(120)
    r = gl.Decoder(code, backend=backend, positive_llr_bit=1).decode(llr)
    errors = np.asarray(r.bits) ^ code.encode(info)
    outcomes = {(e.tobytes(), int(i), bool(v)) for e, i, v in zip(errors, r.iterations, r.valid)}
    assert len(outcomes) <= 3
    assert not r.valid.all() and errors.any(axis=1).sum() < len(errors)   # a row fails, one decodes


def test_the_soak_noise_pool_decodes_at_4_db(soak, backend):
    """Every row of the soak's pool (its code, seed 1, Eb/N0 4 dB) decodes, so the soak may
    ask for every good frame exact."""
    code = gl.codes.get("wifi-1944-1/2")
    maker = soak.FrameMaker(code, bad_fraction=0.0)
    assert maker.noise.shape == (soak.NOISE_POOL, code.n)
    llr = -(1.0 + maker.noise) * maker.scale                 # the all-zero word, GNU Radio's sign
    r = gl.Decoder(code, backend=backend, positive_llr_bit=1).decode(llr)
    assert r.valid.all() and not np.asarray(r.bits).any()
