"""Framing for streams of LDPC codewords: sync word, payloads, frame sync, checking.

Frame on air (BPSK, bit 0 -> +1, bit 1 -> -1, one symbol per bit)::

    | sync word (64 bits) | LDPC codeword (n bits) | sync word | codeword | ...

Frames follow each other back to back.  The sync word is the CCSDS 64-bit
attached sync marker ``0x034776C7272895B0`` (CCSDS 131.0-B, the ASM of its LDPC
codes): low autocorrelation sidelobes, so its correlation peak locates a frame
to the symbol.

Payload (the k information bits of frame number ``seq``): bits 0..31 carry
``seq`` (MSB first), the rest are pseudo-random bits drawn from
``numpy.random.default_rng([seed, seq])``, so a receiver that knows the seed
can count bit errors and spot lost, repeated or reordered frames.

:class:`FrameSync` finds frames in a stream of soft BPSK symbols (after timing
and carrier recovery): normalized correlation with the sync word,

    rho(i) = sum_j p_j y_{i+j} / sqrt(S sum_j y_{i+j}^2),   p_j = 1 - 2 s_j,

a frame starting where ``|rho|`` peaks above ``threshold``; a negative peak
means the carrier loop locked 180 degrees off (BPSK's ambiguity) and the
frame's symbols are negated.  The codeword's LLRs are
``L = 2 A y / sigma^2`` (positive = bit 0, :mod:`gpuldpc.channel`'s
convention) with amplitude and noise variance from the frame's second and
fourth moments (the M2M4 estimator for BPSK in real Gaussian noise:
``M2 = A^2 + sigma^2``, ``M4 = A^4 + 6 A^2 sigma^2 + 3 sigma^4``, so
``A^2 = sqrt((3 M2^2 - M4) / 2)``, ``sigma^2 = M2 - A^2``), which uses all
64 + n symbols and needs no decisions.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SYNC_WORD = 0x034776C7272895B0
SYNC_BITS = 64
SEQ_BITS = 32


def sync_bits(word: int = SYNC_WORD, nbits: int = SYNC_BITS) -> np.ndarray:
    """The sync word as uint8 bits, MSB first."""
    return ((int(word) >> np.arange(nbits - 1, -1, -1)) & 1).astype(np.uint8)


def payload(seq: int, k: int, seed: int) -> np.ndarray:
    """Information bits (uint8 [k]) of frame ``seq``: 32-bit ``seq`` MSB first, then PRBS."""
    if k <= SEQ_BITS:
        raise ValueError(f"payload: k={k} leaves no room after the {SEQ_BITS}-bit sequence number")
    head = ((int(seq) >> np.arange(SEQ_BITS - 1, -1, -1)) & 1).astype(np.uint8)
    tail = np.random.default_rng([int(seed), int(seq)]).integers(0, 2, k - SEQ_BITS, dtype=np.uint8)
    return np.concatenate([head, tail])


def sequence_number(info) -> int:
    """The sequence number carried by a frame's information bits."""
    head = np.asarray(info[:SEQ_BITS], dtype=np.int64)
    return int((head << np.arange(SEQ_BITS - 1, -1, -1)).sum())


def frame_bits(codewords, word: int = SYNC_WORD) -> np.ndarray:
    """Sync word + codeword per frame, concatenated: uint8 [frames * (64 + n)]."""
    codewords = np.atleast_2d(np.asarray(codewords, dtype=np.uint8))
    sync = np.broadcast_to(sync_bits(word), (codewords.shape[0], SYNC_BITS))
    return np.concatenate([sync, codewords], axis=1).reshape(-1)


