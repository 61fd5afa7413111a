"""The QC layout the CUDA kernels read: a binary QC code as its non-empty blocks.

For a code with base matrix ``B`` [mb, nb] and expansion ``z`` (``code.base``,
``code.z``; shift ``s``: row ``r`` of the block has its 1 in column
``(r + s) mod z``), the kernels take

* ``edges`` int32 [nblocks, 2]: ``(j*z + s, z - s)`` for every entry ``B[l, j] >= 0``,
  layer (base row) by layer, columns increasing (so the kernels find the column
  ``j*z + (r + s) mod z`` of row ``r`` as ``r + (j*z + s)``, minus ``z`` when
  ``r >= z - s``: three integer operations, no modulo);
* ``layer_start`` int32 [mb + 1]: the blocks of layer ``l`` are
  ``layer_start[l] .. layer_start[l+1] - 1``.

Row ``r`` of layer ``l`` therefore checks the columns ``j*z + (r + s) mod z``
of its blocks, which is row ``l*z + r`` of ``code.H``.  :func:`qc_layout`
checks that against ``code.H`` so a kernel never decodes a different code.
:func:`pair_layers` reorders the layers (``order``: base row ``order[l]`` is
layer ``l``) for the kernel that does two layers of no common column a step.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class QcLayout(NamedTuple):
    """Kernel-side description of a binary QC code (see the module docstring)."""

    n: int
    z: int
    layers: int
    edges: np.ndarray          # int32 [nblocks, 2]: (j*z + s, z - s)
    layer_start: np.ndarray    # int32 [layers + 1]
    max_row_blocks: int        # largest number of blocks in a layer (check degree)
    order: tuple | None = None  # base rows in the layers' order, where not 0..mb-1 (:func:`pair_layers`)

    @property
    def nblocks(self) -> int:
        return int(self.edges.shape[0])


class NotQuasiCyclic(ValueError):
    """The code has no QC description the CUDA kernels can use."""


def qc_layout(code) -> QcLayout:
    """The :class:`QcLayout` of a binary QC ``code``; raises :class:`NotQuasiCyclic`."""
    if not code.is_binary:
        raise NotQuasiCyclic(f"code {code.name!r} is a GF({code.q}) code; the binary QC kernels need q = 2")
    if code.base is None or not code.z:
        raise NotQuasiCyclic(f"code {code.name!r} has no QC base matrix (code.base, code.z); the CUDA "
                             "backend decodes QC codes only, use backend='cpu' or 'reference'")
    base, z = np.asarray(code.base), int(code.z)
    mb, nb = base.shape
    if nb * z != code.n or mb * z != code.m:
        raise NotQuasiCyclic(f"code {code.name!r}: base matrix {mb}x{nb} with z={z} does not match "
                             f"H of shape {code.m}x{code.n}")
    rows, cols = np.nonzero(base >= 0)
    shifts = base[rows, cols] % z
    edges = np.stack([cols * z + shifts, z - shifts], axis=1).astype(np.int32)
    counts = np.bincount(rows, minlength=mb)
    layer_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    layout = QcLayout(code.n, z, mb, np.ascontiguousarray(edges), layer_start, int(counts.max()))
    _check_against_h(code, layout)
    return layout


def _check_against_h(code, layout: QcLayout):
    """Raise unless the layout's checks are exactly the rows of ``code.H``."""
    z = layout.z
    r = np.arange(z)
    rows, cols = [], []
    for l in range(layout.layers):
        for b in range(layout.layer_start[l], layout.layer_start[l + 1]):
            first, wrap = layout.edges[b]
            rows.append(l * z + r)
            cols.append(r + first - np.where(r >= wrap, z, 0))
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    H = code.H
    expanded = np.zeros(H.shape, dtype=bool)
    expanded[rows, cols] = True
    if np.count_nonzero(expanded) != rows.size or not np.array_equal(expanded, H.toarray() != 0):
        raise NotQuasiCyclic(f"code {code.name!r}: H is not the expansion of its base matrix "
                             f"(z={z}); the CUDA kernels would decode another code")


def pair_layers(layout: QcLayout) -> QcLayout | None:
    """``layout`` with its layers reordered so that layers ``2i`` and ``2i + 1`` share no base
    column, or None where no such order exists (or fewer than 4 layers).  Two such layers update
    disjoint posteriors, so the latency kernel ``pl12x2x7`` does them in one step, and its result
    is the layered schedule in the new order (kernels/qc_decode.cuh SharedRowMinSum, GROUP 2).
    The pairs are the first perfect matching of a depth-first search over the layers in order
    (each pair as (lower, higher)); WiMAX rate 1/2 has one, the WiFi codes have none."""
    mb = layout.layers
    if mb < 4 or mb % 2:
        return None
    cols = [{int(c) // layout.z for c in layout.edges[layout.layer_start[l]:layout.layer_start[l + 1], 0]}
            for l in range(mb)]

    def match(free: list[int]) -> list[int] | None:
        if not free:
            return []
        first, rest = free[0], free[1:]
        for other in rest:
            if not cols[first] & cols[other]:
                tail = match([l for l in rest if l != other])
                if tail is not None:
                    return [first, other] + tail
        return None

    order = match(list(range(mb)))
    if order is None:
        return None
    blocks = [np.arange(layout.layer_start[l], layout.layer_start[l + 1]) for l in order]
    counts = np.array([b.size for b in blocks])
    return layout._replace(edges=np.ascontiguousarray(layout.edges[np.concatenate(blocks)]),
                           layer_start=np.concatenate([[0], np.cumsum(counts)]).astype(np.int32),
                           order=tuple(order))
