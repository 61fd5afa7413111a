"""Reference binary decoders (gpuldpc.decoders.reference): rules, schedules, stopping, FER.

The FER comparisons against AFF3CT (``/work/shared/reference/aff3ct``) use the
alists AFF3CT simulated with, all-zero codewords as AFF3CT did (BPSK/AWGN and
the decoders are symmetric, so the FER does not depend on the codeword) and
the same decoder, iteration count, stop criterion and Eb/N0.  A frame is in
error when any of its n bits is (AFF3CT counts the k information bits; on
these curves that changes the FER by about 1%).  A point passes
when our FER and AFF3CT's agree under a two-sample binomial test at 99.9%
(two-sided): ``|p - p_ref| <= 3.29 sqrt(p_ref (1 - p_ref) (1/N + 1/N_ref))``,
the binomial interval of our N frames widened by the reference's own N_ref
frames (~100 frame errors, about +-10%).  With ~150 errors on our side the
band is about +-35% of the FER, i.e. about 0.05..0.1 dB on these curves.
"""
import json
import zlib
from pathlib import Path

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.codes.code import Code
from gpuldpc.decoders import reference, reference_binary
from gpuldpc.decoders.front import BackendUnavailable

AFF3CT = Path("/work/shared/reference/aff3ct")
RULES = [("nms", {}), ("oms", {}), ("spa", {})]
SCHEDULES = ["layered", "flooding"]
CODES = ["wifi-648-1/2", "wifi-1944-5/6", "wimax-576-3/4A", "wimax-2304-2/3B"]


def decoder(code, algorithm="nms", schedule="layered", **kw):
    return gl.Decoder(code, algorithm=algorithm, schedule=schedule, backend="reference", **kw)


def random_codewords(code, frames, seed):
    rng = np.random.default_rng(seed)
    return code.encode(rng.integers(0, 2, (frames, code.k))), rng


@pytest.fixture(scope="module")
def wran_alist_code():
    """A code read from an alist (no QC structure known): AFF3CT's WRAN (480,360)."""
    return gl.codes.from_alist(AFF3CT / "matrices" / "aff3ct_WRAN_360_480.alist")


# ---- check-node rules against a per-edge loop --------------------------------------------

def loop_rule(q, algorithm, alpha, beta):
    out = np.empty_like(q)
    for idx in np.ndindex(q.shape[:-1]):
        row = q[idx]
        for i in range(row.size):
            others = np.delete(row, i)
            sign = -1.0 if np.count_nonzero(others < 0) % 2 else 1.0
            if algorithm == "nms":
                value = np.float32(alpha) * np.abs(others).min()
            elif algorithm == "oms":
                value = max(np.abs(others).min() - np.float32(beta), np.float32(0))
            else:
                value = 2 * np.arctanh(np.prod(np.tanh(np.abs(others).astype(np.float64) / 2)))
            out[idx + (i,)] = sign * value
    return out


@pytest.mark.parametrize("algorithm", ["nms", "oms", "spa"])
def test_check_rule_equals_per_edge_loop(algorithm):
    rng = np.random.default_rng(1)
    q = rng.normal(0, 3, size=(4, 5, 7)).astype(np.float32)
    q[0, 0, :3] = [1.5, -1.5, 1.5]          # tied minima
    q[0, 1, 2] = -0.0                        # sign(-0.0) = +1
    q[1, 0, 4] = 0.0
    got = reference_binary.check_update(q, algorithm, alpha=0.8, beta=0.4)
    want = loop_rule(q, algorithm, 0.8, 0.4)
    assert got.dtype == np.float32
    if algorithm == "spa":
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_spa_rule_clips_reliable_messages_at_30():
    q = np.array([[40.0, 50.0, -60.0]], np.float32)
    r = reference_binary.check_update(q, "spa")
    np.testing.assert_allclose(r, [[-30.0, -30.0, 30.0]], rtol=1e-5)