class FrameSync:
    """Find sync-word-led frames in soft BPSK symbols and turn them into LLRs.

    Parameters
    ----------
    n : int
        Codeword length (symbols after the sync word).
    threshold : float
        Minimum ``|rho|`` (0..1) of a sync-word match.  Random data gives
        ``rho`` of standard deviation ``1/sqrt(64) = 0.125``; a clean sync word
        at SNR ``A^2/sigma^2`` gives ``sqrt(SNR / (1 + SNR))``.
    word : int
        The 64-bit sync word.

    ``push(symbols)`` takes real soft symbols (any count) and returns the
    frames completed so far as ``(llr float32 [frames, n], flipped bool
    [frames], rho float [frames])``; symbols not yet used are kept.
    """

    def __init__(self, n: int, threshold: float = 0.6, word: int = SYNC_WORD):
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold must lie in (0, 1), got {threshold!r}")
        self.n = int(n)
        self.threshold = float(threshold)
        self.pattern = 1.0 - 2.0 * sync_bits(word).astype(np.float64)
        self._buffer = np.zeros(0, dtype=np.float32)

    @property
    def frame_symbols(self) -> int:
        return SYNC_BITS + self.n

    def _correlation(self, y: np.ndarray) -> np.ndarray:
        windows = np.lib.stride_tricks.sliding_window_view(y.astype(np.float64), SYNC_BITS)
        energy = np.einsum("ij,ij->i", windows, windows)
        return (windows @ self.pattern) / np.sqrt(SYNC_BITS * np.maximum(energy, 1e-30))

    def _llr(self, frame: np.ndarray, flip: bool) -> np.ndarray:
        y = -frame if flip else frame
        y2 = y.astype(np.float64) ** 2
        m2, m4 = float(np.mean(y2)), float(np.mean(y2 ** 2))
        a2 = np.sqrt(max(1.5 * m2 ** 2 - 0.5 * m4, 0.0))
        sigma2 = max(m2 - a2, 1e-3 * m2)
        return (np.float32(2.0 * np.sqrt(a2) / sigma2) * y[SYNC_BITS:]).astype(np.float32)

    def push(self, symbols):
        y = np.concatenate([self._buffer, np.asarray(symbols, dtype=np.float32).ravel()])
        frames, flips, rhos = [], [], []
        start = 0
        span = self.frame_symbols
        while y.size - start >= span + 2 * SYNC_BITS - 1:
            # search the next frame length of starts; the peak is the largest |rho|
            # within a sync word's length of the first crossing, so look that much further
            rho = self._correlation(y[start:start + span + 2 * SYNC_BITS - 1])
            hits = np.flatnonzero(np.abs(rho[:span]) >= self.threshold)
            if hits.size == 0:
                start += span
                continue
            first = hits[0]
            peak = first + int(np.argmax(np.abs(rho[first:first + SYNC_BITS])))
            if start + peak + span > y.size:
                start += peak
                break
            frame = y[start + peak:start + peak + span]
            flips.append(bool(rho[peak] < 0))
            rhos.append(float(abs(rho[peak])))
            frames.append(self._llr(frame, flips[-1]))
            start += peak + span
        self._buffer = y[start:].copy()
        llr = np.stack(frames) if frames else np.zeros((0, self.n), dtype=np.float32)
        return llr, np.array(flips, dtype=bool), np.array(rhos)


@dataclass
class PayloadCheck:
    """Running error counts of received payloads against :func:`payload` (see :meth:`check`).

    k : information bits a frame (0: frames of several codes, each checked at its own
    length);  frames : frames checked;  bits : their information bits;  frame_errors /
    bit_errors : frames with any bit wrong and the wrong bits (against the payload the frame
    should carry);  missing : sequence numbers skipped;  out_of_order : frames whose sequence
    number is not above the previous one.
    """

    k: int
    seed: int
    frames: int = 0
    bits: int = 0
    frame_errors: int = 0
    bit_errors: int = 0
    missing: int = 0
    out_of_order: int = 0
    next_seq: int = 0

    def check(self, info) -> None:
        """Count one frame's information bits (uint8 [k], or of its own length when ``k`` is 0).

        The frame should be ``next_seq``.  When its sequence field says
        otherwise and its payload matches that other number exactly, the frame
        is correct but frames were lost (higher number) or reordered (lower);
        otherwise it is compared, bit by bit, with ``next_seq``'s payload.
        """
        info = np.asarray(info, dtype=np.uint8)
        k = info.size
        seq = sequence_number(info)
        if seq != self.next_seq and np.array_equal(info, payload(seq, k, self.seed)):
            if seq > self.next_seq:
                self.missing += seq - self.next_seq
            else:
                self.out_of_order += 1
        else:
            seq = self.next_seq
            errors = int(np.count_nonzero(info != payload(seq, k, self.seed)))
            self.bit_errors += errors
            self.frame_errors += errors > 0
        self.frames += 1
        self.bits += k
        self.next_seq = max(self.next_seq, seq + 1)

    @property
    def fer(self) -> float:
        return self.frame_errors / self.frames if self.frames else 0.0

    @property
    def ber(self) -> float:
        return self.bit_errors / self.bits if self.bits else 0.0
