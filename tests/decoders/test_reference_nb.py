"""Reference GF(q) Min-Max decoder (gpuldpc.decoders.reference_nb) and trellis Min-Max
("tmm", gpuldpc.decoders.reference_tmm: the last section).

No published FER curve for these codes is at hand (see
/work/shared/reference/codes/nb/README.md), so the decoder is checked against
the definition instead: the check update equals a brute-force minimum over all
check-satisfying configurations, the posteriors equal the documented float32
variable-node arithmetic evaluated one edge at a time, every frame decodes at
high SNR and the FER falls with the SNR.
"""
import itertools

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.decoders import reference, reference_nb
from gpuldpc.decoders.front import BackendUnavailable
from gpuldpc.decoders.reference_tmm import trellis_check_update
from gpuldpc.gf import GF

SCHEDULES = [("minmax", "flooding"), ("mmma", "layered"), ("minmax", "layered"), ("mmma", "flooding")]


def decoder(code, algorithm="minmax", schedule="flooding", **kw):
    return gl.Decoder(code, algorithm=algorithm, schedule=schedule, backend="reference", **kw)


def random_codewords(code, frames, seed):
    rng = np.random.default_rng(seed)
    return code.encode(rng.integers(0, code.q, (frames, code.k))), rng


# ---- the check update against its definition ---------------------------------------------

def brute_force_check(q_msgs, h, field):
    """R_i(a) = min over x with x_i = a and sum_j h_j x_j = 0 of max_{j != i} Q_j(x_j)."""
    d, q = q_msgs.shape
    configs = np.array(list(itertools.product(range(q), repeat=d)))
    ok = configs[np.bitwise_xor.reduce(field.mul[h[None, :], configs], axis=1) == 0]
    values = q_msgs[np.arange(d), ok]
    r = np.full((d, q), np.inf, np.float32)
    for i in range(d):
        np.minimum.at(r[i], ok[:, i], np.delete(values, i, axis=1).max(axis=1))
    return r


@pytest.mark.parametrize("q, d", [(4, 2), (4, 5), (8, 3), (8, 4), (16, 3)])
def test_check_update_equals_brute_force(q, d):
    field = GF(q)
    rng = np.random.default_rng(q * 10 + d)
    for trial in range(4):
        h = rng.integers(1, q, d)
        msgs = rng.integers(0, 6, (d, q)).astype(np.float32) * np.float32(0.75)   # many ties
        msgs -= msgs.min(axis=1, keepdims=True)
        div = field.div[np.arange(q)[None, :], h[:, None]].astype(np.intp)[:, :, None]
        mul = field.mul[h[:, None], np.arange(q)[None, :]].astype(np.intp)[:, :, None]
        got = reference_nb.check_update(msgs[:, :, None], div, mul, field.add.astype(np.intp))[:, :, 0]
        np.testing.assert_array_equal(got, brute_force_check(msgs, h, field))
        np.testing.assert_array_equal(got.min(axis=1), 0.0)


def spec_posterior(code, llr, schedule, iterations):
    """The documented float32 arithmetic, one check and one edge at a time (one frame)."""
    field = GF(code.q)
    H = code.H
    rows = [(H.indices[H.indptr[i]:H.indptr[i + 1]], H.data[H.indptr[i]:H.indptr[i + 1]].astype(np.int64))
            for i in range(code.m)]
    r = {(i, j): np.zeros(code.q, np.float32) for i, (cols, _) in enumerate(rows) for j in cols}

    def normalized(v):
        return v - v.min()

    if schedule == "layered":
        post = llr.copy()
        for _ in range(iterations):
            for i, (cols, h) in enumerate(rows):
                q = np.stack([normalized(post[j] - r[i, j]) for j in cols])
                new = brute_force_check(q, h, field)
                for t, j in enumerate(cols):
                    r[i, j] = new[t]
                    post[j] = q[t] + new[t]
        return post
    total = llr.copy()
    for _ in range(iterations):
        q = {edge: normalized(total[edge[1]] - r[edge]) for edge in r}
        for i, (cols, h) in enumerate(rows):
            new = brute_force_check(np.stack([q[i, j] for j in cols]), h, field)
            for t, j in enumerate(cols):
                r[i, j] = new[t]
        total = llr.copy()
        for i in range(code.m):                       # increasing check row for every variable
            for j in rows[i][0]:
                total[j] = total[j] + r[i, j]
    return total