def spec_posterior(code, llr, algorithm, schedule, iterations, alpha=0.75, beta=0.5):
    """The documented float32 arithmetic, one check and one edge at a time (one frame)."""
    H = code.H
    rows = [H.indices[H.indptr[i]:H.indptr[i + 1]] for i in range(code.m)]
    r = {(i, j): np.float32(0) for i, cols in enumerate(rows) for j in cols}

    def rule(q):
        return loop_rule(np.array(q, np.float32)[None], algorithm, alpha, beta)[0]

    if schedule == "layered":
        post = llr.copy()
        for _ in range(iterations):
            for i, cols in enumerate(rows):
                q = [post[j] - r[i, j] for j in cols]
                for j, q_j, r_j in zip(cols, q, rule(q)):
                    r[i, j] = r_j
                    post[j] = q_j + r_j
        return post
    total = llr.copy()
    for _ in range(iterations):
        q = {edge: total[edge[1]] - r[edge] for edge in r}
        for i, cols in enumerate(rows):
            for j, r_j in zip(cols, rule([q[i, j] for j in cols])):
                r[i, j] = r_j
        total = llr.copy()
        for i, cols in enumerate(rows):              # increasing check row for every variable
            for j in cols:
                total[j] = total[j] + r[i, j]
    return total


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("algorithm", ["nms", "oms"])
def test_posteriors_follow_the_documented_arithmetic(algorithm, schedule):
    """Min-sum posteriors equal, bit for bit, the module docstring's arithmetic done edge by edge."""
    code = gl.codes.get("wimax-576-1/2")
    cw, rng = random_codewords(code, 2, seed=2)
    llr = gl.channel.transmit(code, cw, 1.0, rng)
    impl = reference.make(code, decoder(code, algorithm, schedule, alpha=0.8, beta=0.3).settings)
    got = impl.posterior(llr, 3)
    for frame in range(2):
        want = spec_posterior(code, llr[frame], algorithm, schedule, 3, alpha=0.8, beta=0.3)
        np.testing.assert_array_equal(got[frame], want)


# ---- decoding: noiseless, high SNR, flags -----------------------------------------------

@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("algorithm", ["nms", "oms", "spa"])
def test_noiseless_llrs_decode_in_one_iteration(algorithm, schedule, wran_alist_code):
    for code in [gl.codes.get(name) for name in CODES] + [wran_alist_code]:
        cw, _ = random_codewords(code, 8, seed=3)
        llr = (8.0 * (1.0 - 2.0 * cw)).astype(np.float32)
        res = decoder(code, algorithm, schedule).decode(llr)
        np.testing.assert_array_equal(res.bits, cw)
        np.testing.assert_array_equal(res.iterations, 1)
        assert res.valid.all()


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("algorithm", ["nms", "oms", "spa"])
def test_every_frame_decodes_at_high_snr(algorithm, schedule, wran_alist_code):
    for code in [gl.codes.get(name) for name in CODES] + [wran_alist_code]:
        cw, rng = random_codewords(code, 60, seed=4)
        llr = gl.channel.transmit(code, cw, 6.0, rng)
        assert (gl.channel.hard_decision(llr) != cw).any(), "the channel must flip some bits"
        res = decoder(code, algorithm, schedule, max_iterations=20).decode(llr)
        np.testing.assert_array_equal(res.bits, cw, err_msg=f"{code.name} {algorithm} {schedule}")
        np.testing.assert_array_equal(res.info, cw[:, :code.k])
        assert res.valid.all()
        assert res.iterations.max() <= 10


def test_flags_without_early_stop_and_valid_is_the_syndrome():
    code = gl.codes.get("wifi-648-5/6")
    cw, rng = random_codewords(code, 300, seed=5)
    llr = gl.channel.transmit(code, cw, 3.5, rng)
    res = decoder(code, "nms", "layered", max_iterations=6, early_stop=False).decode(llr)
    np.testing.assert_array_equal(res.iterations, 6)
    assert res.iterations.dtype == np.int32 and res.bits.dtype == np.uint8
    np.testing.assert_array_equal(res.valid, code.is_codeword(res.bits))
    assert 0 < res.valid.sum() < 300               # both kinds of frame are present


@pytest.mark.parametrize("algorithm, schedule", [("nms", "layered"), ("oms", "flooding"), ("spa", "layered")])
def test_early_stop_returns_the_fixed_iteration_result_at_its_iteration(algorithm, schedule):
    """A frame that stops at iteration t has the bits of a t-iteration decode without early stop."""
    code = gl.codes.get("wimax-576-1/2")
    cw, rng = random_codewords(code, 300, seed=6)
    llr = gl.channel.transmit(code, cw, 1.75, rng)
    early = decoder(code, algorithm, schedule, max_iterations=12).decode(llr)
    assert 1 < len(np.unique(early.iterations)) and not early.valid.all()
    np.testing.assert_array_equal(early.valid, code.is_codeword(early.bits))
    for t in np.unique(early.iterations):
        frames = early.iterations == t
        fixed = decoder(code, algorithm, schedule, max_iterations=int(t), early_stop=False).decode(llr[frames])
        np.testing.assert_array_equal(fixed.bits, early.bits[frames])
        np.testing.assert_array_equal(fixed.valid, early.valid[frames])
    assert (early.iterations[~early.valid] == 12).all()
    # frames that decode with and without early stop decode to the same codeword (min-sum may
    # leave a codeword again when iterating on: such frames are counted, not compared)
    full = decoder(code, algorithm, schedule, max_iterations=12, early_stop=False).decode(llr)
    both = early.valid & full.valid
    assert both.sum() > 200
    np.testing.assert_array_equal(full.bits[both], early.bits[both])
    np.testing.assert_array_equal(early.bits[both], cw[both])
    print(f"{algorithm} {schedule}: {both.sum()} frames decode both ways, "
          f"{(early.valid & ~full.valid).sum()} leave their codeword after stopping")


