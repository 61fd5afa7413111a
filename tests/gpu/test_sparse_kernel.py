"""The sparse kernel (kernels/sparse_decode.cu) against the reference decoder, on the codes the
QC kernels do not hold: DVB-S2 (sums of circulants, the accumulator wrap; normal frames with
posteriors in device memory in float32), CCSDS C2 (weight-2 circulants, rows of 32+ edges) and
AR4JA k = 16384 (z = 2048).  Min-sum must give the reference's decisions, iteration counts and
flags bit for bit, in float32 and in binary16 (a frame pair a block, in the halves of half2
words), layered and flooding.
"""
import numpy as np
import pytest

import gpuldpc as gl

pytestmark = pytest.mark.cuda

# (code, Eb/N0 dB near the waterfall: some frames fail, most decode, frames)
CASES = (("dvbs2-short-1/2", 2.4, 120), ("dvbs2-short-3/5", 2.8, 120), ("ccsds-c2", 3.6, 200),
         ("ccsds-ar4ja-16384-1/2", 1.8, 16), ("dvbs2-normal-1/2", 2.0, 16))


def _cuda_decoder(dec):
    impl = dec._impl
    while not hasattr(impl, "engines"):
        impl = getattr(impl, "decoder", None) or impl._impl
    return impl



@pytest.mark.parametrize("precision", ["float32", "float16"])
@pytest.mark.parametrize("schedule", ["layered", "flooding"])
@pytest.mark.parametrize("name, ebn0, count", CASES, ids=[c[0] for c in CASES])
def test_bit_exact_with_the_reference(cuda, frames, reference, name, ebn0, count, schedule, precision, same):
    code = gl.codes.get(name)
    cw, llr = frames(code, ebn0, count, seed=11)
    settings = dict(algorithm="nms", schedule=schedule, max_iterations=10, early_stop=True, precision=precision)
    dec = gl.Decoder(code, backend="cuda", **settings)
    low = _cuda_decoder(dec)
    assert low.sparse and ("_f16_" if precision == "float16" else "_f32_") in low.kernel
    got = dec.decode(llr)
    same(got, reference(code, llr, **settings))
    if schedule == "layered":                          # near the waterfall: early stops and full runs
        assert got.valid.any() and (got.iterations < 10).any(), got.valid.mean()


@pytest.mark.parametrize("posteriors", ["shared", "device"])
def test_posteriors_in_shared_or_device_memory_alike(cuda, frames, reference, posteriors, same):
    code = gl.codes.get("dvbs2-short-2/3")
    _, llr = frames(code, 3.4, 60, seed=12)
    settings = dict(algorithm="oms", beta=0.25, schedule="layered", max_iterations=8, early_stop=False)
    dec = gl.Decoder(code, backend="cuda", posteriors=posteriors, **settings)
    assert _cuda_decoder(dec).engines[0].plan.posteriors == posteriors
    got = dec.decode(llr)
    same(got, reference(code, llr, **settings))
    assert (got.iterations == 8).all()


def test_normal_frames_binary16_batch_stays_page_locked(cuda):
    """A round of DVB-S2 normal frame pairs from float32 LLRs (4 streams x 1056 frames, 1.09 GB)
    leaves the 1 GiB input pool: preferred_batch takes the whole chunks that fit."""
    dec = gl.Decoder(gl.codes.get("dvbs2-normal-1/2"), backend="cuda", max_iterations=2, precision="float16")
    low = _cuda_decoder(dec)
    batch = dec.preferred_batch("throughput")
    assert batch * 64800 * 4 <= low.inputs.limit_bytes and batch % low.engines[0].chunk == 0


def test_normal_frames_float32_take_device_memory(cuda):
    code = gl.codes.get("dvbs2-normal-1/2")
    dec = gl.Decoder(code, backend="cuda", max_iterations=2)
    assert _cuda_decoder(dec).engines[0].plan.posteriors == "device"
    with pytest.raises(ValueError, match=r"posteriors='shared': code 'dvbs2-normal-1/2' needs 259204 B"):
        gl.Decoder(code, backend="cuda", posteriors="shared")


