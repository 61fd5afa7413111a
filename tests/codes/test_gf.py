"""GF(2^m) tables: field axioms, exp/log consistency, primitivity, binary image."""
import numpy as np
import pytest
import scipy.sparse as sp

from gpuldpc.gf import GF, LOG_OF_ZERO, PRIMITIVE_POLYNOMIALS, binary_image

QS = sorted(PRIMITIVE_POLYNOMIALS)


def _poly_mulmod(a: int, b: int, poly: int, m: int) -> int:
    """Carry-less product of polynomials a*b reduced mod poly (independent of the tables)."""
    r = 0
    while b:
        if b & 1:
            r ^= a
        b >>= 1
        a <<= 1
        if a >> m & 1:
            a ^= poly
    return r


def test_documented_polynomials_match_reference():
    # /work/shared/reference/codes/nb/README.md and the module docstring
    assert PRIMITIVE_POLYNOMIALS == {
        2: 0x3, 4: 0x7, 8: 0xB, 16: 0x13, 32: 0x25, 64: 0x43, 128: 0x89, 256: 0x11D
    }


def test_cached_and_unsupported():
    assert GF(32) is GF(32)
    with pytest.raises(ValueError, match="q=6 is not supported"):
        GF(6)


@pytest.mark.parametrize("q", QS)
def test_mul_table_equals_polynomial_product(q):
    F = GF(q)
    a = np.arange(q)
    expect = np.array([[_poly_mulmod(x, y, F.poly, F.m) for y in range(q)] for x in range(q)])
    np.testing.assert_array_equal(F.mul, expect)
    np.testing.assert_array_equal(F.add, a[:, None] ^ a[None, :])


@pytest.mark.parametrize("q", QS)
def test_pair_axioms(q):
    F = GF(q)
    a = np.arange(q)[:, None]
    b = np.arange(q)[None, :]
    # commutativity of both operations, identities, zero
    np.testing.assert_array_equal(F.mul, F.mul.T)
    np.testing.assert_array_equal(F.add, F.add.T)
    np.testing.assert_array_equal(F.mul[1], np.arange(q))
    np.testing.assert_array_equal(F.add[0], np.arange(q))
    assert not F.mul[0].any()
    # every nonzero row of mul is a permutation of the nonzero elements (no zero divisors)
    for x in range(1, q):
        assert sorted(F.mul[x, 1:].tolist()) == list(range(1, q))
    # inverse, division
    assert F.inv[0] == 0
    np.testing.assert_array_equal(F.mul[np.arange(1, q), F.inv[1:]], np.ones(q - 1))
    np.testing.assert_array_equal(F.mul[F.div[a, b[:, 1:]], b[:, 1:]], np.broadcast_to(a, (q, q - 1)))
    assert not F.div[:, 0].any()


def _triples(q, rng):
    if q <= 32:
        g = np.meshgrid(np.arange(q), np.arange(q), np.arange(q), indexing="ij")
        return [x.ravel() for x in g]
    return list(rng.integers(0, q, size=(3, 200_000)))


@pytest.mark.parametrize("q", QS)
def test_triple_axioms(q):
    F = GF(q)
    a, b, c = _triples(q, np.random.default_rng(q))
    np.testing.assert_array_equal(F.mul[F.mul[a, b], c], F.mul[a, F.mul[b, c]])
    np.testing.assert_array_equal(F.mul[a, F.add[b, c]], F.add[F.mul[a, b], F.mul[a, c]])


@pytest.mark.parametrize("q", QS)
def test_exp_log_primitive(q):
    F = GF(q)
    n = q - 1
    assert len(F.exp) == 2 * n
    assert F.log[0] == LOG_OF_ZERO == -1
    # alpha = 2 has order exactly q-1: its powers are all nonzero elements once
    assert sorted(F.exp[:n].tolist()) == list(range(1, q))
    np.testing.assert_array_equal(F.exp[n:], F.exp[:n])
    np.testing.assert_array_equal(F.exp[F.log[1:]], np.arange(1, q))
    np.testing.assert_array_equal(F.log[F.exp[:n]], np.arange(n))
    if q > 2:
        assert F.exp[1] == 2
        assert F.exp[F.m] == F.poly ^ q  # alpha^m = p(x) - x^m


@pytest.mark.parametrize("q", QS)
def test_functions(q):
    F = GF(q)
    rng = np.random.default_rng(7)
    a = rng.integers(0, q, 1000)
    b = rng.integers(1, q, 1000)
    e = rng.integers(-40, 40, 1000)
    np.testing.assert_array_equal(F.multiply(F.divide(a, b), b), a)
    np.testing.assert_array_equal(F.multiply(b, F.inverse(b)), np.ones_like(b))
    # power against repeated multiplication
    ref = np.ones_like(b)
    for _ in range(5):
        ref = F.mul[ref, b]
    np.testing.assert_array_equal(F.power(b, 5), ref)
    np.testing.assert_array_equal(F.multiply(F.power(b, e), F.power(b, -e)), np.ones_like(b))
    np.testing.assert_array_equal(F.power(np.array([0, 0, 3 % q]), np.array([0, 3, 0])), [1, 0, 1])
    np.testing.assert_array_equal(F.alpha_power([-1, q - 1, 1]), [F.exp[q - 2], 1, F.exp[1]])
    with pytest.raises(ZeroDivisionError, match="division by the zero element"):
        F.divide(a, np.zeros_like(a))
    with pytest.raises(ZeroDivisionError, match="no inverse"):
        F.inverse([1, 0])
    with pytest.raises(ValueError, match=f"outside 0..{q - 1}"):
        F.multiply(q, 1)
    with pytest.raises(TypeError, match="integer"):
        F.multiply(1.5, 1)


@pytest.mark.parametrize("q", QS)
def test_binary_image_of_multiplication(q):
    F = GF(q)
    a = np.arange(q)
    bits = F.to_bits(a)
    assert bits.shape == (q, F.m)
    np.testing.assert_array_equal(bits[:, 0], a & 1)  # LSB first
    np.testing.assert_array_equal(F.from_bits(bits), a)
    for c in range(q):
        M = F.mul_matrix(c).astype(np.int64)
        np.testing.assert_array_equal((bits.astype(np.int64) @ M.T) % 2, F.to_bits(F.mul[c, a]))


def test_binary_image_matrix():
    F = GF(16)
    rng = np.random.default_rng(3)
    H = rng.integers(0, 16, size=(5, 9)) * (rng.random((5, 9)) < 0.5)
    Hb = binary_image(sp.csr_matrix(H), 16)
    assert Hb.shape == (20, 36)
    for _ in range(20):
        x = rng.integers(0, 16, 9)
        synd = np.bitwise_xor.reduce(F.mul[H, x[None, :]], axis=1)
        xb = F.to_bits(x).reshape(-1)
        np.testing.assert_array_equal((Hb @ xb) % 2, F.to_bits(synd).reshape(-1))
