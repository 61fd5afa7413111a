"""The sparse kernel's tables (gpuldpc.cuda.sparse_layout), checked without a GPU: its layers
are the reference decoder's, its column table lists every edge in increasing row order, and
CudaDecoder sends exactly the codes the QC kernels cannot hold to it."""
import numpy as np
import pytest
import scipy.sparse as sp

import gpuldpc as gl
from gpuldpc.cuda.decoder import CudaDecoder
from gpuldpc.cuda.layout import NotQuasiCyclic, QcLayout
from gpuldpc.cuda.sparse_layout import (MAX_ROW, SparseLayout, circulant_form, kernel_name, needs_sparse, row_variant,
                                        sparse_layout)
from gpuldpc.codes.tanner import TannerGraph


def _decoded(name):
    code = gl.codes.get(name)
    return getattr(code, "decoded", code)


@pytest.mark.parametrize("name", ["dvbs2-short-1/2", "dvbs2-short-3/5", "ccsds-c2", "ccsds-ar4ja-1024-2/3",
                                  "wimax-576-1/2"])
def test_tables_describe_h_and_the_reference_layers(name):
    code = _decoded(name)
    lay = sparse_layout(code)
    H = code.H.tocsr()
    kcol = lay.kcol if lay.kcol is not None else np.arange(code.n)   # frame column -> kernel column
    assert (lay.kcol is not None) == name.startswith("dvbs2")
    assert np.array_equal(np.sort(kcol), np.arange(code.n))
    for r in range(0, code.m, max(1, code.m // 300)):           # row r's columns in H's order, then -1
        row = H.indices[H.indptr[r]:H.indptr[r + 1]]
        assert np.array_equal(lay.cols_t[:row.size, r], kcol[row]) and (lay.cols_t[row.size:, r] == -1).all()
    assert lay.cols_t.shape[0] == lay.max_row == np.diff(H.indptr).max()
    layers = TannerGraph(code).layers
    assert lay.layers == len(layers) and lay.layer_start[0] == 0 and lay.layer_start[-1] == code.m
    for l, layer in enumerate(layers):
        rows = np.sort(np.concatenate([b.rows for b in layer]))
        span = np.arange(lay.layer_start[l], lay.layer_start[l + 1])
        assert np.array_equal(rows, span[np.diff(H.indptr)[span] > 0])
        cols = np.concatenate([H.indices[H.indptr[r]:H.indptr[r + 1]] for r in span])
        assert np.unique(cols).size == cols.size              # a layer's rows are disjoint
    # column table: (row, position) of every edge, rows increasing within a column
    assert lay.col_ptr[-1] == H.nnz
    for v in range(0, code.n, max(1, code.n // 200)):
        rows, pos = lay.col_edges[lay.col_ptr[kcol[v]]:lay.col_ptr[kcol[v] + 1]].T
        assert np.all(np.diff(rows) > 0)
        assert np.array_equal(H.indices[H.indptr[rows] + pos], np.full(rows.size, v))
        assert np.array_equal(rows, np.flatnonzero(H[:, v].toarray().ravel()))


@pytest.mark.parametrize("name", ["dvbs2-normal-1/2", "dvbs2-short-3/5"])
def test_dvbs2_kernel_columns_make_a_warps_gathers_adjacent(name):
    """DVB-S2 in the QC form's column order (``kcol``): the columns that 32 consecutive rows of a
    layer read at one edge position fall into about four 32-byte sectors of float32 posteriors
    (128 bytes, a coalesced line), against 9-14 in the frame's order (parity bits q apart)."""
    lay = sparse_layout(gl.codes.get(name))
    inverse = np.argsort(lay.kcol)

    def sectors(cols_t):
        counts = []
        for l in range(lay.layers):
            for w in range(lay.layer_start[l], lay.layer_start[l + 1], 32):
                for cols in cols_t[:, w:min(w + 32, lay.layer_start[l + 1])]:
                    if (cols >= 0).any():
                        counts.append(np.unique(cols[cols >= 0] // 8).size)
        return np.mean(counts)

    frame_order = np.where(lay.cols_t >= 0, inverse[np.maximum(lay.cols_t, 0)], -1)
    assert sectors(lay.cols_t) < 5.0 and sectors(frame_order) > 9.0


def test_empty_rows_inside_and_after_layers():
    H = sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 0, 0, 0]], np.uint8))
    lay = sparse_layout(gl.codes.Code("holes", H, k=1))
    assert lay.layer_start.tolist() == [0, 3, 5]


def test_rows_heavier_than_the_record_are_refused():
    H = sp.csr_matrix(np.ones((2, MAX_ROW + 1), np.uint8))
    with pytest.raises(NotQuasiCyclic, match=f"a check row of {MAX_ROW + 1} edges exceeds the sparse kernel's "
                                             f"limit of {MAX_ROW}"):
        sparse_layout(gl.codes.Code("heavy", H, k=MAX_ROW - 1))


@pytest.mark.parametrize("name, sparse", [("wimax-2304-1/2", False), ("nr-bg1-z384", False),
                                          ("ccsds-ar4ja-4096-1/2", False), ("ccsds-ar4ja-16384-1/2", True),
                                          ("ccsds-c2", True), ("dvbs2-normal-1/2", True), ("dvbs2-short-7/15", True)])
def test_which_codes_go_to_the_sparse_kernel(name, sparse):
    layout, kernel = CudaDecoder._kernel(_decoded(name), "nms", "layered", "float32", "throughput", "float32")
    assert isinstance(layout, SparseLayout) == sparse
    assert (kernel == "sparse_decode") == sparse
    if sparse:
        with pytest.raises(NotQuasiCyclic, match="which runs min-sum"):
            CudaDecoder._kernel(_decoded(name), "spa", "layered", "float32", "throughput", "float32")


def test_z_above_the_qc_blocks_needs_the_sparse_kernel():
    def layout(z):
        return QcLayout(n=4 * z, z=z, layers=1, edges=np.zeros((2, 2), np.int32),
                        layer_start=np.array([0, 2], np.int32), max_row_blocks=2)
    assert not needs_sparse(layout(512)) and needs_sparse(layout(513)) and needs_sparse(layout(2048))


@pytest.mark.parametrize("name, variant", [("ccsds-c2", 34), ("dvbs2-normal-9/10", 32), ("dvbs2-short-1/2", 8),
                                           ("ccsds-ar4ja-16384-1/2", 8)])
def test_each_code_takes_the_narrowest_row_variant(name, variant):
    """sp<DC_MAX> holds rows of up to DC_MAX edges in registers: C2's rows of 33 edges take sp34
    (three blocks an SM in binary16, where sp40 holds two: kernels/sparse_decode.cu) where their
    columns come from the table (flooding, posteriors in device memory)."""
    lay = sparse_layout(_decoded(name))
    assert row_variant(lay) == variant >= lay.max_row
    assert kernel_name(lay, "float16", "device", "layered", "i8") == f"sp{variant}_f16_gl_layered_i8"
    assert kernel_name(lay, "float32", "shared", "flooding", "f32") == f"sp{variant}_f32_sh_flooding_f32"
    assert kernel_name(lay, "float16", "shared", "layered", "i8") == f"sp{variant}_f16_sh_layered_i8"
    circulant = "sp33c" if name == "ccsds-c2" else f"sp{variant}"      # float32 computes C2's columns
    assert kernel_name(lay, "float32", "shared", "layered", "i8") == f"{circulant}_f32_sh_layered_i8"


def _circulant_columns(circ, r):
    """Row r's columns as kernels/sparse_decode.cu's CirculantColumns computes them."""
    i, t = divmod(r, circ.z)
    slots = circ.slots[i]
    cols = [t + a - (circ.z if t >= lim else 0) for a, lim in slots[:slots[-1, 0]]]
    return cols + ([circ.extra[r]] if circ.extra[r] >= 0 else [])


def test_c2_rows_are_32_circulants_of_511_and_the_pad_columns():
    """C2's circulant form: two block rows of 16 weight-2 blocks of z = 511 (32 circulants a row)
    and the mother's pad columns 8176, 8177 as the extra columns of rows 0 and 511; the columns the
    kernel computes are each row's columns of H; the reference's layers lie in one block row."""
    code = _decoded("ccsds-c2")
    lay = sparse_layout(code)
    circ = lay.circulants
    assert circ.z == 511 and circ.slots.shape == (2, 33, 2) and list(circ.slots[:, -1, 0]) == [32, 32]
    assert np.array_equal(np.nonzero(circ.extra >= 0)[0], [0, 511]) and list(circ.extra[[0, 511]]) == [8176, 8177]
    H = code.H.tocsr()
    for r in range(code.m):
        assert sorted(_circulant_columns(circ, r)) == list(H.indices[H.indptr[r]:H.indptr[r + 1]]), r
    assert (lay.layer_start[:-1] // 511 == (lay.layer_start[1:] - 1) // 511).all()


def test_codes_without_a_circulant_form_keep_the_table():
    """A row with two columns in no circulant, rows of at most 16 edges, or a column order of the
    code's own (DVB-S2) leave ``circulants`` None."""
    code = _decoded("ccsds-c2")
    H = code.H.tolil()
    H[3, 4000], H[3, 4001] = 1, 1                               # two extra columns in one row
    starts = sparse_layout(code).layer_start
    assert circulant_form(H.tocsr(), starts) is None
    assert circulant_form(code.H, np.array([0, 600, code.m])) is None      # a layer across block rows
    for name in ("dvbs2-short-1/2", "dvbs2-normal-9/10", "ccsds-ar4ja-16384-1/2"):
        assert sparse_layout(_decoded(name)).circulants is None
