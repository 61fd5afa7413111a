"""DVB-S2 BCH decoder (gpuldpc.codes.dvbs2_bch.bch_decode, C++ gpuldpc._core.BchDecoder).

What BCH guarantees, and what is tested: a frame with at most t bit errors (anywhere,
information or parity) is decoded to the sent codeword with "BCH ok" (ok = True).  With
more than t errors the bounded-distance decoder either reports failure (ok = False, frame
returned as received) or miscorrects: it returns, with ok = True, another codeword within
t bits of the received frame -- never the sent one, which is more than t bits away.  For
these long codes a miscorrection needs a random error pattern to land within t of another
codeword, which is rare, so ok = False is expected in the large majority.
"""
import os
import signal

import numpy as np
import pytest

from gpuldpc import _native
from gpuldpc.codes import dvbs2_bch

pytestmark = pytest.mark.skipif(not _native.available(), reason="gpuldpc._core is not built")

# Both frame sizes, both fields, every t (12, 10, 8); cheap encoders (normal 9/10's matrix is 45 MB).
CASES = [("short", "1/4"), ("short", "8/9"), ("normal", "1/2"), ("normal", "2/3"), ("normal", "8/9")]


def _t(frame, rate):
    return dvbs2_bch.T[frame].get(rate, 12)


def _codewords(frame, rate, batch, seed):
    k, _ = dvbs2_bch.sizes(frame, rate)
    rng = np.random.default_rng(seed)
    return rng, dvbs2_bch.bch_encode(frame, rate, rng.integers(0, 2, (batch, k), dtype=np.uint8))


def _add_errors(rng, cw, counts, lo=0):
    rx = cw.copy()
    for f, e in enumerate(counts):
        rx[f, rng.choice(np.arange(lo, cw.shape[1]), e, replace=False)] ^= 1
    return rx


@pytest.mark.parametrize("frame,rate", CASES)
def test_up_to_t_errors_are_corrected_exactly(frame, rate):
    t = _t(frame, rate)
    k, n = dvbs2_bch.sizes(frame, rate)
    counts = list(range(t + 1)) * 2
    rng, cw = _codewords(frame, rate, len(counts), 1)
    rx = _add_errors(rng, cw, counts)
    info, ok = dvbs2_bch.bch_decode(frame, rate, rx)
    assert ok.all()
    np.testing.assert_array_equal(info, cw[:, :k])
    corrected, errors = dvbs2_bch.bch_decoder(frame, rate).decode(rx)
    np.testing.assert_array_equal(corrected, cw)
    np.testing.assert_array_equal(errors, counts)


@pytest.mark.parametrize("frame,rate", CASES)
def test_t_errors_in_parity_bits_and_at_the_frame_ends(frame, rate):
    t = _t(frame, rate)
    k, n = dvbs2_bch.sizes(frame, rate)
    rng, cw = _codewords(frame, rate, 3, 2)
    rx = _add_errors(rng, cw[:2], [t, 1], lo=k)           # parity bits only
    ends = cw[2:].copy()
    ends[0, [0, 1, n - 2, n - 1]] ^= 1                     # first and last positions
    info, ok = dvbs2_bch.bch_decode(frame, rate, np.concatenate([rx, ends]))
    assert ok.all()
    np.testing.assert_array_equal(info, cw[:, :k])


@pytest.mark.parametrize("frame,rate", CASES)
def test_more_than_t_errors_fail_or_give_another_codeword(frame, rate):
    t = _t(frame, rate)
    counts = [t + 1 + i % 4 for i in range(24)]
    rng, cw = _codewords(frame, rate, len(counts), 3)
    rx = _add_errors(rng, cw, counts)
    dec = dvbs2_bch.bch_decoder(frame, rate)
    corrected, errors = dec.decode(rx)
    ok = errors >= 0
    np.testing.assert_array_equal(corrected[~ok], rx[~ok])             # failures: as received
    for f in np.flatnonzero(ok):                                        # miscorrections
        assert (corrected[f] != cw[f]).any()
        assert (corrected[f] != rx[f]).sum() == errors[f] <= t
        assert dec.decode(corrected[f:f + 1])[1][0] == 0                # a codeword
    assert (~ok).mean() >= 0.9


