"""The one-frame-over-many-multiprocessors Min-Max kernel (kernels/nb_frame.cu) against the
reference Min-Max flooding decoder.

Min and max are exact and every float32 addition follows the reference's order, so symbols,
iteration counts and syndrome flags must equal the reference's, early stop on and off, for
bit-LLR and symbol-LLR input, one frame and several frames per launch.  The kernel is launched
directly (NbFrameKernel.launch on PyCUDA buffers), independent of the stream engine.  The table
checks at the end need no GPU.
"""
import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.cuda.nb_frame import NbFrameKernel, frame_tables
from gpuldpc.cuda.nb_layout import nb_layout
from gpuldpc.cuda.tuning import DeviceLimits
from gpuldpc.decoders.front import make_result

_spec = importlib.util.spec_from_file_location("gpu_reference_cache",
                                               Path(__file__).with_name("reference_cache.py"))
_cache = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cache)
reference = _cache.reference_decode     # cached reference Min-Max (reference_cache.py)

H200 = DeviceLimits(sm_count=132, max_threads_per_sm=2048, max_threads_per_block=1024, registers_per_sm=65536,
                    shared_per_sm=233472, shared_per_block_optin=232448, max_blocks_per_sm=32)


def frame_decode(cuda, code, llr, early_stop, per_launch, max_iterations=10):
    """Decode ``llr`` (bit LLRs [F, n*m] or symbol LLRs [F, n, q]) with launches of ``per_launch``
    frames on one stream; a DecodeResult."""
    drv = cuda.driver()
    ctx = cuda.DeviceContext(0)
    layout = nb_layout(code)
    bits = llr.ndim == 2
    arr = np.ascontiguousarray(llr, np.float32).reshape(llr.shape[0], -1)
    count = arr.shape[0]
    sym = np.empty((count, code.n), np.uint8)
    iters = np.empty(count, np.int32)
    valid = np.empty(count, np.uint8)
    with ctx.active():
        kern = NbFrameKernel(ctx, layout, "minmax", "flooding", max_iterations, early_stop)
        stream = drv.Stream()
        scratch = drv.mem_alloc(kern.scratch_bytes(per_launch))
        d_in = drv.mem_alloc(arr[:per_launch].nbytes)
        d_sym, d_it, d_ok = drv.mem_alloc(per_launch * code.n), drv.mem_alloc(4 * per_launch), drv.mem_alloc(per_launch)
        for a in range(0, count, per_launch):
            b = min(a + per_launch, count)
            drv.memcpy_htod_async(d_in, np.ascontiguousarray(arr[a:b]), stream)
            kern.launch(stream, b - a, d_in, bits, d_sym, d_it, d_ok, scratch)
            stream.synchronize()
            drv.memcpy_dtoh(sym[a:b], d_sym)
            drv.memcpy_dtoh(iters[a:b], d_it)
            drv.memcpy_dtoh(valid[a:b], d_ok)
    return make_result(code, sym, iters, valid.astype(bool))


def assert_same(got, want):
    bad = np.flatnonzero((got.bits != want.bits).any(axis=1))
    assert bad.size == 0, f"{bad.size} frames differ in symbols, first {bad[:5].tolist()}"
    np.testing.assert_array_equal(got.iterations, want.iterations)
    np.testing.assert_array_equal(got.valid, want.valid)


def bit_llrs(code, ebn0, count, seed):
    rng = np.random.default_rng(seed)
    cw = code.encode(rng.integers(0, 2, (count, code.k), dtype=np.uint8))
    bits = gl.gf.GF(code.q).to_bits(cw).reshape(count, -1)
    return gl.channel.awgn_llr(bits, gl.channel.sigma_from_ebn0(ebn0, code.k / code.n), rng)


# paper 003's (620,310) (3,6) GF(32) code from bit LLRs; 1, 8 and 24 frames per launch
@pytest.mark.cuda
@pytest.mark.parametrize("early_stop", [True, False])
@pytest.mark.parametrize("ebn0, per_launch", [(2.5, 1), (3.0, 8), (3.5, 24)])
def test_gf32_620_from_bits_same_as_reference(cuda, ebn0, per_launch, early_stop):
    code = gl.codes.get("gf32-620-310")
    bit_llr = bit_llrs(code, ebn0, 24, seed=int(100 * ebn0))
    got = frame_decode(cuda, code, bit_llr, early_stop, per_launch)
    want = reference(code, gl.channel.bit_llr_to_symbol_llr(bit_llr, code.q), algorithm="minmax",
                     schedule="flooding", max_iterations=10, early_stop=early_stop)
    assert_same(got, want)
    if not early_stop:
        assert (got.iterations == 10).all()
    if ebn0 == 2.5:
        assert 0 < got.valid.sum() < 24, "2.5 dB should mix decoded and failed frames"


