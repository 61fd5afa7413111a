"""gpuldpc.framing: sync word, payloads, frame sync on soft symbols, payload checking."""
import numpy as np
import pytest

from gpuldpc import framing


def test_sync_word_and_payload_layout():
    bits = framing.sync_bits()
    assert bits.size == 64 and int("".join(map(str, bits)), 2) == 0x034776C7272895B0
    info = framing.payload(0x01020304, 100, seed=9)
    assert framing.sequence_number(info) == 0x01020304
    assert np.array_equal(info, framing.payload(0x01020304, 100, seed=9))
    assert not np.array_equal(info[32:], framing.payload(0x01020305, 100, seed=9)[32:])
    with pytest.raises(ValueError, match="k=32 leaves no room"):
        framing.payload(0, 32, 1)


def test_frame_sync_finds_frames_in_pieces_with_flip_and_scales_llrs():
    rng = np.random.default_rng(4)
    n, frames, sigma = 1944, 5, 0.5
    words = rng.integers(0, 2, (frames, n), dtype=np.uint8)
    bits = np.concatenate([rng.integers(0, 2, 77, dtype=np.uint8), framing.frame_bits(words),
                           rng.integers(0, 2, 300, dtype=np.uint8)])
    y = -(1.0 - 2.0 * bits) * 0.8 + sigma * rng.standard_normal(bits.size)   # 180 deg off, A = 0.8
    sync = framing.FrameSync(n)
    pieces = [sync.push(part) for part in np.array_split(y.astype(np.float32), 7)]
    llr = np.concatenate([p[0] for p in pieces])
    flipped = np.concatenate([p[1] for p in pieces])
    assert llr.shape == (frames, n) and flipped.all()
    starts = 77 + np.arange(frames) * (64 + n) + 64
    received = -y[starts[:, None] + np.arange(n)]                        # flip undone
    ratio = llr / received                                               # L = 2 A y / sigma^2
    assert np.allclose(ratio, ratio[:, :1], rtol=1e-5)
    assert ratio[:, 0] == pytest.approx(np.full(frames, 2 * 0.8 / sigma ** 2), rel=0.15)


def test_frame_sync_ignores_noise():
    rng = np.random.default_rng(5)
    llr, _, _ = framing.FrameSync(300).push(rng.standard_normal(20000).astype(np.float32))
    assert llr.shape == (0, 300)


def test_payload_check_counts_errors_losses_and_reordering():
    check = framing.PayloadCheck(k=64, seed=3)
    frames = [framing.payload(i, 64, 3) for i in range(6)]
    wrong = frames[1].copy()
    wrong[[40, 50, 60]] ^= 1
    for info in (frames[0], wrong, frames[2], frames[4], frames[3], frames[5]):
        check.check(info)
    assert (check.frames, check.frame_errors, check.bit_errors) == (6, 1, 3)
    assert (check.missing, check.out_of_order, check.next_seq) == (1, 1, 6)
    assert check.fer == pytest.approx(1 / 6) and check.ber == pytest.approx(3 / (6 * 64))
