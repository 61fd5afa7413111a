"""The resident latency kernel (kernels/qc_resident.cu, gpuldpc.cuda.resident): same results as
launching the kernel, the kernel really stays resident between calls, leaves when idle and is
launched again, and never blocks the rest of the process (cuMemFree, synchronous copies on the
legacy default stream, a second decoder on the same GPU)."""
import time

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.cuda import resident

pytestmark = pytest.mark.cuda

CODE = "wimax-2304-1/2"


def _pair(cuda, **kw):
    code = gl.codes.get(CODE)
    fast = cuda.CudaDecoder(code, preset="latency", devices=[0], **kw)
    plain = cuda.CudaDecoder(code, preset="latency", devices=[0], resident=False, **kw)
    return fast, plain


def _same(a, b):
    np.testing.assert_array_equal(a.bits, b.bits)
    np.testing.assert_array_equal(a.iterations, b.iterations)
    np.testing.assert_array_equal(a.valid, b.valid)


def _kernel(dec):
    return dec.engines[0].slots[0].resident


@pytest.mark.parametrize("settings", [dict(algorithm="nms", early_stop=False),
                                      dict(algorithm="oms", early_stop=True)])
def test_resident_equals_launched_kernel(cuda, frames, settings):
    code = gl.codes.get(CODE)
    _, llr = frames(code, 1.75, 400, seed=3)
    fast, plain = _pair(cuda, **settings)
    assert _kernel(fast) is not None and _kernel(plain) is None
    want = plain.decode(llr)
    assert 0 < want.valid.mean() < 1
    start = 0
    for batch in (1, 2, 6, 8, 1, 9, 7, 300):       # 9 and 300: more than MAX_FRAMES, launched as usual
        got = fast.decode(llr[start:start + batch])
        np.testing.assert_array_equal(got.bits, want.bits[start:start + batch])
        np.testing.assert_array_equal(got.iterations, want.iterations[start:start + batch])
        np.testing.assert_array_equal(got.valid, want.valid[start:start + batch])
        start += batch
    src = fast.pinned_llr(4)                       # the kernel reads the caller's page-locked rows
    src[:] = llr[:4]
    out = fast.pinned_bits(4)
    _same(fast.decode(src, out=out), plain.decode(llr[:4]))
    fast.close()
    plain.close()


def test_the_kernel_stays_resident_between_calls(cuda, frames):
    code = gl.codes.get(CODE)
    _, llr = frames(code, 2.0, 50, seed=4)
    fast, plain = _pair(cuda, early_stop=False)
    want = plain.decode(llr)
    got = [fast.decode(llr[i:i + 1]) for i in range(50)]
    # 50 calls back to back (each well under the idle limit apart): one launch, or a few when
    # the kernel's lifetime ran out in between
    assert 1 <= _kernel(fast).launches <= 3, _kernel(fast).launches
    np.testing.assert_array_equal(np.concatenate([g.bits for g in got]), want.bits)
    fast.close()
    plain.close()


def test_idle_kernel_leaves_and_is_launched_again(cuda, frames):
    code = gl.codes.get(CODE)
    _, llr = frames(code, 2.0, 3, seed=5)
    fast, plain = _pair(cuda)
    kern = _kernel(fast)
    _same(fast.decode(llr[:1]), plain.decode(llr[:1]))
    time.sleep(10 * resident.IDLE_NS * 1e-9)
    assert not kern.running                        # it left by itself
    launches = kern.launches
    _same(fast.decode(llr[1:3]), plain.decode(llr[1:3]))
    assert kern.launches == launches + 1
    fast.close()
    assert not kern.running
    plain.close()


def test_requests_over_the_kernels_lifetime(cuda, frames):
    """Calls for longer than LIFE_NS: the kernel leaves while calls keep coming and the host
    launches it again; no request is lost or answered twice."""
    code = gl.codes.get(CODE)
    _, llr = frames(code, 1.75, 64, seed=6)
    fast, plain = _pair(cuda)
    want = plain.decode(llr)
    end = time.perf_counter() + 3 * resident.LIFE_NS * 1e-9
    calls = 0
    while time.perf_counter() < end or calls < 64:
        i = calls % 64
        got = fast.decode(llr[i:i + 1])
        assert (got.bits == want.bits[i]).all() and got.iterations[0] == want.iterations[i]
        calls += 1
    assert _kernel(fast).launches >= 3, (_kernel(fast).launches, calls)
    fast.close()
    plain.close()