# every q = 4..256; check degrees 3..27, column weights 2..4 (symbol LLRs)
CASES = [
    ("gf4-192-96", 2.0, 96, 32),
    ("gf8-224-112", 2.0, 48, 16),
    ("gf16-300-150", 2.25, 64, 64),
    ("gf32-837-726", 4.25, 12, 4),
    ("gf64-1260-630", 2.25, 12, 3),
    ("gf128-384-128", 1.75, 12, 12),
    ("gf256-384-128", 1.5, 16, 5),
]


@pytest.mark.cuda
@pytest.mark.parametrize("name, ebn0, count, per_launch", CASES)
def test_every_field_same_as_reference(cuda, frames, name, ebn0, count, per_launch):
    code = gl.codes.get(name)
    _, llr = frames(code, ebn0, count, seed=11)
    got = frame_decode(cuda, code, llr, True, per_launch)
    want = reference(code, llr, algorithm="minmax", schedule="flooding", max_iterations=10, early_stop=True)
    assert_same(got, want)
    assert got.valid.any()


@pytest.mark.cuda
def test_bit_and_symbol_input_agree(cuda):
    """Bit LLRs converted in the kernel == the same frames as host-converted symbol LLRs,
    fixed iterations, with exact zeros (ties) in the input."""
    code = gl.codes.get("gf32-620-310")
    bit_llr = bit_llrs(code, 2.75, 16, seed=4)
    bit_llr[:, ::7] = 0.0
    a = frame_decode(cuda, code, bit_llr, False, 16, max_iterations=4)
    b = frame_decode(cuda, code, gl.channel.bit_llr_to_symbol_llr(bit_llr, code.q), False, 16, max_iterations=4)
    assert_same(a, b)
    assert_same(a, reference(code, gl.channel.bit_llr_to_symbol_llr(bit_llr, code.q), algorithm="minmax",
                             schedule="flooding", max_iterations=4, early_stop=False))


# ---- the resident copy (nb_frame_resident_q<q>, NbFrameKernel.resident) ------------------

def _latency_decoder(code, early_stop, **kw):
    from gpuldpc.cuda.nb_decoder import NbCudaDecoder

    return NbCudaDecoder(code, "minmax", "flooding", 10, early_stop, devices=[0], preset="latency", **kw)


@pytest.mark.cuda
@pytest.mark.parametrize("early_stop", [True, False])
def test_resident_lone_frames_same_as_reference(cuda, early_stop):
    """preset="latency": each lone frame of bit LLRs is one request to the resident kernel (numpy
    rows staged, a page-locked array read in place), every frame equal to the reference; after
    the kernel has left (idle), the next call launches it again."""
    import time

    from gpuldpc.cuda.resident import IDLE_NS

    code = gl.codes.get("gf32-620-310")
    bit_llr = bit_llrs(code, 2.5, 24, seed=250)          # the frames of the first test: some fail
    dec = _latency_decoder(code, early_stop)
    rk = dec._small.resident
    assert rk is not None and rk.kind == "bits" and rk.frames == 1 and rk.blocks > 1
    pinned = dec.pinned_llr(1, "bits")
    got = []
    for i in range(24):
        if i % 4 == 3:
            pinned[:] = bit_llr[i:i + 1]
            got.append(dec.decode(pinned))
        else:
            got.append(dec.decode(bit_llr[i:i + 1]))
        if i == 9:
            time.sleep(5 * IDLE_NS * 1e-9)           # the kernel leaves; the next call relaunches it
    assert rk.seq == 24 and rk.launches >= 2
    got = make_result(code, np.concatenate([g.bits for g in got]), np.concatenate([g.iterations for g in got]),
                      np.concatenate([g.valid for g in got]))
    want = reference(code, gl.channel.bit_llr_to_symbol_llr(bit_llr, code.q), algorithm="minmax",
                     schedule="flooding", max_iterations=10, early_stop=early_stop)
    assert_same(got, want)
    assert 0 < got.valid.sum() < 24
    dec.close()
    assert not rk.running