@pytest.mark.parametrize("name, precision, placement", [
    ("dvbs2-normal-1/2", "float16", "device"),       # a frame pair's 259 KB do not fit
    ("dvbs2-short-1/2", "float32", "shared"),        # three blocks of 12 warps an SM
    ("ccsds-c2", "float16", "shared"),               # six blocks of 4 warps
    ("ccsds-ar4ja-16384-1/2", "float32", "device"),  # one block of 16 warps an SM: device
    ("ccsds-ar4ja-16384-1/2", "float16", "device"),
])
def test_auto_posteriors_need_24_warps_an_sm_in_shared_memory(cuda, name, precision, placement):
    dec = gl.Decoder(gl.codes.get(name), backend="cuda", max_iterations=2, precision=precision)
    assert _cuda_decoder(dec).engines[0].plan.posteriors == placement


def test_input_formats_bad_llrs_and_packed_output(cuda, frames, reference, same):
    code = gl.codes.get("dvbs2-short-1/2")
    _, llr = frames(code, 2.4, 40, seed=13)
    llr[3, 100] = np.nan
    llr[7, 5] = -np.inf
    settings = dict(algorithm="nms", schedule="layered", max_iterations=10, early_stop=True, on_bad_llr="erase")
    want = reference(code, llr, **settings)
    assert want.bad_llr[[3, 7]].all() and want.bad_llr.sum() == 2
    got = gl.Decoder(code, backend="cuda", packed=True, **settings).decode(llr)
    np.testing.assert_array_equal(got.bits, np.packbits(want.bits, axis=1))       # the kernel's packed bytes
    same(got._replace(bits=np.unpackbits(got.bits, axis=1, count=code.n),
                      info=np.unpackbits(got.info, axis=1, count=code.k)), want)
    np.testing.assert_array_equal(got.bad_llr, want.bad_llr)
    q = np.clip(np.round(llr[[0, 1, 2, 4]] * 4), -127, 127).astype(np.int8)
    half = gl.Decoder(code, backend="cuda", llr_dtype="int8", llr_scale=0.25, **settings).decode(q)
    same(half, reference(code, q.astype(np.float32) * np.float32(0.25), **settings))
    f16 = llr[[0, 1, 2, 4]].astype(np.float16)
    same(gl.Decoder(code, backend="cuda", llr_dtype="float16", **settings).decode(f16),
                 reference(code, f16.astype(np.float32), **settings))


@pytest.mark.parametrize("schedule", ["layered", "flooding"])
def test_float16_frame_pairs(cuda, frames, reference, same, schedule):
    """binary16 decodes two frames a block: odd batches (the last block's second frame absent),
    a lone frame, pairs whose frames stop at different iterations, a non-finite LLR that flags
    its own frame only (frames 6 and 7 share a block), packed decisions of both halves."""
    code = gl.codes.get("dvbs2-short-1/2")
    _, llr = frames(code, 2.4 if schedule == "layered" else 2.9, 41, seed=15)
    llr[6, 10] = np.nan
    settings = dict(algorithm="nms", schedule=schedule, max_iterations=10, early_stop=True, precision="float16",
                    on_bad_llr="erase")
    want = reference(code, llr, **settings)
    assert want.bad_llr.sum() == 1 and (want.iterations[0:40:2] != want.iterations[1:41:2]).sum() >= 5
    dec = gl.Decoder(code, backend="cuda", **settings)
    assert _cuda_decoder(dec).engines[0].plan.shape.frames_per_block == 2
    got = dec.decode(llr)
    same(got, want)
    np.testing.assert_array_equal(got.bad_llr, want.bad_llr)
    for rows in (slice(0, 1), slice(5, 8), slice(40, 41)):
        same(dec.decode(llr[rows]), reference(code, llr[rows], **settings))
    packed = gl.Decoder(code, backend="cuda", packed=True, **settings).decode(llr[:7])
    np.testing.assert_array_equal(packed.bits, np.packbits(want.bits[:7], axis=1))
    np.testing.assert_array_equal(packed.iterations, want.iterations[:7])


