"""One batch on the CPU: codewords, BPSK/AWGN LLRs, and its error counts.

Transmitted words come from a pool of ``POOL_SIZE`` random codewords drawn once
per ``(seed, code)`` (:func:`gpuldpc.sim.noise.pool_key`) and encoded with
``code.encode``: frame ``j`` of batch ``b`` sends ``pool[(b*B + j) mod POOL_SIZE]``.
Random words (not the all-zero word) keep a decoder that favours 0 from looking
perfect; a fixed pool keeps the encoder off the hot path, which is what lets the
GPU path generate its LLRs without the host.

LLRs follow :mod:`gpuldpc.channel` exactly (``sigma`` from
:func:`~gpuldpc.channel.sigma_from_ebn0`, ``L = g (x + s w)`` in float32 with
``s = sigma`` and ``g = 2/sigma^2`` rounded to float32, GF(q) symbols as their
binary image through :func:`~gpuldpc.channel.bit_llr_to_symbol_llr`), with the
standard normals ``w`` of the batch's counter-based stream
(:func:`gpuldpc.sim.noise.standard_normals`): bit ``t`` of frame ``j`` takes
normal ``j * n*m + t``.

Errors are counted on the information part, as AFF3CT does: a frame is in error
when any of its ``k`` information symbols is wrong; bit errors are counted on
their binary image (``k*m`` bits per frame).
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from .. import channel, gf
from ..codes.code import Code
from .noise import batch_key, pool_key, standard_normals

__all__ = ["POOL_SIZE", "BatchCounts", "Transmitter", "count_batch", "frame_bit_errors"]

POOL_SIZE = 64


class BatchCounts(NamedTuple):
    """What one batch contributes to its point (all integers except ``seconds``).

    ``bit_errors_sq`` is the sum over frames of (bit errors of the frame)^2, for
    the BER confidence interval (:mod:`gpuldpc.sim.stats`); ``seconds`` is the
    worker's wall time for the batch (channel, decode, count); ``backend`` the
    decoder backend that ran it.
    """

    frames: int
    frame_errors: int
    bit_errors: int
    bit_errors_sq: int
    iterations_sum: int
    seconds: float
    backend: str


class Transmitter:
    """The pool of transmitted codewords of ``(seed, code)`` and the CPU channel.

    Attributes
    ----------
    codewords : uint8 [POOL_SIZE, n]
        Encoded pool (bits, or GF(q) element integers).
    info : uint8 [POOL_SIZE, k]
        Their information part.
    bits : uint8 [POOL_SIZE, n*m]
        The codewords' binary image (bit j of symbol s at ``s*m + j``, :mod:`gpuldpc.gf` order).
    """

    def __init__(self, code: Code, seed: int):
        self.code = code
        self.seed = int(seed)
        rng = np.random.default_rng(pool_key(seed, code.name))
        self.info = rng.integers(0, code.q, size=(POOL_SIZE, code.k), dtype=np.uint8)
        self.codewords = np.ascontiguousarray(code.encode(self.info), dtype=np.uint8)
        image = self.codewords if code.is_binary else gf.GF(code.q).to_bits(self.codewords)
        self.bits = np.ascontiguousarray(image.reshape(POOL_SIZE, -1), dtype=np.uint8)
        self.symbols = channel.bpsk(self.bits)               # [POOL_SIZE, n*m], +1 for bit 0

    def frame_rows(self, batch: int, frames: int) -> np.ndarray:
        """Pool row of each frame of the batch: ``(batch*frames + j) mod POOL_SIZE``."""
        return (int(batch) * frames + np.arange(frames)) % POOL_SIZE

    def llr(self, ebn0_db: float, batch: int, frames: int) -> np.ndarray:
        """Decoder input of the batch: float32 [frames, n] or [frames, n, q]."""
        code = self.code
        sigma = channel.sigma_from_ebn0(ebn0_db, code.k / code.n)
        x = self.symbols[self.frame_rows(batch, frames)]
        w = standard_normals(batch_key(self.seed, code.name, ebn0_db, batch), x.size).reshape(x.shape)
        llr = np.float32(2.0 / sigma ** 2) * (x + np.float32(sigma) * w)
        return llr if code.is_binary else channel.bit_llr_to_symbol_llr(llr, code.q)


def frame_bit_errors(transmitter: Transmitter, batch: int, info) -> np.ndarray:
    """int64 [frames]: wrong bits of each frame's information part (its binary image for
    GF(q)), ``info`` the decided information of batch ``batch`` ([frames, k])."""
    sent = transmitter.info[transmitter.frame_rows(batch, info.shape[0])]
    if transmitter.code.is_binary:                         # same count as channel.count_errors, in uint8
        return np.count_nonzero(info != sent, axis=1).astype(np.int64)
    return channel.count_errors(info, sent, transmitter.code.q).bit_errors


def count_batch(transmitter: Transmitter, batch: int, result, seconds: float, backend: str) -> BatchCounts:
    """Compare a ``DecodeResult`` with the batch's sent information."""
    frames = result.info.shape[0]
    errors = frame_bit_errors(transmitter, batch, result.info)
    return BatchCounts(frames, int(np.count_nonzero(errors)), int(errors.sum()),
                       int((errors * errors).sum()), int(np.asarray(result.iterations, dtype=np.int64).sum()),
                       float(seconds), backend)


def simulate_batch(decoder, transmitter: Transmitter, ebn0_db: float, batch: int, frames: int) -> BatchCounts:
    """Channel, decode and count one batch on the host."""
    t0 = time.perf_counter()
    result = decoder.decode(transmitter.llr(ebn0_db, batch, frames))
    return count_batch(transmitter, batch, result, time.perf_counter() - t0, decoder.backend)
