"""The bookkeeping of gpuldpc.cuda.host_memory without a GPU: the registry of caller arrays
(an owner registered on its second call, as one range, undone when the owner dies; foreign,
small, large, refused memory staged) and the result pool
(blocks reused once every array made from them is gone, waited for when dropped
uncollected, ordinary memory past the limit).  The driver calls are recorded by fakes."""
import contextlib
import gc
import types

import numpy as np
import pytest

from gpuldpc.cuda import host_memory as hm


class FakeDriverLibrary:
    """cuMemHostRegister_v2 / cuMemHostUnregister, recorded; ``refuse`` addresses fail."""

    def __init__(self):
        self.registered, self.unregistered, self.refuse = [], [], set()

    def cuMemHostRegister_v2(self, address, nbytes, flags):
        assert flags == 1
        if address in self.refuse:
            return 712                           # CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
        self.registered.append((address, nbytes))
        return 0

    def cuMemHostUnregister(self, address):
        self.unregistered.append(address)
        return 0


class FakeContext:
    def __init__(self):
        self.context = types.SimpleNamespace(push=lambda: None, pop=lambda: None)

    @contextlib.contextmanager
    def active(self):
        yield self

    current = active


@pytest.fixture
def registry(monkeypatch):
    lib = FakeDriverLibrary()
    monkeypatch.setattr(hm, "libcuda", lambda: lib)
    reg = hm.HostRegistry(FakeContext())
    reg.lib = lib
    return reg


def test_an_owner_is_registered_on_its_second_call_once_as_one_range_until_it_dies(registry):
    frames = np.zeros((3000, 2304), np.float32)               # 27.6 MB
    assert not registry.pin(frames[1000:2000])                 # first seen: staged, not registered
    assert not registry.lib.registered and registry.registered_bytes(frames) == 0
    assert registry.pin(frames[:10]) and registry.pin(frames)  # handed in again
    (address, nbytes), = registry.lib.registered               # one range: exactly the owner's bytes
    assert (address, nbytes) == (frames.ctypes.data, frames.nbytes)
    assert registry.registered_bytes(frames) == nbytes
    del frames
    gc.collect()
    assert registry.lib.unregistered == [address]              # undone when the owner died


def test_an_owner_seen_once_is_forgotten_when_it_dies(registry):
    for _ in range(3):                                         # a fresh array every call
        frames = np.zeros((3000, 2304), np.float32)
        assert not registry.pin(frames)
        del frames
        gc.collect()
    assert not registry.lib.registered and not registry.lib.unregistered and not registry._ranges


def test_foreign_small_large_and_refused_memory_is_staged(registry):
    foreign = np.frombuffer(bytearray(4 << 20), np.float32)
    assert not registry.pin(foreign)                           # not owned by NumPy
    assert not registry.pin(np.zeros(1000, np.float32))        # below min_bytes
    registry.limit_bytes = 2 << 20
    assert not registry.pin(np.zeros(1 << 20, np.float32))     # 4 MiB > limit
    registry.limit_bytes = 1 << 30
    frames = np.zeros((2000, 2304), np.float32)
    registry.lib.refuse.add(frames.ctypes.data)
    assert not registry.pin(frames[:10]) and not registry.pin(frames[:10])   # seen, then refused ...
    assert not registry.pin(frames[-10:]) and not registry.lib.registered   # ... and not tried again
    assert registry.lib.unregistered == [] and not registry.lib.registered
    assert not foreign.flags.owndata and registry.registered_bytes(frames) == 0
    del frames
    gc.collect()
    assert registry.lib.unregistered == []


def test_held_memory_is_registered_once_for_all_holders_and_covers_only_its_rows(registry, monkeypatch):
    monkeypatch.setattr(hm, "is_pinned", lambda array: False)
    ring = np.frombuffer(bytearray(8 << 20), np.float32).reshape(-1, 2048)   # foreign: not NumPy's
    start, stop = ring.ctypes.data, ring.ctypes.data + ring.nbytes
    assert registry.hold(start, stop) and registry.hold(start, stop)      # two decoders read it
    assert registry.lib.registered == [(start, stop - start)]
    assert registry.covers(ring[10:20]) and registry.covers(ring)
    outside = np.frombuffer(bytearray(1 << 20), np.float32)
    assert not registry.covers(outside)
    assert hm.host_rows(ring[5:9], registry, None, [])[1] is None         # DMA'd where it lies
    registry.release(start, stop)
    assert registry.lib.unregistered == [] and registry.covers(ring[:1])
    registry.release(start, stop)
    assert registry.lib.unregistered == [start] and not registry.covers(ring[:1])
    registry.lib.refuse.add(start)
    assert not registry.hold(start, stop) and not registry.covers(ring)   # refused: staged


class FakeEvent:
    def __init__(self):
        self.waited = 0

    def synchronize(self):
        self.waited += 1


@pytest.fixture
def pool(monkeypatch):
    made = []

    def pinned(size, dtype, ctx):
        made.append(size)
        return np.empty(size, dtype)

    monkeypatch.setattr(hm, "pinned_empty", pinned)
    p = hm.ResultPool(FakeContext(), limit_bytes=2 << 20)
    p.made = made
    return p


def test_result_blocks_come_back_when_every_view_is_gone(pool):
    pool.limit_bytes = 1 << 30
    block = pool.take(100_000, [])
    assert block.nbytes == 100_000 and pool.made == [131072]   # a power-of-two class
    view = block[16:80].view(np.int32)
    del block
    gc.collect()
    again = pool.take(70_000, [])                              # same class, still lent: a new block
    assert pool.made == [131072, 131072]
    del again, view
    gc.collect()
    pool.take(120_000, [])
    assert pool.made == [131072, 131072]                       # reused


def test_a_dropped_block_waits_for_its_streams_and_pageable_past_the_limit(pool):
    event = FakeEvent()
    eng = types.SimpleNamespace(ctx=FakeContext())
    guard = [(eng, object(), event)]                           # a ticket never collected
    block = pool.take(1 << 20, guard)
    del block
    gc.collect()
    pool.take(1 << 20, [])
    assert event.waited == 1
    kept = [pool.take(1 << 20, []) for _ in range(2)]          # the limit's 2 MiB in use
    extra = pool.take(1 << 20, [])
    assert pool.pageable_blocks == 1 and extra.nbytes == 1 << 20 and len(kept) == 2
    assert pool.made == [1 << 20, 1 << 20]


@pytest.mark.parametrize("rows, threads", [(3000, 4), (10, 4), (3000, 1)])
def test_a_background_copy_is_ready_where_waited_for_and_converts(rows, threads):
    from gpuldpc.row_copy import BackgroundCopy

    src = np.random.default_rng(rows).normal(size=(rows, 2304))        # float64: converted
    dst = np.zeros((rows, 2304), np.float32)
    copy = BackgroundCopy(dst, src, threads)
    copy.wait(0, 1)
    np.testing.assert_array_equal(dst[0], src[0].astype(np.float32))
    copy.wait(rows // 2, rows)
    copy.wait()
    np.testing.assert_array_equal(dst, src.astype(np.float32))
    assert copy.steps == (-(-rows // copy.step)) and (rows < 1000 or copy.steps > 1)


def test_a_background_copy_raises_its_failure_in_the_waiting_thread():
    from gpuldpc.row_copy import BackgroundCopy

    src = np.zeros((3000, 2304), np.float32)
    dst = np.zeros((3000, 2304), np.int8)                              # float -> int8: not a same-kind cast
    copy = BackgroundCopy(dst, src, 4)
    with pytest.raises(TypeError, match="same_kind"):
        copy.wait(2000, 3000)
