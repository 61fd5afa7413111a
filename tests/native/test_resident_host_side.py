"""The latency preset's host side in gpuldpc._core (lib/resident_bindings.cpp), against a stand-in
for the resident kernel: a thread that plays the kernel's side of the request block
(python/gpuldpc/cuda/resident.py, kernels/resident.cuh) on ordinary memory.  No GPU needed."""
import threading
import time

import numpy as np
import pytest

from gpuldpc import _native

core = _native.core() if _native.available() else None
pytestmark = pytest.mark.skipif(core is None, reason="gpuldpc._core is not built")
ACK, ALIVE = 2, 3


def request_word(seq, address, frames):
    return seq << 48 | address | (frames - 1)


def test_request_copies_the_rows_then_posts_and_returns_at_the_acknowledgement():
    ctrl = np.zeros(4, np.uint32)
    ctrl[ALIVE] = 1
    staging = np.zeros(2 * 2304 * 4 + 64, np.uint8)
    rows = np.random.default_rng(1).standard_normal((2, 2304)).astype(np.float32)
    word = request_word(7, staging.ctypes.data, 2)
    seen = {}

    def kernel():                      # polls the request, reads the rows it names, acknowledges
        deadline = time.monotonic() + 5
        while int(ctrl[:2].view(np.uint64)[0]) == 0 and time.monotonic() < deadline:
            pass
        seen["request"] = int(ctrl[:2].view(np.uint64)[0])
        seen["rows"] = staging[:rows.nbytes].view(np.float32).reshape(2, 2304).copy()
        time.sleep(0.002)
        ctrl[ACK] = 7

    t = threading.Thread(target=kernel)
    t.start()
    start = time.monotonic()
    status = core.resident_request(ctrl.ctypes.data, word, 7, rows, staging.ctypes.data, 10**9)
    t.join()
    assert status == 0
    assert time.monotonic() - start >= 0.002          # it waited for the acknowledgement
    assert seen["request"] == word
    np.testing.assert_array_equal(seen["rows"], rows)  # the rows were there before the request


def test_request_to_a_kernel_that_is_not_running_or_does_not_answer():
    ctrl = np.zeros(4, np.uint32)
    word = request_word(3, 0x1000, 1)
    assert core.resident_request(ctrl.ctypes.data, word, 3, None, 0, 10**9) == 1   # not running: at once
    assert int(ctrl[:2].view(np.uint64)[0]) == word
    ctrl[ALIVE] = 1
    start = time.monotonic()
    assert core.resident_request(ctrl.ctypes.data, word, 4, None, 0, 3_000_000) == 2
    assert 0.003 <= time.monotonic() - start < 1.0
    assert core.resident_request(ctrl.ctypes.data, word, 5, None, 0, 0) == 2      # post only: no spin
    ctrl[ACK] = 5
    assert core.resident_request(ctrl.ctypes.data, word, 5, None, 0, 10**9) == 0


def test_request_refuses_rows_that_are_not_contiguous():
    ctrl = np.zeros(4, np.uint32)
    staging = np.zeros(4096, np.uint8)
    rows = np.zeros((4, 64), np.float32)[:, ::2]
    with pytest.raises((BufferError, ValueError), match="contiguous"):   # NumPy: ValueError
        core.resident_request(ctrl.ctypes.data, 1 << 48, 1, rows, staging.ctypes.data, 0)
    assert int(ctrl[:2].view(np.uint64)[0]) == 0                                   # nothing posted


def test_mapped_results_are_fresh_arrays_of_the_block():
    frames, width, capacity = 3, 10, 8
    offset = -(-5 * capacity // 16) * 16                 # engine._flags_offset
    block = np.zeros(offset + capacity * width, np.uint8)
    block[:4 * frames].view(np.int32)[:] = [10, 3, 7]
    block[4 * capacity:4 * capacity + frames] = [0, 1, 3]  # failed; valid; valid with non-finite LLRs
    bits = np.random.default_rng(2).integers(0, 2, (frames, width), dtype=np.uint8)
    block[offset:offset + frames * width] = bits.ravel()
    got_bits, iterations, valid, bad = core.mapped_results(block.ctypes.data, frames, width, offset, capacity)
    np.testing.assert_array_equal(got_bits, bits)
    assert got_bits.dtype == np.uint8 and got_bits.flags.c_contiguous and got_bits.flags.writeable
    assert iterations.dtype == np.int32 and iterations.tolist() == [10, 3, 7]
    assert valid.dtype == bool and valid.tolist() == [False, True, True]
    assert bad.dtype == bool and bad.tolist() == [False, False, True]
    block[:] = 0
    assert iterations.tolist() == [10, 3, 7] and got_bits.any()                    # copies, not views
