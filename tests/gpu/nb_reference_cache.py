"""Reference results of the GF(q) GPU tests, kept on disk between runs.

The numpy references are slow on GF(64..256) codes; when ``GPULDPC_REFERENCE_CACHE``
names a folder, a result is stored there as ``nb-<sha1>.npz`` keyed by the decoder's
description and the SHA-1 of the float32 LLR bytes, and reused only for identical
LLRs.  Symbols are stored as they are (conftest's cache packs binary decisions).
"""
import hashlib
import os

import numpy as np

import gpuldpc as gl


def cached(description, code, llr, compute):
    """``compute()`` (a DecodeResult for ``llr``), or its stored copy."""
    folder = os.environ.get("GPULDPC_REFERENCE_CACHE")
    if not folder:
        return compute()
    h = hashlib.sha1(repr((code.name, description)).encode())
    h.update(np.ascontiguousarray(llr, np.float32).tobytes())
    key = os.path.join(folder, "nb-" + h.hexdigest() + ".npz")
    if os.path.exists(key):
        z = np.load(key)
        return gl.decoders.DecodeResult(z["bits"], z["bits"][:, :code.k], z["iterations"], z["valid"])
    res = compute()
    os.makedirs(folder, exist_ok=True)
    np.savez_compressed(key, bits=res.bits, iterations=res.iterations, valid=res.valid)
    return res