@pytest.mark.parametrize("precision", ["float32", "float16"])
def test_c2_rows_computed_from_circulants(cuda, frames, reference, same, precision):
    """C2 layered in float32 with posteriors in shared memory takes sp33c (its rows' columns
    computed from 32 circulants of z = 511 and the pad column, kernels/sparse_decode.cu
    CirculantColumns), binary16 the table (sp34): the reference's bits, iterations, flags and
    posteriors for NMS and OMS, int8 input, odd batches and a lone frame, packed decisions; the
    table kernel with posteriors in device memory agrees."""
    code = gl.codes.get("ccsds-c2")
    _, llr = frames(code, 3.6, 61, seed=16)
    for algorithm in ("nms", "oms"):
        settings = dict(algorithm=algorithm, schedule="layered", max_iterations=10, early_stop=True,
                        precision=precision, soft_output="posterior")
        dec = gl.Decoder(code, backend="cuda", **settings)
        circulant = precision == "float32"
        assert _cuda_decoder(dec).kernel.startswith("sp33c_" if circulant else "sp34_")
        assert _cuda_decoder(dec).engines[0].plan.circulant == circulant
        got, want = dec.decode(llr), reference(code, llr, **settings)
        same(got, want)
        np.testing.assert_array_equal(got.llr, want.llr)
        assert got.valid.any() and not got.valid.all() and (got.iterations < 10).any()
        for rows in (slice(0, 1), slice(2, 5)):
            same(dec.decode(llr[rows]), reference(code, llr[rows], **settings))
        table = gl.Decoder(code, backend="cuda", posteriors="device", **settings)
        assert _cuda_decoder(table).kernel.startswith("sp34_")
        same(table.decode(llr), want)
    q = np.clip(np.round(llr * 4), -127, 127).astype(np.int8)
    settings = dict(schedule="layered", max_iterations=10, early_stop=False, precision=precision)
    got = gl.Decoder(code, backend="cuda", llr_dtype="int8", llr_scale=0.25, packed=True, **settings).decode(q)
    want = reference(code, q.astype(np.float32) * np.float32(0.25), **settings)
    np.testing.assert_array_equal(np.unpackbits(got.info, axis=1, count=code.k), want.info)
    np.testing.assert_array_equal(got.iterations, want.iterations)


def test_sum_product_goes_to_the_cpu(cuda):
    code = gl.codes.get("dvbs2-short-1/2")
    with pytest.raises(gl.BackendUnavailable, match="runs min-sum"):
        gl.Decoder(code, backend="cuda", algorithm="spa")
    assert gl.Decoder(code, backend="auto", algorithm="spa").backend == "cpu"


def test_soft_output_is_the_reference_posterior(cuda, frames, same):
    """soft_output="posterior": each frame's posteriors at its stop, float32 (binary16 converted
    exactly), the reference decoder's values, in the caller's sign."""
    code = gl.codes.get("dvbs2-short-1/2")
    _, llr = frames(code, 2.4, 16, seed=14)
    settings = dict(algorithm="nms", schedule="layered", max_iterations=6, early_stop=True, soft_output="posterior")
    for precision in ("float32", "float16"):
        got = gl.Decoder(code, backend="cuda", precision=precision, **settings).decode(llr)
        want = gl.Decoder(code, backend="reference", precision=precision, **settings).decode(llr)
        same(got, want)
        np.testing.assert_array_equal(got.llr, want.llr)
        np.testing.assert_array_equal(got.bits, got.llr < 0)
    flipped = gl.Decoder(code, backend="cuda", positive_llr_bit=1, **settings).decode(-llr)
    np.testing.assert_array_equal(flipped.llr, -gl.Decoder(code, backend="reference", **settings).decode(llr).llr)
