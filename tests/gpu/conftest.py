"""Fixtures for the GPU tests: the CUDA package (skip without a GPU), noisy frames,
and reference-decoder results.

Reference results are deterministic functions of (code, settings, LLRs); the numpy
reference decoder is slow (tens of seconds per 10^4 frames), so when
``GPULDPC_REFERENCE_CACHE`` names a folder, results are kept there as
``<sha1>.npz`` keyed by the code, the settings and the SHA-1 of the LLR bytes,
and reused only for identical LLRs.
"""
import hashlib
import os

import numpy as np
import pytest

import gpuldpc as gl


@pytest.fixture(scope="session")
def cuda():
    """The gpuldpc.cuda package; skips the test without PyCUDA or a CUDA device."""
    from gpuldpc import cuda as gpu

    if not gpu.available():
        pytest.skip("needs an NVIDIA GPU and PyCUDA")
    return gpu


def noisy_frames(code, ebn0_db, frames, seed):
    """(codewords, float32 LLRs) of random codewords over BPSK/AWGN (gpuldpc.channel)."""
    rng = np.random.default_rng(seed)
    cw = code.encode(rng.integers(0, 2, (frames, code.k), dtype=np.uint8))
    return cw, gl.channel.transmit(code, cw, ebn0_db, rng)


def reference_decode(code, llr, **settings):
    """``gl.Decoder(code, backend="reference", **settings).decode(llr)``, cached on disk."""
    folder = os.environ.get("GPULDPC_REFERENCE_CACHE")
    key = None
    if folder:
        h = hashlib.sha1(repr((code.name, sorted(settings.items()))).encode())
        h.update(np.ascontiguousarray(llr, np.float32).tobytes())
        key = os.path.join(folder, h.hexdigest() + ".npz")
        if os.path.exists(key):
            z = np.load(key)
            bits = np.unpackbits(z["bits"], axis=1, count=code.n)
            return gl.decoders.DecodeResult(bits, bits[:, :code.k], z["iterations"], z["valid"])
    res = gl.Decoder(code, backend="reference", **settings).decode(llr)
    if key:
        os.makedirs(folder, exist_ok=True)
        np.savez_compressed(key, bits=np.packbits(res.bits, axis=1), iterations=res.iterations,
                            valid=res.valid)
    return res


@pytest.fixture(scope="session")
def frames():
    return noisy_frames


@pytest.fixture(scope="session")
def reference():
    return reference_decode