@pytest.mark.parametrize("algorithm, schedule", SCHEDULES[:2])
def test_posteriors_follow_the_documented_arithmetic(algorithm, schedule):
    code = gl.codes.get("gf4-192-96")
    cw, rng = random_codewords(code, 2, seed=1)
    llr = gl.channel.transmit(code, cw, 1.0, rng)
    impl = reference.make(code, decoder(code, algorithm, schedule).settings)
    got = impl.posterior(llr, 3)
    for frame in range(2):
        np.testing.assert_array_equal(got[frame], spec_posterior(code, llr[frame], schedule, 3))


# ---- decoding ------------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm, schedule", SCHEDULES)
def test_noiseless_llrs_decode_in_one_iteration(algorithm, schedule):
    for name in ("gf4-192-96", "gf16-300-150", "gf32-620-310"):
        code = gl.codes.get(name)
        field = GF(code.q)
        cw, _ = random_codewords(code, 4, seed=2)
        distance = field.to_bits(cw[:, :, None] ^ np.arange(code.q)).sum(axis=-1)
        llr = (5.0 * distance).astype(np.float32)               # L(a) = 5 * Hamming distance to x_n
        res = decoder(code, algorithm, schedule).decode(llr)
        np.testing.assert_array_equal(res.bits, cw)
        np.testing.assert_array_equal(res.iterations, 1)
        assert res.valid.all()


@pytest.mark.parametrize("algorithm, schedule", SCHEDULES[:2])
@pytest.mark.parametrize("name, frames", [("gf16-300-150", 40), ("gf32-620-310", 30), ("gf64-1260-630", 12)])
def test_every_frame_decodes_at_high_snr(name, frames, algorithm, schedule):
    code = gl.codes.get(name)
    cw, rng = random_codewords(code, frames, seed=3)
    llr = gl.channel.transmit(code, cw, 4.0, rng)
    assert (llr.argmin(axis=-1) != cw).any(), "the channel must corrupt some symbols"
    res = decoder(code, algorithm, schedule, max_iterations=20).decode(llr)
    assert res.bits.dtype == np.uint8 and res.bits.shape == (frames, code.n)
    np.testing.assert_array_equal(res.bits, cw)
    np.testing.assert_array_equal(res.info, cw[:, :code.k])
    assert res.valid.all() and res.iterations.max() <= 10


@pytest.mark.slow
@pytest.mark.parametrize("algorithm, schedule, points", [("minmax", "flooding", (2.0, 2.5, 3.0)),
                                                         ("mmma", "layered", (1.5, 2.0, 2.5))])
def test_fer_falls_with_snr(algorithm, schedule, points):
    code = gl.codes.get("gf16-300-150")
    dec = decoder(code, algorithm, schedule, max_iterations=10)
    fer = []
    for ebn0 in points:
        cw, rng = random_codewords(code, 150, seed=int(ebn0 * 10))
        res = dec.decode(gl.channel.transmit(code, cw, ebn0, rng))
        counts = gl.channel.count_errors(res.bits, cw, q=code.q)
        np.testing.assert_array_equal(res.valid, code.is_codeword(res.bits))
        fer.append(counts.fer)
        print(f"{code.name} {algorithm} {schedule} {ebn0} dB: FER {counts.fer:.3f} BER {counts.ber:.2e} "
              f"({counts.frame_errors}/{counts.frames} frames), mean iterations {res.iterations.mean():.2f}")
    # 150 frames per point: the first point fails often, the last rarely
    assert fer[0] > 0.3 and fer[0] > fer[1] > fer[2] and fer[2] < 0.05


@pytest.mark.parametrize("algorithm, schedule", SCHEDULES[:2])
def test_early_stop_returns_the_fixed_iteration_result_at_its_iteration(algorithm, schedule):
    code = gl.codes.get("gf16-300-150")
    cw, rng = random_codewords(code, 60, seed=4)
    llr = gl.channel.transmit(code, cw, 2.25, rng)
    early = decoder(code, algorithm, schedule, max_iterations=8).decode(llr)
    assert len(np.unique(early.iterations)) > 2
    np.testing.assert_array_equal(early.valid, code.is_codeword(early.bits))
    for t in np.unique(early.iterations):
        frames = early.iterations == t
        fixed = decoder(code, algorithm, schedule, max_iterations=int(t), early_stop=False).decode(llr[frames])
        np.testing.assert_array_equal(fixed.bits, early.bits[frames])
    np.testing.assert_array_equal(early.bits[early.valid], cw[early.valid])


