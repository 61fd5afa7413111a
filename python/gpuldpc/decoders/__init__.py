"""Decoders: the ``Decoder`` front door and its backends.

Backends: ``reference`` (numpy, :mod:`.reference`), ``cpu`` (C++ ``gpuldpc._core``,
:mod:`.cpu`), ``cuda`` (PyCUDA, :mod:`.cuda` over :mod:`gpuldpc.cuda`).
"""
from .front import (BackendUnavailable, DecodeResult, Decoder, Settings,  # noqa: F401
                    make_result)