def test_layer_grouping_gives_the_same_bits_as_one_row_at_a_time():
    """QC layers, greedy runs of disjoint rows and single rows are the same computation."""
    qc = gl.codes.get("wifi-648-1/2")
    plain = Code("wifi-648-1/2 without QC data", qc.H.copy(), k=qc.k)
    cw, rng = random_codewords(qc, 200, seed=7)
    llr = gl.channel.transmit(qc, cw, 1.75, rng)
    for algorithm in ("nms", "oms"):
        by_layer = decoder(qc, algorithm, max_iterations=8, early_stop=False)
        assert [sum(b.rows.size for b in layer) for layer in by_layer._impl.graph.layers] == [27] * 12
        greedy = decoder(plain, algorithm, max_iterations=8, early_stop=False)
        single = decoder(plain, algorithm, max_iterations=8, early_stop=False)
        graph = single._impl.graph
        graph.layers = [graph._blocks(np.array([row])) for row in range(plain.m)]
        results = [d.decode(llr) for d in (by_layer, greedy, single)]
        assert not results[0].valid.all()
        for other in results[1:]:
            np.testing.assert_array_equal(other.bits, results[0].bits)


@pytest.mark.parametrize("code_name, ebn0", [("wimax-576-1/2", 1.75), ("wifi-1944-1/2", 1.5)])
@pytest.mark.parametrize("algorithm", ["nms", "spa"])
def test_layered_needs_fewer_iterations_than_flooding(code_name, ebn0, algorithm):
    code = gl.codes.get(code_name)
    cw, rng = random_codewords(code, 200, seed=8)
    llr = gl.channel.transmit(code, cw, ebn0, rng)
    mean = {s: decoder(code, algorithm, s, max_iterations=30).decode(llr).iterations.mean() for s in SCHEDULES}
    print(f"{code_name} {algorithm} at {ebn0} dB: mean iterations {mean}")
    assert mean["layered"] < 0.75 * mean["flooding"]


# ---- front door errors -------------------------------------------------------------------

def test_front_door_rejects_bad_llrs():
    code = gl.codes.get("wifi-648-1/2")
    dec = decoder(code)
    with pytest.raises(TypeError, match="must be floating point"):
        dec.decode(np.zeros((2, 648), np.int32))
    with pytest.raises(ValueError, match=r"LLRs must have shape \[batch, 648\], got \(2, 600\)"):
        dec.decode(np.zeros((2, 600), np.float32))
    bad = np.ones((3, 648), np.float32)
    bad[2, 5] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinite values \(frames \[2\]\)"):
        dec.decode(bad)
    one = dec.decode(np.ones(648, np.float64))       # one frame, any float dtype
    assert one.bits.shape == (1, 648) and one.valid.all()


def test_reference_backend_refuses_what_it_does_not_compute():
    code = gl.codes.get("wifi-648-1/2")
    with pytest.raises(BackendUnavailable, match="float32 only"):
        decoder(code, precision="int8")
    H = code.H.tolil()
    H[0, :] = 0
    H[0, 3] = 1
    with pytest.raises(ValueError, match="check row 0 has a single nonzero"):
        decoder(Code("degree-1 row", H.tocsr(), k=code.k))


# ---- FER against AFF3CT ------------------------------------------------------------------

