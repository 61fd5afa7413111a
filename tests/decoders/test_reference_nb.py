"""Reference GF(q) Min-Max decoder (gpuldpc.decoders.reference_nb).

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
