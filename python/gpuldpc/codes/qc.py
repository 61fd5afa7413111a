"""Quasi-cyclic expansion of a binary base matrix into a parity-check matrix.

A base matrix B [mb, nb] over {-1, 0, .., z-1} stands for H [mb*z, nb*z] made
of z x z blocks: ``-1`` is the zero block and ``s >= 0`` the identity with its
columns cyclically shifted right by s, i.e. row r of the block has its single 1
in column (r + s) mod z (``np.roll(np.eye(z), s, axis=1)``, MATLAB
``circshift(eye(z), [0 s])``), the convention of IEEE 802.11n/802.16e.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .code import CodeError


def _check_base(base, z: int) -> np.ndarray:
    """Return ``base`` as an int64 array after checking shape and shift range."""
    if isinstance(z, bool) or not isinstance(z, (int, np.integer)) or z < 1:
        raise CodeError(f"expansion factor z must be an integer >= 1, got {z!r}")
    arr = np.asarray(base)
    if arr.ndim != 2 or arr.size == 0:
        raise CodeError(f"base matrix must be a non-empty 2-D array, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise CodeError(f"base matrix entries must be integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    bad = np.argwhere((arr < -1) | (arr >= z))
    if bad.size:
        i, j = bad[0]
        raise CodeError(f"base matrix entry ({i}, {j}) = {arr[i, j]} is not -1 or a shift "
                        f"in 0..{z - 1} (z = {z})")
    return arr


def qc_expand(base, z: int) -> sp.csr_matrix:
    """Expand a base matrix of circulant shifts into H (uint8 CSR, entries 1).

    Parameters
    ----------
    base : array_like of int, shape [mb, nb]
        ``-1`` = zero block, ``s`` in 0..z-1 = identity shifted right by s.
    z : int
        Expansion factor (block size).

    Returns
    -------
    scipy.sparse.csr_matrix, shape [mb*z, nb*z], dtype uint8
        ``H[i*z + r, j*z + (r + s) % z] = 1`` for every block (i, j) with shift s.
    """
    arr = _check_base(base, z)
    bi, bj = np.nonzero(arr >= 0)
    shifts = arr[bi, bj]
    r = np.arange(z)
    rows = (bi[:, None] * z + r).ravel()
    cols = (bj[:, None] * z + (r + shifts[:, None]) % z).ravel()
    mb, nb = arr.shape
    data = np.ones(rows.size, dtype=np.uint8)
    H = sp.csr_matrix((data, (rows, cols)), shape=(mb * z, nb * z))
    H.sort_indices()
    return H


def in_layer_order(code, order):
    """``code`` with its base rows (layers) in ``order``, as a code of its own (the same
    codewords; the rows of H permuted): the layered schedule of the result updates the layers
    in that order.  The CUDA latency kernel that does two layers a step decodes in such an
    order (``CudaDecoder.layout.order``, :func:`gpuldpc.cuda.layout.pair_layers`); the
    reference and cpu decoders of ``in_layer_order(code, order)`` give its bits exactly."""
    from .code import Code

    base = np.asarray(code.base)[list(order)]
    return Code(f"{code.name} layers {tuple(order)}", qc_expand(base, code.z), code.k, base=base, z=code.z)