def test_layered_needs_fewer_iterations_than_flooding():
    code = gl.codes.get("gf16-300-150")
    cw, rng = random_codewords(code, 60, seed=5)
    llr = gl.channel.transmit(code, cw, 2.5, rng)
    flooding = decoder(code, "minmax", "flooding", max_iterations=20).decode(llr)
    layered = decoder(code, "mmma", "layered", max_iterations=20).decode(llr)
    print(f"mean iterations: flooding {flooding.iterations.mean():.2f}, layered {layered.iterations.mean():.2f}")
    assert layered.iterations.mean() < 0.75 * flooding.iterations.mean()
    assert layered.valid.sum() >= flooding.valid.sum()


def test_layers_are_the_base_matrix_rows():
    code = gl.codes.get("gf32-620-310")
    graph = reference.make(code, decoder(code, "mmma", "layered").settings).graph
    assert len(graph.layers) == code.base.shape[0]
    for i, layer in enumerate(graph.layers):
        np.testing.assert_array_equal(np.sort(np.concatenate([b.rows for b in layer])),
                                      np.arange(i * 31, (i + 1) * 31))


# ---- front door errors -------------------------------------------------------------------

def test_front_door_rejects_bad_symbol_llrs_and_unsupported_settings():
    code = gl.codes.get("gf16-300-150")
    dec = decoder(code)
    with pytest.raises(ValueError, match=r"LLRs must have shape \[batch, 300, 16\] or \[batch, 1200\], "
                                         r"got \(4, 1199\)"):
        dec.decode(np.zeros((4, 1199), np.float32))
    bad = np.zeros((2, 300, 16), np.float32)
    bad[1, 0, 3] = np.inf
    with pytest.raises(ValueError, match=r"NaN or infinite values \(frames \[1\]\)"):
        dec.decode(bad)
    with pytest.raises(TypeError, match="must be floating point"):
        dec.decode(np.zeros((2, 300, 16), np.uint8))
    with pytest.raises(BackendUnavailable, match="float32 only"):
        decoder(code, precision="int16")
    with pytest.raises(ValueError, match=r"algorithm='nms' is not one of"):
        decoder(code, "nms")


# ---- trellis Min-Max ("tmm", "tmm1"): hand cases, against brute_force_check, decoding ------

def tmm(msgs, h, alpha=1.0, first_minima_pairs=False):
    """trellis_check_update of one check: msgs [d, q] costs, h [d] coefficients
    (``first_minima_pairs=True``: "tmm1")."""
    q = msgs.shape[1]
    field = GF(q)
    div = field.div[np.arange(q)[None, :], h[:, None]].astype(np.intp)[:, :, None]
    mul = field.mul[h[:, None], np.arange(q)[None, :]].astype(np.intp)[:, :, None]
    return trellis_check_update(np.asarray(msgs, np.float32)[:, :, None], div, mul,
                                field.add.astype(np.intp), alpha, first_minima_pairs)[:, :, 0]


def test_hand_case_gf4_degree_3():
    """h = 1: z = (0, 1, 2), beta = 3; dQ rows eta = 1, 2, 3: (1, 2, 2), (4, 5, 3), (6, 3, 7);
    m1 = (1, 3, 3) at p = (0, 2, 1), m2 = (2, 4, 6) at p2 = (1, 0, 0); no pair beats m1, so
    E = m1 with paths {0}, {2}, {1}; off the path: A_0(1) = m2(1) = 2, A_2(2) = max(m1(1),
    m1(3)) = 3, A_1(3) = max(m1(1), m1(2)) = 3; dR_0 = (0, 2, 3, 3), dR_1 = dR_2 = (0, 1, 3, 3);
    R_i(a) = dR_i(a + beta + z_i)."""
    msgs = np.array([[0, 1, 4, 6], [2, 0, 3, 5], [3, 7, 0, 2]], np.float32)
    h = np.array([1, 1, 1])
    want = np.array([[3, 3, 2, 0], [3, 3, 0, 1], [1, 0, 3, 3]], np.float32)
    np.testing.assert_array_equal(tmm(msgs, h), want)
    np.testing.assert_array_equal(tmm(msgs, h), brute_force_check(msgs, h, GF(4)))   # exact at d = 3
    np.testing.assert_array_equal(tmm(msgs, h, alpha=0.5), want * np.float32(0.5))