def test_one_frame_and_other_dtypes():
    k, n = dvbs2_bch.sizes("short", "1/2")
    rng, cw = _codewords("short", "1/2", 1, 4)
    rx = cw[0].astype(np.int64)
    rx[[5, 500, n - 1]] ^= 1
    info, ok = dvbs2_bch.bch_decode("short", "1/2", rx)
    assert info.shape == (k,) and bool(ok)
    np.testing.assert_array_equal(info, cw[0, :k])


def test_a_batch_over_threads_equals_its_frames_one_by_one():
    """A batch is decoded in groups of frames by the shared thread pool: the corrected frames
    and error counts equal those of each frame decoded alone, failures and miscorrections
    included (0 .. t + 3 errors, a batch that is no multiple of a task's frames)."""
    dec = dvbs2_bch.bch_decoder("short", "1/2")
    rng, cw = _codewords("short", "1/2", 61, 6)
    rx = _add_errors(rng, cw, [f % (dec.t + 4) for f in range(61)])
    got, errors = dec.decode(rx)
    for f in range(61):
        one, e = dec.decode(rx[f:f + 1])
        np.testing.assert_array_equal(got[f], one[0])
        assert errors[f] == e[0]
    t = dec.t
    assert (errors[[f for f in range(61) if f % (t + 4) <= t]] == [f % (t + 4) for f in range(61) if f % (t + 4) <= t]).all()
    assert (errors == -1).sum() > 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_decodes_with_a_pool_of_its_own():
    """The shared pool's threads do not survive a fork: a child that decodes a batch after its
    parent did must neither wait for workers that are not there nor decode wrongly (it makes a
    pool of its own; stuck past 20 s, it exits with status 2)."""
    dec = dvbs2_bch.bch_decoder("short", "1/2")
    rng, cw = _codewords("short", "1/2", 24, 8)
    rx = _add_errors(rng, cw, [3] * 24)
    assert (dec.decode(rx)[1] == 3).all()                 # the parent's pool exists now
    pid = os.fork()
    if pid == 0:                                         # child: 0 when decoded right, 2 when stuck
        signal.signal(signal.SIGALRM, lambda *_: os._exit(2))
        signal.alarm(20)
        out, errors = dec.decode(rx)
        os._exit(0 if (errors == 3).all() and (out == cw).all() else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_bad_input_names_the_problem():
    k, n = dvbs2_bch.sizes("short", "1/2")
    with pytest.raises(ValueError, match=rf"\[batch, {n}\]"):
        dvbs2_bch.bch_decode("short", "1/2", np.zeros((2, n - 1), np.uint8))
    bad = np.zeros((2, n), np.uint8)
    bad[1, 7] = 2
    with pytest.raises(ValueError, match="frame 1 bit 7 is 2"):
        dvbs2_bch.bch_decode("short", "1/2", bad)
    many = np.zeros((40, n), np.uint8)          # bad entries in several tasks: the first is named
    many[[33, 9, 21], [3, 11, 0]] = [7, 5, 255]
    with pytest.raises(ValueError, match="frame 9 bit 11 is 5"):
        dvbs2_bch.bch_decode("short", "1/2", many)
    with pytest.raises(TypeError, match="dtype"):
        dvbs2_bch.bch_decode("short", "1/2", np.zeros((2, n), np.float32))
    with pytest.raises(ValueError, match="rate="):
        dvbs2_bch.bch_decode("short", "9/10", np.zeros((2, n), np.uint8))
    with pytest.raises(ValueError, match="vanish"):
        _native.core().BchDecoder(14, (1 << 14) | 0b101011, np.array([1] + [0] * 15 + [1], np.uint8), 100, 12)
