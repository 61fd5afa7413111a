"""What a decoder returns: :class:`DecodeResult`, and :func:`make_result` that every
backend uses to build one."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class DecodeResult(NamedTuple):
    """What ``Decoder.decode`` returns (numpy arrays, first axis = frame).

    bits : uint8 [batch, n]
        Hard decisions (bits, or GF(q) symbols as element integers).  A shaped code
        (:mod:`gpuldpc.codes.shaping`, e.g. 5G NR): the decisions at its
        ``decoded_positions``, [batch, len(decoded_positions)], in mother order (the
        mother codeword less the block columns pruned away).
    info : uint8 [batch, k]
        The information part, ``bits[:, code.info_positions]`` (``bits[:, :k]``
        for every systematic code; a shaped code's ``k`` information bits, shortened
        ones dropped).
    iterations : int32 [batch]
        Iterations run per frame (with early stop: the iteration whose
        decisions satisfied every check; without: ``max_iterations``).
    valid : bool [batch]
        Syndrome of ``bits`` is zero (a shaped code: on the checks of its pruned code,
        ``code.decoded``; the removed parity bits follow from the kept ones, so a valid
        mother codeword with these bits exists).
    bad_llr : bool [batch]
        The frame's LLRs held NaN or +-inf, decoded as erased / saturated
        (:mod:`gpuldpc.bad_llr`); only ever True with ``on_bad_llr="erase"``
        (the default policy raises instead).
    llr : float32 [batch, n] (GF(q): [batch, n, q]) or None
        Soft output, with ``gl.Decoder(soft_output=...)`` (else None; :mod:`gpuldpc.soft`):
        the posterior LLRs ``L = Lch + sum of the check messages`` each frame held when it
        stopped (the iteration of ``iterations``), in the decoder's LLR sign (positive means
        bit 0, or bit 1 with ``positive_llr_bit=1``), so ``bits == (llr < 0)`` (``> 0`` for
        ``positive_llr_bit=1``); ``soft_output="extrinsic"``: ``posterior - channel``.  GF(q):
        the posterior cost vectors, normalised to 0 at the decided symbol.  A shaped code:
        the posteriors at ``decoded_positions``, as ``bits``.
    """

    bits: np.ndarray
    info: np.ndarray
    iterations: np.ndarray
    valid: np.ndarray
    bad_llr: np.ndarray
    llr: np.ndarray | None = None


def info_index(code):
    """Where ``DecodeResult.info`` lies in ``bits[:, ...]``: the information positions
    (``code.info_positions``; a shaped code's, ``code.decoded_info``, index its decoded
    positions), as a slice when they are a run (a view), else as the positions (a copy)."""
    pos = np.asarray(getattr(code, "decoded_info", code.info_positions))
    first = int(pos[0]) if pos.size else 0
    return slice(first, first + pos.size) if np.array_equal(pos, np.arange(first, first + pos.size)) else pos


def info_runs(index) -> tuple[tuple[int, int, int], ...]:
    """The runs of consecutive positions of an :func:`info_index` array, as ``(position,
    column of info, length)`` each; ``()`` for a slice (``info`` is then a view of ``bits``).
    ``bits[:, index]`` is the runs' columns side by side: the CUDA decoders copy each run
    from the device's decisions straight into its columns of ``info`` by DMA (a 2D copy a
    run and chunk, :mod:`gpuldpc.cuda.engine`) instead of gathering on the host."""
    if isinstance(index, slice):
        return ()
    index = np.asarray(index)
    starts = np.concatenate([[0], np.flatnonzero(np.diff(index) != 1) + 1])
    ends = np.concatenate([starts[1:], [index.size]])
    return tuple((int(index[a]), int(a), int(b - a)) for a, b in zip(starts, ends))


def make_result(code, bits: np.ndarray, iterations: np.ndarray, valid: np.ndarray,
                bad_llr: np.ndarray | None = None, out: np.ndarray | None = None,
                llr: np.ndarray | None = None) -> DecodeResult:
    """Assemble a DecodeResult from a backend's arrays (info at ``code.info_positions``;
    ``bad_llr`` None: no frame had bad LLRs; ``out``: the caller's array for the bits,
    checked and filled here; ``llr``: the soft output, or None)."""
    if out is not None:
        if out.shape != np.shape(bits) or out.dtype != np.uint8 or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous uint8 array of shape {np.shape(bits)}, "
                             f"got {out.dtype} {out.shape}")
        np.copyto(out, bits)
        bits = out
    bits = np.ascontiguousarray(bits, dtype=np.uint8)
    info = bits[:, info_index(code)]
    bad = np.zeros(bits.shape[0], bool) if bad_llr is None else np.asarray(bad_llr, dtype=bool)
    return DecodeResult(bits, info, np.asarray(iterations, dtype=np.int32), np.asarray(valid, dtype=bool), bad,
                        llr)
