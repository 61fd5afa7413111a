"""Reference results of the GPU tests, kept on disk between runs.

The numpy reference decoders are slow (tens of seconds per 10^4 binary frames, minutes
on GF(64..256) codes); results are deterministic functions of (code, settings, LLRs), so
when ``GPULDPC_REFERENCE_CACHE`` names a folder, a result is stored there keyed by the
code, the decoder's description and the SHA-1 of the float32 LLR bytes, and reused only
for identical LLRs: ``<sha1>.npz`` (binary codes, decisions bit-packed) or
``nb-<sha1>.npz`` (GF(q) codes, symbols as they are), with iterations, flags and the
bad-LLR flags (a file from before these were kept gives none).
"""
import hashlib
import os

import numpy as np

import gpuldpc as gl
from gpuldpc.decoders.front import make_result


def cached(description, code, llr, compute):
    """``compute()`` (a DecodeResult for ``llr``), or its stored copy."""
    folder = os.environ.get("GPULDPC_REFERENCE_CACHE")
    if not folder:
        return compute()
    h = hashlib.sha1(repr((code.name, description)).encode())
    h.update(np.ascontiguousarray(llr, np.float32).tobytes())
    key = os.path.join(folder, ("" if code.is_binary else "nb-") + h.hexdigest() + ".npz")
    if os.path.exists(key):
        z = np.load(key)
        bits = np.unpackbits(z["bits"], axis=1, count=code.n) if code.is_binary else z["bits"]
        return make_result(code, bits, z["iterations"], z["valid"], z["bad_llr"] if "bad_llr" in z else None)
    res = compute()
    os.makedirs(folder, exist_ok=True)
    np.savez_compressed(key, bits=np.packbits(res.bits, axis=1) if code.is_binary else res.bits,
                        iterations=res.iterations, valid=res.valid, bad_llr=res.bad_llr)
    return res


def reference_decode(code, llr, **settings):
    """``gl.Decoder(code, backend="reference", **settings).decode(llr)``, cached."""
    return cached(sorted(settings.items()), code, llr,
                  lambda: gl.Decoder(code, backend="reference", **settings).decode(llr))
