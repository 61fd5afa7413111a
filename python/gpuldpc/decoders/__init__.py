"""Decoders: the ``Decoder`` front door and its backends.

Backends: ``reference`` (numpy, :mod:`.reference`), ``cpu`` (C++ ``gpuldpc._core``,
:mod:`.cpu`), ``cuda`` (PyCUDA, :mod:`.cuda` over :mod:`gpuldpc.cuda`).
"""
from ..errors import BackendUnavailable  # noqa: F401
from ..result import DecodeResult, make_result  # noqa: F401
from ..settings import Settings  # noqa: F401
from .front import Decoder, Ticket  # noqa: F401
