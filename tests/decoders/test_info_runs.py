"""gpuldpc.result.info_runs: the runs the CUDA decoders copy DecodeResult.info from by DMA."""
import numpy as np

import gpuldpc as gl
from gpuldpc.result import info_index, info_runs


def test_runs_rebuild_the_information_symbols():
    code = gl.codes.get("gf32-837-726")             # information symbols in three runs
    index = info_index(code)
    runs = info_runs(index)
    assert [at for _, at, _ in runs] == [0, runs[0][2], runs[0][2] + runs[1][2]]
    assert len(runs) == 3 and sum(width for *_, width in runs) == code.k
    bits = np.random.default_rng(0).integers(0, 32, (5, code.n), dtype=np.uint8)
    joined = np.concatenate([bits[:, p:p + w] for p, _, w in runs], axis=1)
    np.testing.assert_array_equal(joined, bits[:, np.asarray(code.info_positions)])


def test_a_run_is_a_view():
    assert info_runs(info_index(gl.codes.get("gf32-620-310"))) == ()
    assert info_runs(np.array([4, 5, 6, 9, 2, 3])) == ((4, 0, 3), (9, 3, 1), (2, 4, 2))


def test_a_pageable_result_block_gets_no_runs():
    """The CUDA engine's ticket DMAs info only into page-locked blocks; an ordinary one (no pool, or
    past the pool's limit) leaves info to the decoder's gather from the decisions."""
    from gpuldpc.cuda.engine import Ticket

    t = Ticket(None, 5, 9, None, (), info_runs=((0, 0, 3), (6, 3, 2)))
    assert t.info is None and t.info_runs == () and t.bits.shape == (5, 9)
