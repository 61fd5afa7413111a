"""PyCUDA side of gpuldpc: device contexts, pinned buffers, streams, tuning, kernels.

::

    from gpuldpc.cuda import CudaDecoder
    dec = CudaDecoder(gl.codes.get("wimax-2304-1/2"), max_iterations=10, early_stop=False)
    llr = dec.pinned_llr(65536)            # page-locked: copied to the GPU as is
    res = dec.decode(llr)                  # DecodeResult(bits, info, iterations, valid)
    t = dec.submit(llr); ...; res = dec.result(t)   # overlap host work with decoding

Modules: :mod:`.driver` (PyCUDA import, devices, kernel modules), :mod:`.context`
(retained primary context per device), :mod:`.host_memory` (page-locked buffers, the
result pool, caller arrays registered in place, staging threads), :mod:`.layout` (QC
code -> kernel tables), :mod:`.tuning` (launch shapes, presets), :mod:`.engine`
(streams, batches, several GPUs: shared by both decoders; :mod:`.graphs`, its latency calls
replayed as CUDA graphs), :mod:`.decoder` (binary
kernels' choice and plan), :mod:`.nb_decoder` (GF(q)).  This package imports nothing
from :mod:`gpuldpc.decoders`: ``gl.Decoder(code, backend="cuda")`` reaches it through
:mod:`gpuldpc.decoders.cuda`, the way in for every user; the classes here are what that
backend builds on (and what benchmarks time, labelled as such).  Importing this package needs no GPU;
using it without one raises :class:`~gpuldpc.errors.BackendUnavailable`.
"""
from .context import CudaError, DeviceContext  # noqa: F401
from .decoder import CudaDecoder, kernel_name  # noqa: F401
from .driver import device_ids, driver  # noqa: F401
from .engine import DeviceInput, GpuDecoder, Ticket  # noqa: F401
from .host_memory import is_pinned, pinned_empty  # noqa: F401
from .layout import NotQuasiCyclic, QcLayout, qc_layout  # noqa: F401
from .tuning import PRESETS, DeviceLimits, KernelAttributes, LaunchShape, launch_shape  # noqa: F401


def available() -> bool:
    """True when PyCUDA imports and at least one CUDA device is usable."""
    from ..errors import BackendUnavailable

    try:
        driver()
    except BackendUnavailable:
        return False
    return True
