"""The CUDA decoder against the reference decoder (tests/gpu: run on a GPU machine).

Min-sum ("nms", "oms", both schedules) must reproduce the reference bit-exactly:
decoded bits, per-frame iteration counts and syndrome flags on identical float32
LLRs; sum-product must reach the same frame error rate within statistical error.
"""
import threading

import numpy as np
import pytest

import gpuldpc as gl

pytestmark = pytest.mark.cuda

SNRS = (1.0, 1.5, 2.0, 2.5)           # dB; 2500 frames each -> 10^4 frames per case
EBN0_BY_RATE = {"1/2": 1.75, "2/3": 2.5, "3/4": 3.0, "5/6": 3.75}


def _llr_10k(code, frames):
    parts = [frames(code, snr, 2500, seed=100 + i) for i, snr in enumerate(SNRS)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])



@pytest.mark.slow
@pytest.mark.parametrize("name, algorithm, schedule", [
    ("wimax-2304-1/2", "nms", "layered"), ("wimax-2304-1/2", "oms", "layered"),
    ("wimax-2304-1/2", "nms", "flooding"), ("wimax-2304-1/2", "oms", "flooding"),
    ("wifi-1944-1/2", "nms", "layered")])
def test_min_sum_bit_exact_on_10k_frames(cuda, frames, reference, name, algorithm, schedule, same):
    code = gl.codes.get(name)
    cw, llr = _llr_10k(code, frames)
    settings = dict(algorithm=algorithm, schedule=schedule, max_iterations=10, early_stop=True)
    got = gl.Decoder(code, backend="cuda", **settings).decode(llr)
    want = reference(code, llr, **settings)
    same(got, want)
    # the SNR sweep spans failures and successes
    fer = (got.bits != cw).any(axis=1).reshape(len(SNRS), -1).mean(axis=1)
    assert fer[0] > 0.05 and fer[-1] < fer[0], fer


def test_min_sum_bit_exact_fixed_iterations(cuda, frames, reference, same):
    code = gl.codes.get("wimax-2304-1/2")
    _, llr = frames(code, 1.5, 2500, seed=7)
    settings = dict(algorithm="nms", schedule="layered", max_iterations=10, early_stop=False)
    got = gl.Decoder(code, backend="cuda", **settings).decode(llr)
    same(got, reference(code, llr, **settings))
    assert (got.iterations == 10).all()


def _standard_codes():
    names = [n for n in gl.codes.names() if n.startswith("wifi-")]
    names += [n for n in gl.codes.names() if n.startswith(("wimax-576-", "wimax-2304-"))]
    return names


@pytest.mark.parametrize("name", _standard_codes())
@pytest.mark.parametrize("algorithm, schedule", [("nms", "layered"), ("oms", "flooding")])
def test_every_standard_code_bit_exact(cuda, frames, reference, name, algorithm, schedule, same):
    code = gl.codes.get(name)
    rate = name.split("-")[-1].rstrip("AB")
    cw, llr = frames(code, EBN0_BY_RATE[rate], 200, seed=11)
    settings = dict(algorithm=algorithm, schedule=schedule, max_iterations=10, early_stop=True)
    got = gl.Decoder(code, backend="cuda", **settings).decode(llr)
    same(got, reference(code, llr, **settings))
    assert got.valid.any()
    np.testing.assert_array_equal(got.valid, code.is_codeword(got.bits))


@pytest.mark.slow
@pytest.mark.parametrize("schedule", ["layered", "flooding"])
def test_sum_product_frame_error_rate(cuda, frames, reference, schedule):
    code = gl.codes.get("wimax-576-1/2")
    cw, llr = frames(code, 2.0, 3000, seed=5)
    settings = dict(algorithm="spa", schedule=schedule, max_iterations=10, early_stop=True)
    got = gl.Decoder(code, backend="cuda", **settings).decode(llr)
    want = reference(code, llr, **settings)
    fer_gpu = (got.bits != cw).any(axis=1).mean()
    fer_ref = (want.bits != cw).any(axis=1).mean()
    sigma = np.sqrt(2 * fer_ref * (1 - fer_ref) / cw.shape[0])
    assert 0.02 < fer_ref < 0.9, fer_ref
    assert abs(fer_gpu - fer_ref) <= 4 * sigma + 0.005, (fer_gpu, fer_ref)
    np.testing.assert_array_equal(got.valid, code.is_codeword(got.bits))


def test_early_stop_gives_the_bits_of_fixed_iterations(cuda, frames):
    code = gl.codes.get("wifi-1944-1/2")
    cw, llr = frames(code, 2.0, 2000, seed=3)
    early = cuda.CudaDecoder(code, max_iterations=20, early_stop=True).decode(llr)
    fixed = cuda.CudaDecoder(code, max_iterations=20, early_stop=False).decode(llr)
    decoded = (early.bits == cw).all(axis=1)
    assert decoded.mean() > 0.5 and early.iterations[decoded].mean() < 10
    np.testing.assert_array_equal(fixed.bits[decoded], early.bits[decoded])
    assert (fixed.iterations == 20).all()


