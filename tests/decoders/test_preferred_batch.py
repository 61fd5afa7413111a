"""GpuDecoder.preferred_batch("throughput") without a GPU (the engine's sizes faked): two rounds of
every stream's chunk, one where two would leave the page-locked pools, and whole chunks that fit
them where one round would not (a round of DVB-S2 normal frames in binary16 from float32 LLRs is
1.09 GB of input against the 1 GiB input pool)."""
import types

import pytest

from gpuldpc.cuda.engine import GpuDecoder

GIB = 1 << 30


def fake(chunk, frame_bytes, bits_width, streams=4, soft_bytes=0, results=True):
    plan = types.SimpleNamespace(bits_width=bits_width, frames_per_wave=chunk // 2)
    eng = types.SimpleNamespace(streams=streams, chunk=chunk, frame_bytes=frame_bytes, soft_bytes=soft_bytes,
                                plan=plan)
    dec = types.SimpleNamespace(engines=[eng], inputs=types.SimpleNamespace(limit_bytes=GIB),
                                results=types.SimpleNamespace(limit_bytes=GIB) if results else None,
                                info_runs=())
    dec._page_locked_frames = types.MethodType(GpuDecoder._page_locked_frames, dec)
    return dec


@pytest.mark.parametrize("chunk, frame_bytes, bits_width, want", [
    (5280, 2304 * 4, 2304, 2 * 4 * 5280),          # WiMAX 2304 float32: two rounds fit
    (528, 64800 * 4, 64800, 4 * 528),              # DVB-S2 normal float32: 547 MB a round, one round
    (1056, 64800 * 4, 64800, 3 * 1056),            # binary16 pairs: a round (1.09 GB) does not fit, 3 chunks do
    (1056, 64800, 64800, 4 * 1056),                # the same from int8 LLRs: one round
])
def test_throughput_batch_stays_in_the_page_locked_pools(chunk, frame_bytes, bits_width, want):
    dec = fake(chunk, frame_bytes, bits_width)
    batch = GpuDecoder.preferred_batch(dec, "throughput")
    assert batch == want
    assert batch * frame_bytes <= GIB and 2 * batch * (bits_width + 5) <= GIB and batch % chunk == 0
    assert GpuDecoder.preferred_batch(dec, "latency") == chunk // 2


def test_throughput_batch_is_at_least_one_chunk():
    dec = fake(64, 40 << 20, 1000)                 # 40 MB frames: 25 fit the pool, fewer than a chunk
    assert GpuDecoder.preferred_batch(dec, "throughput") == 64
    dec = fake(64, 4096, 1000, results=False)      # results on the GPU: the input pool alone
    assert GpuDecoder.preferred_batch(dec, "throughput") == 2 * 4 * 64