def test_three_deviations_are_beyond_the_trellis():
    """GF(8), h = 1, every z = 0: columns 0, 1, 2 deviate cheaply (cost 1) by 1, 2, 4 only.
    Column 3 at eta = 3 = 1 + 2 (two deviations): 1, as Min-Max; at eta = 7 = 1 + 2 + 4 Min-Max
    finds 1 but T-MM (two deviations at most) the pairs (2, 5), (3, 4) at cost 5."""
    msgs = np.full((4, 8), 5.0, np.float32)
    msgs[:, 0] = 0.0
    msgs[0, 1] = msgs[1, 2] = msgs[2, 4] = 1.0
    h = np.ones(4, np.int64)
    got, exact = tmm(msgs, h), brute_force_check(msgs, h, GF(8))
    assert got[3, 3] == exact[3, 3] == 1.0
    assert exact[3, 7] == 1.0 and got[3, 7] == 5.0
    np.testing.assert_array_equal(tmm(msgs, h, alpha=0.75)[3, [0, 3, 7]], [0.0, 0.75, 3.75])


@pytest.mark.parametrize("q, d", [(4, 2), (4, 3), (8, 2), (8, 4), (16, 3), (4, 5)])
def test_never_below_min_max_and_exact_for_two_edges(q, d):
    field = GF(q)
    rng = np.random.default_rng(7 * q + d)
    same = 0
    for _ in range(6):
        h = rng.integers(1, q, d)
        msgs = rng.integers(0, 6, (d, q)).astype(np.float32) * np.float32(0.75)   # many ties
        msgs -= msgs.min(axis=1, keepdims=True)
        got, exact = tmm(msgs, h), brute_force_check(msgs, h, field)
        assert (got >= exact).all()
        np.testing.assert_array_equal(got.min(axis=1), 0.0)
        same += np.array_equal(got, exact)
    assert same == 6 if d == 2 else same < 6       # one other edge: its own message; else approximate


def test_tmm1_hand_case_gf4_degree_3():
    """"tmm1": step 5's pairs from first minima.  h = 1 and every z = 0, so beta = 0 and
    dQ_i = Q_i, R_i = dR_i.  Rows eta = 1, 2, 3 over columns (0, 1, 2): (1, 6, 2), (5, 1, 6),
    (9, 8, 7); m1 = (1, 1, 7) at p = (0, 1, 2), m2 = (2, 5, 8) at p2 = (2, 0, 1).  E = (1, 1, 1),
    E(3) = max(m1(1), m1(2)) on path {0, 1}.  A_0(3): T-MM takes the pair (1, 2) off column 0,
    max(m2(1), m1(2)) = 2 (columns 2 and 1, the exact Min-Max value); in "tmm1" row 1's first
    minimum lies on column 0, so the pair offers nothing and the one deviation m1(3) = 7 is
    left.  Every other output is T-MM's: A_0(1) = m2(1) = 2 and A_1(2) = m2(2) = 5 (one
    deviation, the pairs (2, 3), (1, 3) cost 7 in both), A_1(3) = 7 (T-MM's pair off column 1
    is m1(1), m2(2), both on column 0: not allowed)."""
    msgs = np.array([[0, 1, 5, 9], [0, 6, 1, 8], [0, 2, 6, 7]], np.float32)
    h = np.array([1, 1, 1])
    full = np.array([[0, 2, 1, 2], [0, 1, 5, 7], [0, 1, 1, 1]], np.float32)
    np.testing.assert_array_equal(tmm(msgs, h), full)
    np.testing.assert_array_equal(brute_force_check(msgs, h, GF(4))[0], full[0])
    first = full.copy()
    first[0, 3] = 7.0
    np.testing.assert_array_equal(tmm(msgs, h, first_minima_pairs=True), first)
    np.testing.assert_array_equal(tmm(msgs, h, alpha=0.75, first_minima_pairs=True), first * np.float32(0.75))


def delta_domain(msgs, h, out):
    """Steps 1-2 and 7 undone for one check: the trellis dQ [d, q] of msgs and the Δ-domain
    output dR [d, q] of R = out (alpha 1): dR_i(eta) = R_i((eta + beta + z_i) / h_i)."""
    d, q = msgs.shape
    field, col, eta = GF(q), np.arange(d)[:, None], np.arange(q)[None, :]
    qh = msgs[col, field.div[eta, h[:, None]]]
    z = qh.argmin(axis=1)[:, None]
    beta = np.bitwise_xor.reduce(z)
    return qh[col, eta ^ z], out[col, field.div[eta ^ beta ^ z, h[:, None]]]