AFF3CT_CURVES = [
    # (reference file, alist, decoder settings, two Eb/N0 points, frame cap)
    ("AWGN__BPSK__BP_HORIZONTAL_LAYERED__SPA__LDPC_N648_K540_hlayered_SPA_i05_Wi-Fi.txt",
     "aff3ct_WIFI_540_648.alist", dict(algorithm="spa", max_iterations=5), (3.5, 3.75), 6000),
    ("AWGN__BPSK__BP_HORIZONTAL_LAYERED__SPA__LDPC_N648_K540_hlayered_SPA_i10_Wi-Fi.txt",
     "aff3ct_WIFI_540_648.alist", dict(algorithm="spa", max_iterations=10), (3.5, 3.75), 6000),
    ("AWGN__BPSK__BP_HORIZONTAL_LAYERED__SPA__LDPC_N648_K540_hlayered_SPA_i20_Wi-Fi.txt",
     "aff3ct_WIFI_540_648.alist", dict(algorithm="spa", max_iterations=20), (3.5, 3.75), 6000),
    ("AWGN__BPSK__BP_HORIZONTAL_LAYERED__SPA__LDPC_N648_K540_hlayered_SPA_i40_Wi-Fi.txt",
     "aff3ct_WIFI_540_648.alist", dict(algorithm="spa", max_iterations=40), (3.5, 3.75), 6000),
    ("AWGN__BPSK__BP_HORIZONTAL_LAYERED__NMS__LDPC_N648_K540_hlayered_NMS_i10_Wi-Fi.txt",
     "aff3ct_WIFI_540_648.alist", dict(algorithm="nms", alpha=1.0, max_iterations=10), (3.8, 4.0), 6000),
    ("AWGN__BPSK__BP_HORIZONTAL_LAYERED__SPA__LDPC_N480_K360_hlayered_SPA_i40_WRAN.txt",
     "aff3ct_WRAN_360_480.alist", dict(algorithm="spa", max_iterations=40), (2.5, 3.0), 4000),
    ("AWGN__BPSK__BP_HORIZONTAL_LAYERED__SPA__LDPC_N576_K288_hlayered_SPA_i100_WiMAX.txt",
     "aff3ct_WIMAX_288_576.alist", dict(algorithm="spa", max_iterations=100), (1.5, 1.75), 4000),
    ("AWGN__BPSK__BP_FLOODING__SPA__LDPC_N576_K288_flooding_SPA_i100_WiMAX.txt",
     "aff3ct_WIMAX_288_576.alist", dict(algorithm="spa", schedule="flooding", max_iterations=100),
     (1.5, 1.75), 4000),
    ("AWGN__BPSK__BP_FLOODING__AMS__LDPC_N576_K288_flooding_AMS_min_i100_WiMAX.txt",
     "aff3ct_WIMAX_288_576.alist", dict(algorithm="nms", alpha=1.0, schedule="flooding", max_iterations=100),
     (2.0, 2.25), 4000),
    ("AWGN__BPSK__BP_HORIZONTAL_LAYERED__NMS__LDPC_N576_K288_hlayered_NMS_i100_WiMAX.txt",
     "aff3ct_WIMAX_288_576.alist", dict(algorithm="nms", alpha=0.825, max_iterations=100, early_stop=False),
     (1.5, 1.75), 2000),
    ("AWGN__BPSK__BP_HORIZONTAL_LAYERED__SPA__LDPC_N576_K480_hlayered_SPA_i40_WiMAX.txt",
     "aff3ct_WIMAX_480_576.alist", dict(algorithm="spa", max_iterations=40, early_stop=False),
     (3.25, 3.5), 3000),
]
TARGET_ERRORS = 150
Z_999 = 3.29


@pytest.fixture(scope="module")
def aff3ct_summary():
    return json.loads((AFF3CT / "summary.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("curve, alist, settings, points, cap", AFF3CT_CURVES,
                         ids=[c[0].split("LDPC_")[1][:-4] for c in AFF3CT_CURVES])
def test_fer_matches_aff3ct(curve, alist, settings, points, cap, aff3ct_summary):
    entry = aff3ct_summary[curve]
    assert entry["synd"] == ("on" if settings.get("early_stop", True) else "off")
    assert int(entry["iters"]) == settings["max_iterations"]
    table = {row[0]: row for row in entry["table"]}
    code = gl.codes.from_alist(AFF3CT / "matrices" / alist)
    dec = decoder(code, **settings)
    for i, ebn0 in enumerate(points):
        _, _, p_ref, n_ref = table[ebn0]
        frames = int(min(cap, np.ceil(TARGET_ERRORS / p_ref)))
        rng = np.random.default_rng([zlib.crc32(curve.encode()), i])       # independent per curve
        llr = gl.channel.transmit(code, np.zeros((frames, code.n), np.uint8), ebn0, rng)
        res = dec.decode(llr)
        errors = int(res.bits.any(axis=1).sum())
        p = errors / frames
        band = Z_999 * np.sqrt(p_ref * (1 - p_ref) * (1 / frames + 1 / n_ref))
        print(f"{curve}: Eb/N0 {ebn0} dB: FER {p:.4f} ({errors}/{frames} frames, mean iterations "
              f"{res.iterations.mean():.1f}); AFF3CT {p_ref} ({n_ref} frames); band +-{band:.4f}")
        assert abs(p - p_ref) <= band, f"{curve} at {ebn0} dB: FER {p:.4f} vs AFF3CT {p_ref} +- {band:.4f}"