def test_input_formats_and_packed_output(cuda, frames, same):
    """float16 / int8 inputs decode like the float32 LLRs they stand for."""
    code = gl.codes.get("wimax-2304-1/2")
    _, llr = frames(code, 1.75, 1000, seed=9)
    q = np.clip(np.round(llr * 4), -127, 127).astype(np.int8)
    ref = cuda.CudaDecoder(code, early_stop=False).decode(q.astype(np.float32) * np.float32(0.25))
    got = cuda.CudaDecoder(code, early_stop=False, llr_dtype="int8", llr_scale=0.25).decode(q)
    same(got, ref)
    h = llr.astype(np.float16)
    ref = cuda.CudaDecoder(code).decode(h.astype(np.float32))
    got = cuda.CudaDecoder(code, llr_dtype="float16").decode(h)
    same(got, ref)
    packed = cuda.CudaDecoder(code, packed=True).decode(h.astype(np.float32))
    np.testing.assert_array_equal(packed.bits, np.packbits(ref.bits, axis=1))
    np.testing.assert_array_equal(packed.iterations, ref.iterations)


def test_pinned_arrays_submit_and_result(cuda, frames, same):
    code = gl.codes.get("wimax-2304-1/2")
    _, llr = frames(code, 1.75, 3000, seed=4)
    dec = cuda.CudaDecoder(code, streams=3, chunk_frames=256)
    want = dec.decode(llr)
    pinned = dec.pinned_llr(llr.shape[0])
    pinned[:] = llr
    out = dec.pinned_bits(llr.shape[0])
    tickets = [dec.submit(pinned, out=out), dec.submit(llr[:1000]), dec.submit(llr[1000:])]
    first, a, b = (dec.result(t) for t in tickets)
    assert first.bits is out
    same(first, want)
    np.testing.assert_array_equal(np.concatenate([a.bits, b.bits]), want.bits)
    np.testing.assert_array_equal(np.concatenate([a.iterations, b.iterations]), want.iterations)


def test_latency_preset_single_frame(cuda, frames, reference, layered_as):
    code = gl.codes.get("wimax-2304-1/2")
    _, llr = frames(code, 2.0, 6, seed=8)
    dec = gl.Decoder(code, backend="cuda", preset="latency")
    want = reference(layered_as(code, dec), llr, algorithm="nms", schedule="layered", max_iterations=10,
                     early_stop=True)
    for i in range(6):
        got = dec.decode(llr[i])
        np.testing.assert_array_equal(got.bits[0], want.bits[i])
        assert got.iterations[0] == want.iterations[i]


def test_calls_from_other_threads_and_two_decoders_on_one_gpu(cuda, frames, same):
    c1, c2 = gl.codes.get("wimax-2304-1/2"), gl.codes.get("wifi-648-1/2")
    _, l1 = frames(c1, 1.75, 1500, seed=1)
    _, l2 = frames(c2, 2.0, 1500, seed=2)
    d1, d2 = cuda.CudaDecoder(c1, devices=[0]), cuda.CudaDecoder(c2, devices=[0], schedule="flooding")
    w1, w2 = d1.decode(l1), d2.decode(l2)
    results = {}

    def work(key, dec, llr):
        results[key] = [dec.decode(llr) for _ in range(3)]

    threads = [threading.Thread(target=work, args=(k, d, x)) for k, d, x in
               (("a", d1, l1), ("b", d2, l2), ("c", d1, l1))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for key, want in (("a", w1), ("b", w2), ("c", w1)):
        for got in results[key]:
            same(got, want)


def test_several_devices_match_one(cuda, frames, same):
    if cuda.driver().Device.count() < 2:
        pytest.skip("needs two GPUs")
    code = gl.codes.get("wimax-2304-1/2")
    _, llr = frames(code, 1.75, 4000, seed=12)
    one = cuda.CudaDecoder(code, devices=[0]).decode(llr)
    every = cuda.CudaDecoder(code, devices="all").decode(llr)
    same(every, one)


def test_syndrome_kernel(cuda, frames):
    code = gl.codes.get("wifi-1944-2/3")
    cw, llr = frames(code, 1.0, 500, seed=6)
    hard = (llr < 0).astype(np.uint8)
    dec = cuda.CudaDecoder(code)
    want = code.syndrome(hard).sum(axis=1)
    np.testing.assert_array_equal(dec.syndrome_weight(hard), want)
    np.testing.assert_array_equal(dec.syndrome_weight(cw), 0)


def test_user_errors_are_clear(cuda):
    code = gl.codes.get("wimax-2304-1/2")
    dec = gl.Decoder(code, backend="cuda")
    with pytest.raises(ValueError, match=r"shape \[batch, 2304\]"):
        dec.decode(np.zeros((4, 2300), np.float32))
    bad = np.ones((3, 2304), np.float32)
    bad[1, 5] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinite values \(frames \[1\]\)"):
        dec.decode(bad)
    raw = cuda.CudaDecoder(code, llr_dtype="int8")
    with pytest.raises(TypeError, match="LLRs must be int8"):
        raw.decode(np.ones((2, 2304), np.float32))
    with pytest.raises(MemoryError, match="MiB of device memory"):
        cuda.CudaDecoder(code, chunk_frames=10**8, streams=1)
    with pytest.raises(ValueError, match="frames_per_block=64 does not fit"):
        cuda.CudaDecoder(code, frames_per_block=64)
    with pytest.raises(ValueError, match="unknown cuda backend option"):
        gl.Decoder(code, backend="cuda", stream=4)
