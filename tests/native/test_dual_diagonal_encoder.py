"""The compiled 802.11n/802.16e encoder (gpuldpc._core.DualDiagonalEncoder).

Checked against the NumPy encoder (gpuldpc.encode.DualDiagonalEncoder) on
random information for every standard code, for zero syndromes, and for the
errors it gives on wrong input.
"""
import threading
import zlib

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc import _native
from gpuldpc.encode import DualDiagonalEncoder as NumpyDualDiagonalEncoder

STANDARD_CODES = [name for name in gl.codes.names() if name.startswith(("wifi-", "wimax-"))]


def test_every_standard_code_is_listed():
    # 802.11n: 3 lengths x 4 rates; 802.16e: 19 lengths (576..2304 step 96) x 6 rates.
    assert len(STANDARD_CODES) == 12 + 19 * 6


@pytest.mark.parametrize("name", STANDARD_CODES)
def test_equals_numpy_encoder(native_core, name):
    code = gl.codes.get(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    info = rng.integers(0, 2, size=(7, code.k), dtype=np.uint8)
    enc = _native.dual_diagonal_encoder(code)
    assert (enc.n, enc.k, enc.z) == (code.n, code.k, code.z)
    cw = enc.encode(info)
    assert cw.dtype == np.uint8 and cw.shape == (7, code.n)
    np.testing.assert_array_equal(cw, NumpyDualDiagonalEncoder(code.base, code.z).encode(info))
    np.testing.assert_array_equal(cw[:, :code.k], info)
    assert code.is_codeword(cw).all()


def test_bool_input_and_empty_batch(native_core):
    code = gl.codes.get("wifi-648-1/2")
    enc = _native.dual_diagonal_encoder(code)
    info = np.random.default_rng(3).integers(0, 2, size=(2, code.k)).astype(bool)
    np.testing.assert_array_equal(enc.encode(info), code.encode(info.astype(np.uint8)))
    assert enc.encode(np.zeros((0, code.k), np.uint8)).shape == (0, code.n)
    # A non-contiguous view (every other frame) encodes like its copy.
    many = np.random.default_rng(4).integers(0, 2, size=(6, code.k), dtype=np.uint8)
    np.testing.assert_array_equal(enc.encode(many[::2]), enc.encode(many[::2].copy()))


@pytest.mark.parametrize("shape", [(3, 323), (3, 325), (324,), (2, 3, 324)])
def test_wrong_info_shape(native_core, shape):
    enc = _native.dual_diagonal_encoder(gl.codes.get("wifi-648-1/2"))
    with pytest.raises(ValueError, match=r"info must have shape \[batch, 324\], got \("):
        enc.encode(np.zeros(shape, np.uint8))


def test_wrong_info_dtype_and_values(native_core):
    enc = _native.dual_diagonal_encoder(gl.codes.get("wifi-648-1/2"))
    with pytest.raises(TypeError, match=r"info must be a uint8 \(or bool\) array of bits, got dtype "
                                        r"float64: pass info.astype\(numpy.uint8\)"):
        enc.encode(np.zeros((1, 324)))
    info = np.zeros((3, 324), np.uint8)
    info[1, 5] = 2
    with pytest.raises(ValueError, match=r"info entries must be bits \(0 or 1\): frame 1, position 5 holds 2"):
        enc.encode(info)


def test_malformed_base_matrices(native_core):
    base = np.array(gl.codes.get("wifi-648-1/2").base)
    DDE = native_core.DualDiagonalEncoder
    with pytest.raises(TypeError, match="base must be an integer array"):
        DDE(base.astype(float), 27)
    with pytest.raises(ValueError, match=r"base must be 2-D \[mb, nb\], got shape \(288,\)"):
        DDE(base.ravel(), 27)
    with pytest.raises(ValueError, match=r"entry \(0, 0\) = 40 is not -1 or a shift in 0..26"):
        DDE(np.where(np.arange(base.size).reshape(base.shape) == 0, 40, base), 27)
    broken = base.copy()
    broken[3, 16] = 5                       # the staircase needs identities
    with pytest.raises(ValueError, match=r"not dual-diagonal: entry \(3, 16\) is 5, the staircase needs 0"):
        DDE(broken, 27)
    even = base.copy()
    even[6, 12] = -1                        # h_b: shifts (1, 0, 1) at rows 0, 6, 11 -> (1, 1)
    with pytest.raises(ValueError, match="exactly one shift occurring an odd number of times, found 0"):
        DDE(even, 27)
    with pytest.raises(ValueError, match="expansion factor z must be >= 1, got 0"):
        DDE(base, 0)


def test_only_standard_codes(native_core):
    nb = gl.codes.get(next(n for n in gl.codes.names() if n.startswith("gf")))
    with pytest.raises(ValueError, match="needs an IEEE 802.11n or 802.16e code"):
        _native.dual_diagonal_encoder(nb)


def test_encode_releases_the_gil(native_core):
    """Another Python thread keeps running while a large batch encodes."""
    code = gl.codes.get("wifi-1944-1/2")
    enc = _native.dual_diagonal_encoder(code)
    info = np.random.default_rng(5).integers(0, 2, size=(12000, code.k), dtype=np.uint8)
    ticks = 0
    worker = threading.Thread(target=enc.encode, args=(info,))
    worker.start()
    while worker.is_alive():
        ticks += 1
    worker.join()
    # Holding the GIL, the encode (~70 ms) would leave this loop at most a few turns
    # (before and after the call); released, the loop turns millions of times a second.
    assert ticks > 100
