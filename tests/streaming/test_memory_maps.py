"""gpuldpc.memory_maps: the extent of the buffer a frame array lies in, read from
/proc/self/maps (GNU Radio's double-mapped stream buffers, laid out here by DoubleMap as
vmcircbuf_sysv_shm does), and the decoder blocks' work path handing such a buffer whole to
Decoder.page_lock once (a recording stand-in for the cuda backend's page_lock: this
machine has no GPU; tests/gpu/test_page_lock.py runs the real one)."""
import mmap

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import memory_maps as mm
from gpuldpc.streaming import StreamDecoder

PAGE = mmap.PAGESIZE

MAPS = """\
7f0000000000-7f0000001000 r--s 00000000 00:01 11                         /SYSV00000000 (deleted)
7f0000001000-7f0000011000 rw-s 00000000 00:01 12                         /SYSV00000000 (deleted)
7f0000011000-7f0000021000 rw-s 00000000 00:01 12                         /SYSV00000000 (deleted)
7f0000021000-7f0000022000 r--s 00000000 00:01 11                         /SYSV00000000 (deleted)
7f0000022000-7f0000032000 rw-p 00000000 00:00 0
7f0000032000-7f0000042000 rw-s 00000000 00:01 13                         /SYSV00000000 (deleted)
7f0000042000-7f0000052000 rw-s 00000000 08:01 14                         /data/recording.f32
7f0000052000-7f0000062000 r--s 00000000 00:01 15                         /dev/shm/ring
"""


def test_a_double_map_is_one_run_between_its_guard_pages():
    run = mm.mapping_of(0x7f0000010000, 0x2000, MAPS)          # straddles the two views
    assert run == mm.Mapping(0x7f0000001000, 0x7f0000021000, True)
    assert mm.mapping_of(0x7f0000001000, 0x20000, MAPS) == run
    assert mm.mapping_of(0x7f0000023000, 16, MAPS) == mm.Mapping(0x7f0000022000, 0x7f0000032000, False)
    assert mm.mapping_of(0x7f0000020000, 0x2000, MAPS) is None     # into the guard page
    assert mm.mapping_of(0x7f0000031000, 0x2000, MAPS) is None     # over two objects
    assert mm.mapping_of(0x100, 16, MAPS) is None
    assert mm.mapping_of(0x7f0000043000, 16, MAPS).shared is False    # a mapped file: not locked
    assert mm.mapping_of(0x7f0000053000, 16, MAPS).shared is False    # read-only


def test_double_map_views_alias_and_are_found_whole():
    with mm.DoubleMap(16 * PAGE) as ring:
        a = ring.array(np.float32)
        half = a.size // 2
        a[half - 3:half + 5] = np.arange(8)                         # across the seam
        np.testing.assert_array_equal(a[:5], [3, 4, 5, 6, 7])      # ... lands at the start too
        np.testing.assert_array_equal(a[2 * half - 3:], [0, 1, 2])
        run = mm.mapping_of(a[100:].ctypes.data, 4 * half)
        assert run == mm.Mapping(a.ctypes.data, a.ctypes.data + a.nbytes, True)
        assert mm.numpy_owner(a[100:]) is None
        assert run.array().nbytes == a.nbytes and run.array().ctypes.data == a.ctypes.data
    with pytest.raises(ValueError, match="multiple of the page size"):
        mm.DoubleMap(PAGE + 1)


def test_numpy_memory_is_owned_and_not_shared():
    frames = np.zeros((300, 2304), np.float32)
    assert mm.numpy_owner(frames[10:]) is frames
    run = mm.mapping_of(frames[10:].ctypes.data, frames[10:].nbytes)
    assert run is not None and not run.shared


def test_byte_range_takes_contiguous_buffers_only():
    a = np.zeros((4, 8), np.float32)
    assert mm.byte_range(a) == (a.ctypes.data, a.ctypes.data + 128)
    assert mm.byte_range(bytearray(10))[1] - mm.byte_range(bytearray(10))[0] == 10
    for bad in (a[:, ::2], a[:0]):
        with pytest.raises(ValueError, match="non-empty C-contiguous"):
            mm.byte_range(bad)
    dec = gl.Decoder(gl.codes.get("wimax-2304-1/2"), backend="cpu")
    with pytest.raises(ValueError, match="C-contiguous"):
        dec.page_lock(a[:, ::2])
    assert dec.page_lock(a) == 0                                     # the cpu backend copies nothing to a GPU