def test_resident_kernel_does_not_block_the_process(cuda, frames):
    """cuMemFree synchronizes the device: it waits for the resident kernel to leave (at most
    LIFE_NS), never for ever; synchronous copies on the legacy stream do not wait for it."""
    drv = cuda.driver()
    code = gl.codes.get(CODE)
    _, llr = frames(code, 2.0, 4, seed=7)
    fast, plain = _pair(cuda)
    other, _ = _pair(cuda)                          # a second resident decoder on the same GPU
    want = plain.decode(llr)
    _same(fast.decode(llr[:2]), plain.decode(llr[:2]))
    _same(other.decode(llr[2:]), plain.decode(llr[2:]))
    ctx = fast.engines[0].ctx
    with ctx.active():
        t0 = time.perf_counter()
        scratch = drv.to_device(np.arange(1 << 16, dtype=np.int32))     # legacy-stream copy
        back = drv.from_device(scratch, (1 << 16,), np.int32)
        scratch.free()                                                  # cuMemFree
        waited = time.perf_counter() - t0
    assert (back == np.arange(1 << 16)).all()
    assert waited < 10 * resident.LIFE_NS * 1e-9 + 0.5, waited
    for _ in range(3):
        _same(fast.decode(llr), want)
        _same(other.decode(llr), want)
    for dec in (fast, plain, other):
        dec.close()


def test_resident_kernels_on_a_gpu_busy_with_other_work(cuda, frames):
    """While throughput launches of another decoder hold the multiprocessors, blocks of a
    resident kernel may become resident late: block 0 must not leave (idle) while a request is
    in flight, or those blocks would find "leave" instead of the request (resident.cuh,
    wait_done).  Six-frame binary requests (six blocks) and lone GF(32) frames (117 blocks)
    decoded during such launches equal the launched kernels' results.  (A guard: on an H100 this
    load did not make the kernels before wait_done fail either.)"""
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder

    code = gl.codes.get(CODE)
    _, llr = frames(code, 2.0, 6, seed=13)
    fast, plain = _pair(cuda)
    want = plain.decode(llr)
    nb = gl.codes.get("gf32-620-310")
    rng = np.random.default_rng(5)
    words = nb.encode(rng.integers(0, nb.q, (4, nb.k), dtype=np.uint8))
    bits = gl.channel.awgn_llr(gl.gf.GF(nb.q).to_bits(words).reshape(4, -1), gl.channel.sigma_from_ebn0(3.0, nb.rate),
                               rng)
    one = NbCudaDecoder(nb, "minmax", "flooding", 10, False, devices=[0], preset="latency")
    launched = NbCudaDecoder(nb, "minmax", "flooding", 10, False, devices=[0], preset="latency", resident=False)
    nb_want = [launched.decode(bits[i:i + 1]) for i in range(4)]
    busy = NbCudaDecoder(gl.codes.get("gf32-744-653"), "mmma", "layered", 10, False, devices=[0])
    big = gl.codes.get("gf32-744-653")
    heavy = rng.normal(2.0, 1.5, (4 * busy.chunk_frames, big.n * big.bits_per_symbol)).astype(np.float32)
    for _ in range(3):
        ticket = busy.submit(heavy)                # several launches of whole waves on the GPU
        _same(fast.decode(llr), want)
        for i in range(4):
            _same(one.decode(bits[i:i + 1]), nb_want[i])
        busy.result(ticket)
    assert _kernel(fast).seq == 3 and one._small.resident.seq == 12
    for dec in (fast, plain, one, launched, busy):
        dec.close()


def test_resident_only_where_it_applies(cuda):
    code = gl.codes.get(CODE)
    for kw in (dict(preset="throughput"), dict(preset="latency", schedule="flooding"),
               dict(preset="latency", precision="float16"), dict(preset="latency", algorithm="spa"),
               dict(preset="latency", resident=False)):
        dec = cuda.CudaDecoder(code, devices=[0], **kw)
        assert _kernel(dec) is None, kw
        dec.close()
    dec = gl.Decoder(code, backend="cuda", preset="latency", devices=[0])
    assert _kernel(dec._impl.decoder) is not None
