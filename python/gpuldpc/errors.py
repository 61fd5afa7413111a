"""The exceptions every layer of gpuldpc shares (a leaf module: it imports nothing).

* :class:`CodeError` -- a code description is inconsistent (raised where a code is
  built or encoded, :mod:`gpuldpc.codes`, :mod:`gpuldpc.encode`);
* :class:`BackendUnavailable` -- a decoder backend cannot run here (no GPU, no PyCUDA,
  no compiled module, a setting the backend does not offer); ``gl.Decoder(...,
  backend="auto")`` catches it and moves on to the next backend;
* :class:`BackendFault` -- a backend failed while decoding (a CUDA launch failure, a
  lost device, device memory exhausted): the batch has no result, the decoder should
  not be used again; a stream (:mod:`gpuldpc.streaming`) moves to the CPU backend.
"""


class CodeError(ValueError):
    """A code description is inconsistent (raised at construction)."""


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here (no GPU, no compiled module)."""


class BackendFault(RuntimeError):
    """A backend failed while decoding (device error, launch failure, out of memory)."""
