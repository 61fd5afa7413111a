"""Counter-based noise: the Philox4x64-10 words the GPU kernel must reproduce, and the normals."""
import numpy as np

import gpuldpc as gl
from gpuldpc.sim.frames import POOL_SIZE, Transmitter
from gpuldpc.sim.noise import batch_key, philox4x64_words, standard_normals

M0, M1 = 0xD2E7470EE14C6C93, 0xCA5A826395121157
W0, W1 = 0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B
MASK = (1 << 64) - 1


def philox4x64_10(ctr, key):
    """Philox4x64-10 of Salmon et al. (SC 2011), as kernels/sim_noise.cu writes it."""
    c, k = list(ctr), list(key)
    for r in range(10):
        if r:
            k = [(k[0] + W0) & MASK, (k[1] + W1) & MASK]
        p0, p1 = M0 * c[0], M1 * c[2]
        c = [(p1 >> 64) ^ c[1] ^ k[0], p1 & MASK, (p0 >> 64) ^ c[3] ^ k[1], p0 & MASK]
    return c


def test_words_are_philox_with_counters_from_one():
    key = [int(x) for x in batch_key(5, "wifi-648-1/2", 1.25, 17)]
    words = philox4x64_words(np.array(key, dtype=np.uint64), 12)
    expected = [w for c in (1, 2, 3) for w in philox4x64_10([c, 0, 0, 0], key)]
    assert [int(w) for w in words] == expected


# Random123's kat_vectors for philox4x64 10 (counter, key -> output)
RANDOM123_KAT = [
    ([0, 0, 0, 0], [0, 0],
     [0x16554d9eca36314c, 0xdb20fe9d672d0fdc, 0xd7e772cee186176b, 0x7e68b68aec7ba23b]),
    ([MASK] * 4, [MASK] * 2,
     [0x87b092c3013fe90b, 0x438c3c67be8d0224, 0x9cc7d7c69cd777b6, 0xa09caebf594f0ba0]),
    ([0x243f6a8885a308d3, 0x13198a2e03707344, 0xa4093822299f31d0, 0x082efa98ec4e6c89],
     [0x452821e638d01377, 0xbe5466cf34e90c6c],
     [0xa528f45403e61d95, 0x38c72dbd566e9788, 0xa5a1610e72fd18b5, 0x57bd43b5e52b7fe6]),
]


def test_random123_known_answers():
    for ctr, key, out in RANDOM123_KAT:
        assert philox4x64_10(ctr, key) == out


def test_box_muller_from_words():
    key = batch_key(1, "c", 0.0, 0)
    z = standard_normals(key, 7)
    w = philox4x64_words(key, 4)
    lo = (w & 0xFFFFFFFF).astype(np.float32)
    hi = (w >> 32).astype(np.float32)
    r = np.sqrt(np.float32(-2) * np.log(lo * np.float32(2.0 ** -32) + np.float32(2.0 ** -33)))
    theta = hi * np.float32(2 * np.pi * 2.0 ** -32)
    assert np.array_equal(z, np.stack([r * np.cos(theta), r * np.sin(theta)], 1).reshape(-1)[:7])


def test_normals_statistics():
    z = standard_normals(batch_key(2, "c", 1.0, 3), 400_000)
    assert z.dtype == np.float32
    assert abs(z.mean()) < 5 * 1 / np.sqrt(z.size)                          # 5 sigma of the mean
    assert abs(z.var() - 1) < 5 * np.sqrt(2 / z.size)
    assert abs(np.mean(np.abs(z) > 2) - 0.0455) < 0.002                      # two-sided tail at 2
    assert np.abs(z).max() < 6.77


def test_keys_separate_seed_code_point_and_batch():
    base = ("a", 1.0, 0)
    keys = {tuple(batch_key(s, c, e, b)) for s, c, e, b in
            [(1, *base), (2, *base), (1, "b", 1.0, 0), (1, "a", 1.001, 0), (1, "a", 1.0, 1), (1, "a", -1.0, 0)]}
    assert len(keys) == 6
    assert np.array_equal(batch_key(1, "a", 1.0, 5), batch_key(1, "a", 1.0004, 5))   # same milli-dB


def test_batch_reproduced_alone():
    code = gl.codes.get("wifi-648-1/2")
    a, b = Transmitter(code, 11), Transmitter(code, 11)
    for batch in range(3):
        a.llr(2.0, batch, 8)                     # a has produced batches 0..2, b only batch 2
    assert np.array_equal(a.llr(2.0, 2, 8), b.llr(2.0, 2, 8))
    assert not np.array_equal(a.llr(2.0, 1, 8), a.llr(2.0, 2, 8))


def test_transmitter_llrs_follow_the_channel_convention():
    code = gl.codes.get("wifi-648-1/2")
    t = Transmitter(code, 4)
    assert code.is_codeword(t.codewords).all() and t.codewords.shape == (POOL_SIZE, code.n)
    assert np.array_equal(t.codewords[:, :code.k], t.info)
    llr = t.llr(3.0, 5, 4)
    sigma = gl.channel.sigma_from_ebn0(3.0, 0.5)
    sent = t.codewords[t.frame_rows(5, 4)]
    w = standard_normals(batch_key(4, code.name, 3.0, 5), llr.size).reshape(llr.shape)
    expected = np.float32(2 / sigma ** 2) * ((1 - 2 * sent.astype(np.float32)) + np.float32(sigma) * w)
    assert llr.dtype == np.float32 and np.array_equal(llr, expected)
    assert np.array_equal(t.frame_rows(5, 4), [20, 21, 22, 23])
    assert np.array_equal(t.frame_rows(16, 8), [0, 1, 2, 3, 4, 5, 6, 7])      # 128 mod 64