@pytest.mark.cuda
def test_resident_flags_non_finite_frames_and_keeps_the_next_clean(cuda):
    """A frame with NaN / inf bit LLRs through the resident kernel: flagged, decoded as the host
    rule (NaN -> 0, +-inf -> +-2^64) gives it; the clean frame after it is not flagged."""
    code = gl.codes.get("gf32-620-310")
    bit_llr = bit_llrs(code, 3.0, 2, seed=12)
    bad = bit_llr.copy()
    bad[0, 0], bad[0, 7], bad[0, -1] = np.nan, np.inf, -np.inf
    dec = _latency_decoder(code, False)
    assert dec._small.resident is not None
    first, second = dec.decode(bad[:1]), dec.decode(bit_llr[1:2])
    assert dec._small.resident.seq == 2
    assert first.bad_llr.tolist() == [True] and second.bad_llr.tolist() == [False]
    ruled = np.nan_to_num(bad, nan=0.0, posinf=2.0 ** 64, neginf=-2.0 ** 64).astype(np.float32)
    want = reference(code, gl.channel.bit_llr_to_symbol_llr(ruled, code.q), algorithm="minmax",
                     schedule="flooding", max_iterations=10, early_stop=False)
    np.testing.assert_array_equal(first.bits, want.bits[:1])
    np.testing.assert_array_equal(first.valid, want.valid[:1])
    want2 = reference(code, gl.channel.bit_llr_to_symbol_llr(bit_llr, code.q), algorithm="minmax",
                      schedule="flooding", max_iterations=10, early_stop=False)
    np.testing.assert_array_equal(second.bits, want2.bits[1:])
    dec.close()


@pytest.mark.cuda
def test_symbol_input_and_resident_off_are_launched_alike(cuda):
    """Symbol LLRs (which the resident kernel does not take) and ``resident=False`` go to the
    launched kernel; both give what the resident kernel gives for the same frames."""
    code = gl.codes.get("gf32-620-310")
    bit_llr = bit_llrs(code, 2.75, 4, seed=3)
    on = _latency_decoder(code, True)
    off = gl.Decoder(code, backend="cuda", devices=[0], algorithm="minmax", preset="latency", max_iterations=10,
                     resident=False)
    assert off._impl.decoder._small.resident is None
    for i in range(4):
        a = on.decode(bit_llr[i:i + 1])
        b = on.decode(gl.channel.bit_llr_to_symbol_llr(bit_llr[i:i + 1], code.q))
        c = off.decode(bit_llr[i:i + 1])
        for other in (b, c):
            for field in ("bits", "iterations", "valid", "bad_llr"):
                np.testing.assert_array_equal(getattr(a, field), getattr(other, field), err_msg=f"frame {i} {field}")
    assert on._small.resident.seq == 4
    on.close()
    off.close()


def test_front_door_lists_resident_among_the_gf_options():
    """gl.Decoder's GF(q) CUDA options include ``resident`` (the error for an unknown one says so,
    before any device is touched)."""
    code = gl.codes.get("gf32-620-310")
    with pytest.raises(ValueError, match=r"unknown GF\(q\) cuda option\(s\) \['llr_scale'\]; known: .*resident"):
        gl.Decoder(code, backend="cuda", preset="latency", llr_scale=2.0)


# ---- no GPU needed -----------------------------------------------------------------------

def test_supports_rule():
    lay = nb_layout(gl.codes.get("gf32-620-310"))
    assert NbFrameKernel.supports(lay, "minmax", "flooding", H200)
    assert NbFrameKernel.supports(lay, "mmma", "flooding", H200)
    assert not NbFrameKernel.supports(lay, "minmax", "layered", H200)
    assert not NbFrameKernel.supports(lay, "fft-spa", "flooding", H200)
    small = dataclasses.replace(H200, shared_per_block_optin=8 * 1024)
    assert not NbFrameKernel.supports(lay, "minmax", "flooding", small)
    big = nb_layout(gl.codes.get("gf64-1512-1325"))       # degree 24: 4 warps x 42.1 KiB of shared memory
    assert NbFrameKernel.supports(big, "minmax", "flooding", H200)
    assert not NbFrameKernel.supports(big, "minmax", "flooding", small)


def test_frame_tables_follow_the_graph():
    code = gl.codes.get("gf32-620-310")
    lay = nb_layout(code)
    t = frame_tables(lay)
    assert t["task_row"].shape == (310, 4) and (t["task_row"][:, 1] == 6).all()
    assert (t["task_row"][:, 3] == 18).all() and t["stage_max"] == 18
    H = code.H.tocsc()
    for k in (0, 155, 309):
        rb, d, start, count = t["task_row"][k]
        near = t["nbr_row"][t["nbr_ptr"][k]:t["nbr_ptr"][k + 1]]
        cols = lay.edge_col[rb:rb + d]
        assert k in near and set(near) == set(np.concatenate([H.indices[H.indptr[c]:H.indptr[c + 1]]
                                                              for c in cols]).tolist())
        for i in range(d):
            e = rb + i
            v, log_h, off, packed = t["edge_meta"][e]
            cnt, own = packed & 0xffff, packed >> 16
            col_edges = t["stage_edge"][start + off:start + off + cnt]
            np.testing.assert_array_equal(col_edges, lay.vn_edge[lay.vn_ptr[v]:lay.vn_ptr[v + 1]])
            assert col_edges[own] == e and v == cols[i] and lay.exp[log_h] == lay.edge_h[e]
