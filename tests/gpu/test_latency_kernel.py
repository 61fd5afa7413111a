"""The latency preset's kernels (kernels/qc_decode.cuh SharedRowMinSum for layered,
EdgeParallelMinSum for flooding, chosen by gpuldpc.cuda.decoder.kernel_name for rate-1/2 codes
with z <= 96; batches of up to 8 frames go to the resident copy of the layered one,
kernels/qc_resident.cu) against the row-per-thread
``ms`` kernel of the throughput preset, which test_cuda_decoder.py checks bit-exactly against
the reference decoder: identical bits, iteration counts and syndrome flags on 2000 frames
(Eb/N0 1 to 2.5 dB) per code and setting, handed over in batches of 1, 6, 7 and 300 frames
(one-frame launches, partial waves, several chunks), plus one anchor against the reference.
"""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.cuda import kernel_name, qc_layout

SNRS = (1.0, 1.5, 2.0, 2.5)                        # dB, 500 frames each
CODES = ("wimax-2304-1/2", "wimax-576-1/2", "wifi-1944-1/2", "wifi-648-1/2")
BATCHES = (1, 6, 7, 300)
SETTINGS = [dict(algorithm=a, schedule=s, early_stop=e) for a in ("nms", "oms")
            for s in ("layered", "flooding") for e in (False, True)]
SETTINGS.append(dict(algorithm="nms", schedule="layered", early_stop=True, llr_dtype="int8", llr_scale=0.25))


def _frames_at_snrs(frames, code):
    parts = [frames(code, snr, 500, seed=40 + i) for i, snr in enumerate(SNRS)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _in_batches(dec, llr):
    """Decode ``llr`` as calls of 1, 6, 7 and 300 frames in turn, then the rest in 300s."""
    sizes, done = [], 0
    for b in BATCHES + (300,) * (len(llr) // 300 + 1):
        if done < len(llr):
            sizes.append(min(b, len(llr) - done))
            done += sizes[-1]
    parts = np.split(np.arange(len(llr)), np.cumsum(sizes)[:-1])
    res = [dec.decode(llr[p]) for p in parts]
    return (np.concatenate([r.bits for r in res]), np.concatenate([r.iterations for r in res]),
            np.concatenate([r.valid for r in res]))


@pytest.mark.cuda
@pytest.mark.parametrize("name", CODES)
def test_latency_kernel_equals_ms_kernel(cuda, frames, name):
    code = gl.codes.get(name)
    _, llr = _frames_at_snrs(frames, code)
    q = np.clip(np.round(llr * 4), -127, 127).astype(np.int8)
    for st in SETTINGS:
        x = q if st.get("llr_dtype") == "int8" else llr
        fast = cuda.CudaDecoder(code, max_iterations=10, preset="latency", devices=[0], **st)
        assert fast.kernel.startswith("qc_ep"), fast.kernel
        oracle = cuda.CudaDecoder(code, max_iterations=10, devices=[0], **st)
        assert oracle.kernel.startswith("qc_ms"), oracle.kernel
        want = oracle.decode(x)
        bits, iterations, valid = _in_batches(fast, x)
        bad = np.flatnonzero((bits != want.bits).any(axis=1))
        assert bad.size == 0, f"{fast.kernel} {st}: {bad.size} frames differ, first {bad[:5].tolist()}"
        np.testing.assert_array_equal(iterations, want.iterations, err_msg=f"{fast.kernel} {st}")
        np.testing.assert_array_equal(valid, want.valid, err_msg=f"{fast.kernel} {st}")
        # the SNR sweep spans failed and decoded frames
        assert 0 < valid.mean() < 1, (fast.kernel, st, valid.mean())
        fast.close()
        oracle.close()


@pytest.mark.cuda
def test_latency_kernel_equals_reference(cuda, frames, reference):
    code = gl.codes.get("wimax-2304-1/2")
    _, llr = frames(code, 1.5, 300, seed=17)
    settings = dict(algorithm="oms", schedule="layered", max_iterations=10, early_stop=True)
    dec = cuda.CudaDecoder(code, preset="latency", devices=[0], **settings)
    got = dec.decode(llr)
    want = reference(code, llr, **settings)
    np.testing.assert_array_equal(got.bits, want.bits)
    np.testing.assert_array_equal(got.iterations, want.iterations)
    np.testing.assert_array_equal(got.valid, want.valid)


def test_latency_kernel_choice():
    """Rate-1/2 codes with z <= 96 get the latency kernel (both min-sum rules and schedules,
    every input type); other codes and sum-product keep the throughput preset's kernels."""
    get = lambda n: qc_layout(gl.codes.get(n))  # noqa: E731
    for name in CODES:
        for sched in ("layered", "flooding"):
            for dtype in ("float32", "float16", "int8"):
                got = kernel_name(get(name), "oms", sched, dtype, "latency")
                want = "qc_ep12x1x8_" if sched == "layered" else "qc_ep12x2x4_"
                assert got.startswith(want) and got.endswith(f"_{sched}_" + {
                    "float32": "f32", "float16": "f16", "int8": "i8"}[dtype]), got
    assert kernel_name(get("wifi-1944-5/6"), "nms", "layered", "float32", "latency") == "qc_ms4x24_layered_f32"
    assert kernel_name(get("wimax-2304-2/3A"), "nms", "layered", "float32", "latency") == "qc_ms8x16_layered_f32"
    assert kernel_name(get("wimax-2304-1/2"), "spa", "layered", "float32", "latency") == "qc_stored_layered_f32"