@pytest.mark.parametrize("q, d", [(4, 2), (8, 2), (4, 3), (4, 5), (8, 4), (16, 6), (32, 12)])
def test_tmm1_is_tmm_with_fewer_pairs(q, d):
    """"tmm1" against T-MM on random checks (2q cost levels, with ties): every output at least T-MM's (its pairs
    off a column are some of T-MM's, the one deviation the same) and finite (the one deviation
    keeps m2); T-MM's wherever no other trellis row has its first minimum on the column (the
    pairs off it are then the same; off the path both give E); everything T-MM's for d = 2 (off
    one column only one is left: no pair); never below Min-Max (a configuration of the others)."""
    field = GF(q)
    rng = np.random.default_rng(11 * q + d)
    above = free = 0
    for _ in range(8):
        h = rng.integers(1, q, d)
        msgs = rng.integers(0, 2 * q, (d, q)).astype(np.float32) * np.float32(0.75)
        msgs -= msgs.min(axis=1, keepdims=True)
        full, first = tmm(msgs, h), tmm(msgs, h, first_minima_pairs=True)
        assert np.isfinite(first).all()
        assert (first >= full).all()
        np.testing.assert_array_equal(first.min(axis=1), 0.0)
        if d <= 4:
            assert (first >= brute_force_check(msgs, h, field)).all()
        if d == 2:
            np.testing.assert_array_equal(first, full)
        dq, dr_full = delta_domain(msgs, h, full)
        dr_first = delta_domain(msgs, h, first)[1]
        np.testing.assert_array_equal(dr_full[:, 0], 0.0)
        p = dq[:, 1:].argmin(axis=0)                                # p(eta), eta = 1 .. q-1
        for eta in range(1, q):
            others = np.delete(p, [eta - 1])                        # rows e != 0, eta
            alone = ~np.isin(np.arange(d), others)                  # no other row's m1 on column i
            np.testing.assert_array_equal(dr_first[alone, eta], dr_full[alone, eta])
            free += alone.sum()
        above += (first > full).sum()
    if d > 2:                                                       # both kinds of entry occur
        assert above > 0 and free > 0, (above, free)


def test_decoder_applies_alpha_to_every_check_message():
    code = gl.codes.get("gf16-300-150")
    cw, rng = random_codewords(code, 3, seed=11)
    llr = gl.channel.transmit(code, cw, 1.5, rng)
    one = gl.Decoder(code, "tmm", schedule="flooding", alpha=1.0, backend="reference")
    half = gl.Decoder(code, "tmm", schedule="flooding", alpha=0.5, backend="reference")
    impl = reference_nb.MinMaxReferenceDecoder(code, half.settings)
    got = impl.posterior(llr, 1) - llr                 # one flooding iteration: T - Lch = sum R
    full = reference_nb.MinMaxReferenceDecoder(code, one.settings).posterior(llr, 1) - llr
    np.testing.assert_allclose(got, 0.5 * full, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("schedule", ["layered", "flooding"])
def test_noiseless_and_high_snr_frames_decode(schedule):
    for name, frames in (("gf8-224-112", 8), ("gf32-620-310", 6), ("gf32-837-726", 6)):
        code = gl.codes.get(name)
        field = GF(code.q)
        cw, rng = random_codewords(code, frames, seed=2)
        distance = field.to_bits(cw[:, :, None] ^ np.arange(code.q)).sum(axis=-1)
        res = gl.Decoder(code, "tmm", schedule, backend="reference").decode((5.0 * distance).astype(np.float32))
        np.testing.assert_array_equal(res.bits, cw)
        np.testing.assert_array_equal(res.iterations, 1)
        llr = gl.channel.transmit(code, cw, 5.5, rng)
        assert (llr.argmin(axis=-1) != cw).any()
        res = gl.Decoder(code, "tmm", schedule, max_iterations=20, backend="reference").decode(llr)
        np.testing.assert_array_equal(res.bits, cw)
        assert res.valid.all()


def test_algorithm_errors_name_the_algorithm():
    with pytest.raises(ValueError, match=r"algorithm='tmm' is not one of 'nms', 'oms', 'spa'"):
        gl.Decoder(gl.codes.get("wifi-648-1/2"), "tmm")
    with pytest.raises(ValueError, match=r"algorithm='ems' is not one of 'minmax', 'mmma', 'tmm', 'tmm1', 'fft-spa'"):
        gl.Decoder(gl.codes.get("gf16-300-150"), "ems")
    with pytest.raises(ValueError, match=r"alpha must lie in \(0, 1\]"):
        gl.Decoder(gl.codes.get("gf16-300-150"), "tmm", alpha=1.5, backend="reference")
