"""Decoder.page_lock on the cuda backend: memory NumPy does not own -- GNU Radio's
double-mapped stream buffers, laid out by gpuldpc.memory_maps.DoubleMap as
vmcircbuf_sysv_shm does -- page-locked in place and copied by DMA from where it lies
(not staged), including batches across the seam of the two views; held by two decoders
at once; unlocked by page_unlock and close; the decoder blocks' work path locking its
input buffer once (issue 13: GNU Radio's buffers at the numpy ring's speed)."""
import gc

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import memory_maps as mm
from gpuldpc.cuda import host_memory
from gpuldpc.streaming import StreamDecoder

pytestmark = pytest.mark.cuda
WIMAX = "wimax-2304-1/2"


@pytest.fixture
def ring_of(cuda):
    """A DoubleMap of 512 WiMAX 2304 frames a view (float32, GNU Radio's LLR sign) filled
    with noisy codewords, and those LLRs."""
    code = gl.codes.get(WIMAX)
    rng = np.random.default_rng(11)
    llr = -gl.channel.transmit(code, code.encode(rng.integers(0, 2, (512, code.k), np.uint8)), 2.0, rng)
    with mm.DoubleMap(512 * code.n * 4) as ring:
        frames = ring.array(np.float32).reshape(-1, code.n)
        frames[:512] = llr
        yield code, frames, llr


def _decoder(code, **kw):
    return gl.Decoder(code, backend="cuda", devices=[0], positive_llr_bit=1, max_iterations=10, **kw)


def test_a_locked_double_map_is_copied_where_it_lies_across_its_seam(ring_of, monkeypatch):
    code, frames, llr = ring_of
    dec = _decoder(code)
    registry = dec._impl.decoder.engines[0].registry
    assert dec.page_lock(frames) == frames.nbytes and registry.covers(frames[400:700])
    staged = []
    real = host_memory.BackgroundCopy
    monkeypatch.setattr(host_memory, "BackgroundCopy", lambda *a: staged.append(a) or real(*a))
    across = dec.decode(frames[400:700])                     # rows 512.. are rows 0.. again
    want = dec.decode(np.concatenate([llr[400:], llr[:188]]))
    assert len(staged) == 1                                  # only the fresh numpy array was staged
    for field in ("bits", "iterations", "valid"):
        np.testing.assert_array_equal(getattr(across, field), getattr(want, field))
    assert across.valid.mean() > 0.9
    dec.page_unlock(frames)
    assert not registry.covers(frames[:1])
    again = dec.decode(frames[400:700])                      # staged again, same bits
    assert len(staged) == 2 and np.array_equal(again.bits, want.bits)
    dec.close()


def test_two_decoders_hold_one_buffer_until_both_close_and_numpy_memory_until_freed(ring_of):
    code, frames, _ = ring_of
    first, second = _decoder(code), _decoder(code, precision="float16")
    registry = first._impl.decoder.engines[0].registry
    assert first.page_lock(frames) == second.page_lock(frames) == frames.nbytes
    first.close()
    assert registry.covers(frames)
    assert second.decode(frames[:64]).valid.mean() > 0.9
    second.close()
    assert not registry.covers(frames)
    owned = np.array(frames[:300])                           # NumPy's own memory: unlocked when freed
    third = _decoder(code)
    assert third.page_lock(owned) == owned.nbytes and registry.covers(owned)
    start = owned.ctypes.data
    del owned
    gc.collect()
    assert all(not a <= start < b for a, b in registry._held)
    third.close()
    latency = _decoder(code, preset="latency")
    assert latency.page_lock(frames) == 0                    # its kernels read host memory themselves
    latency.close()


def test_the_work_path_locks_its_ring_once_and_decodes_it_exactly(ring_of):
    code, frames, llr = ring_of
    stream = StreamDecoder(code.name, backend="cuda", devices=[0], batch=128, max_iterations=10)
    out, got, consumed = np.zeros((128, code.k), np.uint8), [], 0
    views = frames.shape[0] // 2
    while consumed < 1024:                                   # twice round the ring, windows across the seam
        head = (consumed + 64) % views
        waiting = min(1024 - consumed, 384)
        done, batch = stream.work(frames[head:head + waiting], out)
        if batch is not None:
            got.append(out[:batch.out.shape[0]].copy())
            consumed += done
    assert stream.stats()["page_locked_bytes"] == frames.nbytes
    registry = stream.decoder._impl.decoder.engines[0].registry
    assert registry.covers(frames)
    stream.close()
    assert not registry.covers(frames)
    order = (np.arange(1024) + 64) % views
    want = _decoder(code).decode(llr[order]).info
    np.testing.assert_array_equal(np.concatenate(got), want)