class Recording:
    """The cpu decoder, calling itself the cuda backend, with page_lock recorded."""

    backend = "cuda"

    def __init__(self, decoder):
        self._decoder, self.locked = decoder, []

    def __getattr__(self, name):
        return getattr(self._decoder, name)

    def page_lock(self, buffer):
        start, stop = mm.byte_range(buffer)
        half = buffer.nbytes // 2
        self.locked.append((start, stop, mm.mapping_of(start, stop - start),
                            np.array_equal(buffer[:half], buffer[half:])))      # a double map's views alias
        return buffer.nbytes


def test_the_work_path_locks_a_foreign_double_map_once_and_decodes_as_before():
    code = gl.codes.get("wifi-648-1/2")
    total = 300
    rng = np.random.default_rng(3)
    llr = -gl.channel.transmit(code, code.encode(rng.integers(0, 2, (total, code.k), np.uint8)), 3.0, rng)
    stream = StreamDecoder(code.name, backend="cpu", batch=16, max_iterations=10)
    stream.decoder = fake = Recording(stream.decoder)
    with mm.DoubleMap(128 * code.n * 4) as ring:                    # 128 frames a view: a whole number of pages
        frames = ring.array(np.float32).reshape(-1, code.n)
        views = frames.shape[0] // 2
        out, got, written, consumed = np.zeros((16, code.k), np.uint8), [], 0, 0
        while consumed < total:                                      # a writer and a reader going round the ring
            while written < min(total, consumed + views):
                frames[written % views] = llr[written]
                written += 1
            head = consumed % views
            done, batch = stream.work(frames[head:head + written - consumed], out)
            if batch is not None:
                got.append(out[:batch.out.shape[0]].copy())
                consumed += done
        start, stop = frames.ctypes.data, frames.ctypes.data + frames.nbytes
        assert fake.locked == [(start, stop, mm.Mapping(start, stop, True), True)]    # the whole double map, once
        assert stream.stats()["page_locked_bytes"] == frames.nbytes
    want = gl.Decoder(code, backend="cpu", positive_llr_bit=1, max_iterations=10).decode(llr).info
    np.testing.assert_array_equal(np.concatenate(got), want)
    stream.work(np.array(llr[:8]), out)
    assert len(fake.locked) == 1                                     # NumPy's memory: not asked
    stream.close()
    assert stream.stats()["page_locked_bytes"] == 0                  # closed: unlocked, forgotten


def test_the_decoder_block_locks_gnu_radios_input_buffer_once():
    pytest.importorskip("gnuradio.gr", reason="GNU Radio is not installed")
    from gnuradio import blocks, gr

    from gnuradio import gpuldpc

    code = gl.codes.get("wifi-648-1/2")
    rng = np.random.default_rng(4)
    llr = -gl.channel.transmit(code, code.encode(rng.integers(0, 2, (300, code.k), np.uint8)), 3.0, rng)
    block = gpuldpc.ldpc_decoder(code.name, backend="cpu", batch=16, max_iterations=10)
    block.core.decoder = fake = Recording(block.core.decoder)
    sink = blocks.vector_sink_b(code.k)
    tb = gr.top_block()
    tb.connect(blocks.vector_source_f(llr.ravel().tolist(), False, code.n), block, sink)
    tb.run()
    (start, stop, run, aliased), = fake.locked                       # once, on the first work() call
    assert run == mm.Mapping(start, stop, True) and aliased         # GNU Radio's double-mapped buffer, whole
    assert (stop - start) % (2 * code.n * 4) == 0
    want = gl.Decoder(code, backend="cpu", positive_llr_bit=1, max_iterations=10).decode(llr).info
    np.testing.assert_array_equal(np.array(sink.data(), np.uint8).reshape(-1, code.k), want)
