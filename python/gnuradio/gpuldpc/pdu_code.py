"""PDUs of one of several codes, for the PDU blocks: the ``ldpc_code`` entry of their metadata
(:mod:`gpuldpc.code_switch`) and their frames."""
from __future__ import annotations

import numpy as np
import pmt

from gpuldpc.code_switch import KEY

_KEY = pmt.intern(KEY)
_VECTORS = {"f32vector": (pmt.is_f32vector, pmt.f32vector_elements, np.float32),
            "u8vector": (pmt.is_u8vector, pmt.u8vector_elements, np.uint8)}


def code_key(meta):
    """The metadata's ``ldpc_code`` as Python (a symbol or string: str; an integer: int; other
    values as ``pmt.to_python`` gives them), or None when the entry is absent or nil."""
    value = pmt.dict_ref(meta, _KEY, pmt.PMT_NIL)
    return None if pmt.is_null(value) else pmt.to_python(value)


def with_code(meta, name: str):
    """``meta`` with ``ldpc_code`` set to the symbol ``name``."""
    return pmt.dict_add(meta, _KEY, pmt.intern(name))


def split_pdu(msg, switch, vector: str):
    """``(meta, name, worker, frames)`` of a PDU for ``switch`` (a
    :class:`gpuldpc.code_switch.CodeSwitch` of workers with ``vlen_in`` and ``code``): the
    metadata (a dict), the code its ``ldpc_code`` names and that code's worker, and the PDU's
    ``vector`` ("f32vector" or "u8vector") as whole frames [count, vlen_in].  ValueError with
    the reason for a PDU to reject: not a (metadata, ``vector``) pair, no or an unknown code,
    a length that is not a positive multiple of the code's frame length."""
    is_vector, elements, dtype = _VECTORS[vector]
    if not pmt.is_pair(msg) or not is_vector(pmt.cdr(msg)):
        raise ValueError(f"expected a PDU (metadata, {vector})")
    meta = pmt.car(msg)
    if not pmt.is_dict(meta):
        meta = pmt.make_dict()
    name, worker = switch.select(code_key(meta))
    values = np.array(elements(pmt.cdr(msg)), dtype=dtype)
    if values.size == 0 or values.size % worker.vlen_in:
        raise ValueError(f"length {values.size} is not a positive multiple of the frame length {worker.vlen_in} "
                         f"of code {worker.code.name!r}")
    return meta, name, worker, values.reshape(-1, worker.vlen_in)
