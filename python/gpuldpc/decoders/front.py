"""The decoder front door: ``gl.Decoder(code, ...)``, the way in for every user.

One object checks every argument once, picks a backend and checks the shape and dtype
of every LLR array handed to ``decode``/``submit``; the backends (``reference``,
``cpu``, ``cuda``) receive validated settings and validated, contiguous arrays, and
make no second pass over them: non-finite LLRs are found where each backend loads them
(:mod:`gpuldpc.bad_llr`), and the decoder's ``on_bad_llr`` policy is applied to the
flags they return.

LLR convention (DESIGN.md): binary ``L = ln(P(bit=0)/P(bit=1))`` (positive means
0), shape [batch, n]; GF(q) ``L_n(a) = ln(P(x_n = s_n)/P(x_n = a)) >= 0`` with 0 at
the most likely symbol, shape [batch, n, q].  ``positive_llr_bit=1`` takes bit LLRs in
GNU Radio's sign (positive means 1, ``l = -L``): the binary GPU kernels apply it in
their load (a negative ``llr_scale``), every other path negates a copy on the host.

Backend interface (what ``make(code, settings)`` of a backend module returns):
``decode(llr, out) -> DecodeResult``; optionally ``submit(llr, out) -> handle`` and
``result(handle)`` (else :meth:`Decoder.submit` runs ``decode`` on a worker thread),
``llr_dtypes``, ``accepts_bit_llr``, ``applies_llr_sign`` (the backend honours
``settings.positive_llr_bit`` itself), ``pinned_llr``, ``preferred_batch``, ``close``;
GPU arrays (cuda): ``device_ids``, ``device_ordinal(pointer)``, and ``decode``/``submit``
taking a :class:`gpuldpc.device_arrays.DeviceLLR` and ``out_device=True``.

GPU-resident LLRs (issue 16): ``decode``/``submit`` take any object exposing DLPack or
``__cuda_array_interface__`` (CuPy, PyTorch, Numba, PyCUDA) where it lies, checked before
any launch (:mod:`gpuldpc.device_arrays`: dtype, shape, contiguity, device, alignment; the
producer-stream rule); their results stay on the GPU unless ``out_device=False`` or
``out=`` is given (:class:`gpuldpc.cuda.device_memory.DeviceArray`).

Soft output (issue 16, :mod:`gpuldpc.soft`): ``soft_output="posterior"`` (or
``"extrinsic"``) has the backend return its posteriors in ``DecodeResult.llr`` in the sign it
decoded in; the front door negates them back where it negated the input
(``positive_llr_bit=1`` for a backend that does not apply the sign) and subtracts the channel
for ``"extrinsic"``; ``soft_dtype="float16"`` converts what a backend returns in float32
(:func:`gpuldpc.soft.to_float16`; the cuda backend converts ``"posterior"`` on the GPU).

Packed int4 LLRs (``llr_dtype="int4"``, :mod:`gpuldpc.int4`): uint8 [batch, ceil(n/2)] on
every backend (``llr_width``: the columns a backend takes, else ``n``).
"""
from __future__ import annotations

import concurrent.futures
import importlib
import threading

import numpy as np

from .. import bad_llr, device_arrays, int4, memory_maps, packed_bits, soft
from ..codes.code import Code
from ..codes.shaping import ShapedCode, make_backend
from ..errors import BackendUnavailable
from ..result import DecodeResult, make_result  # noqa: F401  (re-exported: gpuldpc.decoders)
from ..settings import (BACKENDS, BINARY_ALGORITHMS, NB_ALGORITHMS, PRECISIONS, SCHEDULES,  # noqa: F401
                        Settings, check_choice)

# backend name -> module (inside gpuldpc.decoders) whose ``make(code, settings)``
# returns the backend object (see the module docstring).
_BACKEND_MODULES = {
    "reference": "gpuldpc.decoders.reference",
    "cpu": "gpuldpc.decoders.cpu",
    "cuda": "gpuldpc.decoders.cuda",
}
_MINMAX = ("minmax", "mmma")


def default_schedule(code: Code, algorithm: str, options: dict) -> str:
    """``schedule=None``: "layered", except GF(q) Min-Max with ``preset="latency"``:
    "flooding", the schedule of the one-frame GPU kernel (:mod:`gpuldpc.cuda.nb_frame`),
    the fastest path to a lone GF(q) frame (every backend then runs flooding, so all
    give the same numbers)."""
    if not code.is_binary and algorithm in _MINMAX and options.get("preset") == "latency":
        return "flooding"
    return "layered"


class Ticket:
    """A batch handed to :meth:`Decoder.submit`; :meth:`result` waits for its DecodeResult.

    Tickets are independent: collect them in any order, each gives its own frames in
    their input order.  The LLR array must stay unchanged until :meth:`result` returns
    (the GPU may read it where it lies)."""

    __slots__ = ("_decoder", "_handle", "_wait", "_result", "_llr")

    def __init__(self, decoder: "Decoder", handle, wait, llr=None):
        self._decoder, self._handle, self._wait, self._result = decoder, handle, wait, None
        self._llr = llr   # the LLRs handed to the backend, for soft_output="extrinsic"

    def result(self) -> DecodeResult:
        """The decoded batch (waits for it; raises what decoding raised, e.g. the
        ``on_bad_llr="raise"`` ValueError)."""
        if self._result is None:
            self._result = self._decoder._finish(self._wait(self._handle), self._llr)
            self._handle = self._llr = None
        return self._result


class Decoder:
    """LDPC decoder for one code; see DESIGN.md "Public API".

    Parameters
    ----------
    code : Code or ShapedCode
        From :mod:`gpuldpc.codes` (binary or GF(q)); a ShapedCode (``gl.codes.nr(k, e)``,
        ``gl.codes.shaped``) takes its ``n`` transmitted LLRs (in the backend's dtype: int8
        with the cuda option ``llr_dtype="int8"``, docs/nr.md) and decodes its mother code
        pruned of what carries nothing (``code.decoded``; ``bits``: the decisions at
        ``code.decoded_positions`` [batch, len(decoded_positions)]; ``info``: the ``k``
        information bits; ``valid``: the pruned code's syndrome;
        :mod:`gpuldpc.codes.shaping`).
    algorithm : str, optional
        Binary codes: ``"nms"`` (normalized min-sum, scale ``alpha``),
        ``"oms"`` (offset min-sum, offset ``beta``), ``"spa"`` (log-domain
        sum-product).  GF(q) codes: ``"minmax"``, ``"mmma"``, ``"tmm"`` (trellis Min-Max, check
        messages scaled by ``alpha``), ``"tmm1"`` (T-MM with step 5's pairs from first
        minima: faster, :mod:`gpuldpc.decoders.reference_tmm`), ``"fft-spa"``.
        Default ``"nms"`` / ``"minmax"``.
    schedule : {"layered", "flooding"} or None
        None: :func:`default_schedule` ("layered"; "flooding" for GF(q) Min-Max with
        ``preset="latency"``).
    max_iterations : int >= 1
    early_stop : bool
        Stop a frame as soon as its hard decisions satisfy every check.
    backend : {"auto", "cuda", "cpu", "reference"}
        ``auto`` takes ``cuda`` when a GPU and PyCUDA are usable, then ``cpu``
        when the compiled module is present, then ``reference``; ``backend``
        says which was taken.
    alpha, beta : float
        Min-sum scale (0 < alpha <= 1; also the scale of the GF(q) "tmm" and "tmm1" check messages) and
        offset (beta >= 0).
    precision : {"float32", "float16", "int16", "int8"}
        Message arithmetic, where the backend offers it: "float16" (binary min-sum,
        IEEE binary16 with clamps, :mod:`gpuldpc.decoders.reference_binary`) on
        ``cuda`` and ``reference`` (the same bits), where ``auto`` takes ``cuda`` or
        else ``reference``; "int16", "int8" on ``cpu``.
    threads : int or None
        Worker threads (cpu backend); None = all cores.
    on_bad_llr : {"raise", "erase"}
        Frames whose LLRs hold NaN or +-inf (:mod:`gpuldpc.bad_llr`): ``"raise"``
        ValueError naming them, after the decode; ``"erase"``: decoded with NaN as 0
        and +-inf saturated, marked in ``DecodeResult.bad_llr``.
    positive_llr_bit : {0, 1}
        Which bit a positive bit LLR means: 0 (default, ``L = ln P(0)/P(1)``) or 1 (GNU
        Radio's soft decoders and gr-fec).  GF(q) symbol LLRs have no sign and are taken
        as they are.
    soft_output : {None, "posterior", "extrinsic"}
        Soft output in ``DecodeResult.llr`` (:mod:`gpuldpc.soft`): None (default) none;
        ``"posterior"`` the posterior LLRs float32 [batch, n] (GF(q): normalised symbol
        costs [batch, n, q]) at each frame's stop, in the ``positive_llr_bit`` sign;
        ``"extrinsic"`` (binary codes) the posterior less the channel LLRs.  On
        ``reference``, ``cpu`` and the ``cuda`` binary throughput preset; elsewhere
        ValueError at construction.
    soft_dtype : {"float32", "float16"}
        The dtype of ``DecodeResult.llr``: "float16" is the float32 soft output clamped to
        +-65504 and rounded to nearest (:func:`gpuldpc.soft.to_float16`), on every backend;
        the cuda backend converts ``"posterior"`` on the GPU (2 bytes a bit over PCIe).
    packed : bool
        Binary codes: ``DecodeResult.bits`` uint8 [batch, ceil(n/8)] and ``info`` [batch,
        ceil(k/8)], packed eight to a byte in ``numpy.packbits`` order (:mod:`gpuldpc.packed_bits`):
        the cuda kernels store them so, an eighth of the bytes over PCIe; the host backends
        pack theirs.  Not with ``out_device=True``.
    **options
        Backend-specific options (e.g. ``devices``, ``streams``, ``preset``), and on every
        backend for binary unshaped codes ``llr_dtype="int4"`` with ``llr_scale`` (default
        1.0): packed int4 LLRs uint8 [batch, ceil(n/2)], two 4-bit values -7..7 a byte (low
        nibble: the even position), LLR = value * ``llr_scale`` (:mod:`gpuldpc.int4`,
        ``gl.pack_int4``).
    """

    def __init__(self, code: Code, algorithm: str | None = None, schedule: str | None = None,
                 max_iterations: int = 10, early_stop: bool = True, backend: str = "auto",
                 alpha: float = 0.75, beta: float = 0.5, precision: str = "float32",
                 threads: int | None = None, on_bad_llr: str = "raise", positive_llr_bit: int = 0,
                 soft_output: str | None = None, soft_dtype: str = "float32", packed: bool = False, **options):
        if not isinstance(code, (Code, ShapedCode)):
            raise TypeError(f"code must be a gpuldpc Code (gl.codes.get(...)) or ShapedCode (gl.codes.nr(...)), "
                            f"got {type(code).__name__}")
        algorithms = BINARY_ALGORITHMS if code.is_binary else NB_ALGORITHMS
        if algorithm is None:
            algorithm = algorithms[0]
        check_choice("algorithm", algorithm, algorithms)
        if schedule is None:
            schedule = default_schedule(code, algorithm, options)
        check_choice("schedule", schedule, SCHEDULES)
        check_choice("backend", backend, BACKENDS)
        check_choice("precision", precision, PRECISIONS)
        check_choice("on_bad_llr", on_bad_llr, bad_llr.POLICIES)
        if isinstance(max_iterations, bool) or not isinstance(max_iterations, (int, np.integer)) \
                or max_iterations < 1:
            raise ValueError(f"max_iterations must be an integer >= 1, got {max_iterations!r}")
        if not 0.0 < float(alpha) <= 1.0:
            raise ValueError(f"alpha must lie in (0, 1], got {alpha!r}")
        if not float(beta) >= 0.0:
            raise ValueError(f"beta must be >= 0, got {beta!r}")
        if threads is not None and (not isinstance(threads, (int, np.integer)) or threads < 1):
            raise ValueError(f"threads must be None or an integer >= 1, got {threads!r}")
        if positive_llr_bit not in (0, 1) or isinstance(positive_llr_bit, bool):
            raise ValueError(f"positive_llr_bit must be 0 (L = ln P(0)/P(1)) or 1 (GNU Radio: "
                             f"positive LLR = bit 1), got {positive_llr_bit!r}")
        soft.check(code, soft_output, isinstance(code, ShapedCode), soft_dtype)
        int4.check(code, options, isinstance(code, ShapedCode))
        packed = packed_bits.check(code, packed)
        self.code = code
        self.settings = Settings(algorithm, schedule, int(max_iterations), bool(early_stop),
                                 float(alpha), float(beta), precision, threads, dict(options), on_bad_llr,
                                 int(positive_llr_bit), soft_output, soft_dtype, packed)
        self.backend, self._impl = self._make_backend(backend)
        self._raise = on_bad_llr == "raise"
        self._dtypes = tuple(np.dtype(d) for d in getattr(self._impl, "llr_dtypes", (np.float32,)))
        # the dtype other floating-point input becomes: float32 where the backend takes it, else its
        # float dtype (cuda llr_dtype="float16"); None: it takes no float (llr_dtype="int8")
        self._float_to = next((d for d in sorted(self._dtypes, key=lambda d: d != np.float32) if d.kind == "f"),
                              None)
        self._shapes = ((getattr(self._impl, "llr_width", code.n),),) if code.is_binary else ((code.n, code.q), (code.n * code.bits_per_symbol,))
        self._bit_llr_on_host = not code.is_binary and not getattr(self._impl, "accepts_bit_llr", False)
        self._negate = positive_llr_bit == 1 and not getattr(self._impl, "applies_llr_sign", False)
        self._soft = soft_output is not None
        self._extrinsic = soft_output == "extrinsic"
        self._soft_half = soft_dtype == "float16"
        self._int4 = int4.requested(options)
        self._worker = None
        self._worker_lock = threading.Lock()

    def _make_backend(self, backend):
        order = ("cuda", "cpu", "reference") if backend == "auto" else (backend,)
        errors = []
        for name in order:
            try:
                module = importlib.import_module(_BACKEND_MODULES[name])
                # A ShapedCode (punctured/shortened/repeated, e.g. 5G NR) decodes on its pruned mother
                # code behind codes.shaping.ShapedBackend: LLRs [batch, n] in, info without
                # shortened bits out.  Plain codes go to module.make as they are.
                return name, make_backend(module, self.code, self.settings)
            except (ImportError, BackendUnavailable) as exc:
                if backend != "auto":
                    raise BackendUnavailable(f"backend {name!r} is not usable here: {exc}") from exc
                errors.append(f"{name}: {exc}")
        raise BackendUnavailable("no decoder backend is usable: " + "; ".join(errors))

    @property
    def algorithm(self) -> str:
        return self.settings.algorithm

    @property
    def schedule(self) -> str:
        return self.settings.schedule

    @property
    def max_iterations(self) -> int:
        return self.settings.max_iterations

    @property
    def on_bad_llr(self) -> str:
        return self.settings.on_bad_llr

    def check_llr(self, llr) -> np.ndarray:
        """Validate an LLR array; return it C-contiguous, shape [batch, ...].

        Binary codes: [batch, n].  GF(q) codes: symbol LLRs [batch, n, q], or the
        bit LLRs of the binary image [batch, n*m] (m = log2 q, bit order of
        :mod:`gpuldpc.gf`), which the cuda backend converts on the GPU.
        The backend's dtypes (``llr_dtypes``: float32; for cuda the one ``llr_dtype``
        names, float16 or int8; a shaped code takes its backend's) are taken as they are;
        other floating-point input becomes float32 (float16 where that is the backend's
        only float dtype); a backend that takes int8 only refuses floats (quantizing needs
        the decoder's ``llr_scale``), and integers go only to a backend that takes them.
        No pass over the values (see :mod:`gpuldpc.bad_llr`), except the negating copy of
        ``positive_llr_bit=1`` for a backend that does not apply the sign itself (int8:
        -128 becomes +127).

        A GPU array (DLPack or ``__cuda_array_interface__``) gives a checked
        :class:`gpuldpc.device_arrays.DeviceLLR` instead: the backend's dtype exactly (no
        conversion on the GPU), the same shapes, C-contiguous, on one of the decoder's GPUs,
        16-byte aligned (cuda backend only).
        """
        if type(llr) is not np.ndarray:
            view = llr if isinstance(llr, device_arrays.DeviceLLR) else device_arrays.view(llr)
            if view is not None:
                return self._check_device_llr(view)
        arr = llr if type(llr) is np.ndarray else np.asarray(llr)
        accepted = self._dtypes
        if arr.dtype not in accepted and (arr.dtype.kind != "f" or self._float_to is None):
            self._refuse(arr.dtype)
        shapes = self._shapes
        if arr.shape in shapes:
            arr = arr[None]
        if arr.ndim < 2 or arr.shape[1:] not in shapes:
            wanted = " or ".join("[batch, " + ", ".join(map(str, s)) + "]" for s in shapes)
            packed = " (llr_dtype='int4': ceil(n/2) bytes a frame, gl.pack_int4)" if self._int4 else ""
            raise ValueError(f"code {self.code.name!r}: LLRs must have shape {wanted}{packed}, "
                             f"got {tuple(np.shape(llr))}")
        if self._negate and arr.ndim == 2:
            if arr.dtype.kind == "i":                  # -(-128) would wrap to -128
                return np.negative(np.maximum(arr, -np.iinfo(arr.dtype).max))
            return np.negative(arr, dtype=arr.dtype if arr.dtype in accepted else self._float_to)
        if arr.dtype not in accepted:
            return np.ascontiguousarray(arr, dtype=self._float_to)
        return arr if arr.flags.c_contiguous else np.ascontiguousarray(arr)

    def _refuse(self, dtype):
        """TypeError for LLRs of a dtype this decoder's backend does not take, saying which to use."""
        names = ", ".join(map(str, self._dtypes))
        if self._int4:
            raise TypeError(f"this decoder takes packed int4 LLRs (llr_dtype='int4'): uint8 [batch, ceil(n/2)], "
                            f"two 4-bit values a byte, got dtype {dtype}: make them with "
                            f"gl.pack_int4(llr, llr_scale={self.settings.options.get('llr_scale', 1.0)!r})")
        if self._float_to is None:
            raise TypeError(f"backend {self.backend!r} takes {names} LLRs here (llr_dtype={names!r}), got {dtype}: "
                            f"quantize them with the decoder's llr_scale, e.g. np.clip(np.round(llr / llr_scale), "
                            f"-127, 127).astype(np.int8), or build it with llr_dtype='float32'")
        hint = ("; int8 LLRs are taken by backend='cuda' with llr_dtype='int8' (the cpu backend's "
                "precision='int8' quantizes float32 LLRs itself, with llr_scale)" if dtype.kind in "iu" else "")
        raise TypeError(f"LLRs must be floating point ({names} for backend {self.backend!r}), got dtype {dtype}{hint}")

    def decode(self, llr, out: np.ndarray | None = None, *, out_device: bool | None = None) -> DecodeResult:
        """Decode a batch of frames; see the class docstring for the conventions.

        ``llr``: a host array, or a GPU array (CuPy, PyTorch CUDA tensor, Numba, PyCUDA
        ``GPUArray``: anything exposing DLPack or ``__cuda_array_interface__``) on one of the
        decoder's GPUs, read where it lies (cuda backend; :mod:`gpuldpc.device_arrays`:
        exactly the decoder's LLR dtype -- float32, or ``llr_dtype`` --, C-contiguous, and the
        rule for the stream the producer wrote on).  The batch then runs on that GPU.

        ``out`` (optional): a C-contiguous uint8 host array [batch, n] (a shaped code:
        [batch, len(code.decoded_positions)]; ``packed=True``: ceil of those over 8) that
        receives the hard decisions (``DecodeResult.bits`` is then ``out``).

        ``out_device``: None (default) keeps the results where the LLRs were: on the GPU for
        a GPU array (unless ``out`` is given), on the host for a host array; True or False
        chooses.  On the GPU, ``bits``, ``info`` (a view of ``bits``; None for a code whose
        information positions are not the first k) and ``iterations`` are
        :class:`gpuldpc.cuda.device_memory.DeviceArray` objects (``cupy.asarray(x)``,
        ``torch.as_tensor(x, device="cuda")`` wrap them without a copy); ``valid`` and
        ``bad_llr`` are NumPy arrays (one flag byte a frame is copied to the host, for the
        ``on_bad_llr`` policy and the caller's frame counts).  Not for shaped codes or
        ``packed=True``.
        """
        arr = self.check_llr(llr)
        if (out_device is not None or type(arr) is not np.ndarray) and self._wants_device(arr, out, out_device):
            return self._finish(self._impl.decode(arr, out, out_device=True))
        if self._bit_llr_on_host and arr.ndim == 2:
            return self._decode_bits_on_host(arr, out)
        return self._finish(self._impl.decode(arr, out), arr)

    def submit(self, llr, out: np.ndarray | None = None, *, out_device: bool | None = None) -> Ticket:
        """Hand a batch over and return at once: ``submit(llr).result() == decode(llr)``.

        A producer overlaps with decoding: while the backend decodes one batch, the caller
        prepares the next (several tickets may be outstanding).  ``llr`` (host or GPU array,
        as :meth:`decode`) must stay unchanged until the ticket's ``result()`` returns.
        """
        arr = self.check_llr(llr)
        own = getattr(self._impl, "submit", None)
        if self._wants_device(arr, out, out_device):
            return Ticket(self, own(arr, out, out_device=True), self._impl.result)
        keep = arr if self._extrinsic else None
        if own is not None and not (self._bit_llr_on_host and arr.ndim == 2):
            return Ticket(self, own(arr, out), self._impl.result, keep)
        with self._worker_lock:
            if self._worker is None:
                self._worker = concurrent.futures.ThreadPoolExecutor(1, "gpuldpc-decode")
        run = self._decode_bits_on_host if self._bit_llr_on_host and arr.ndim == 2 else self._impl.decode
        return Ticket(self, self._worker.submit(run, arr, out), concurrent.futures.Future.result, keep)

    def _device_backend(self, what: str):
        """TypeError unless the backend takes GPU arrays (cuda; a shaped code where the GPU recovers
        its E LLRs)."""
        if getattr(self._impl, "device_ids", None) is not None:
            return
        if isinstance(self.code, ShapedCode):
            raise TypeError(f"code {self.code.name!r}: {what} takes no shaped code on this decoder (its E LLRs "
                            "are recovered on the host: GPU arrays need the cuda backend's GPU recovery, not "
                            "the latency preset's resident kernel); hand host arrays to decode()")
        raise TypeError(f"{what} needs the cuda backend; this decoder runs on {self.backend!r}: hand host "
                        "arrays to decode() (cupy.asnumpy(x), tensor.cpu().numpy())")

    def _check_device_llr(self, view: device_arrays.DeviceLLR) -> device_arrays.DeviceLLR:
        self._device_backend("a GPU array of LLRs")
        impl = self._impl
        view = device_arrays.check(view, self.code.name, self._shapes, self._dtypes, impl.device_ids,
                                   impl.device_ordinal)
        if self._negate and len(view.shape) == 2:      # bit LLRs [batch, n] (GF(q) symbol LLRs are not negated)
            raise ValueError(f"code {self.code.name!r}: positive_llr_bit=1 negates a host copy of the bit LLRs "
                             "for this decoder, which a GPU array does not get: negate it on the GPU (-x) and "
                             "decode with positive_llr_bit=0, or hand a host array")
        return view

    def _wants_device(self, arr, out, out_device) -> bool:
        """Results on the GPU? (``out_device``, see :meth:`decode`.)  Soft output: host results
        (ValueError for results on the GPU; GPU LLRs with ``"extrinsic"``)."""
        on_gpu = isinstance(arr, device_arrays.DeviceLLR)
        if out_device is None:
            out_device = on_gpu and out is None
        if out_device:
            self._device_backend("out_device=True")
        if self._soft and (out_device or (on_gpu and self._extrinsic)):
            raise ValueError(f"soft_output={self.settings.soft_output!r} returns host arrays"
                             + (" and subtracts host LLRs: hand host arrays to decode()" if not out_device
                                else ": pass out_device=False"))
        return bool(out_device)

    def _finish(self, res: DecodeResult, arr=None) -> DecodeResult:
        """The ``on_bad_llr`` policy on a backend's result; the soft output in the caller's sign
        (``arr``: the LLRs the backend decoded, for ``"extrinsic"``)."""
        if self._raise and 1 in res.bad_llr.tobytes():      # bool flags: memchr, 1/7 of np.count_nonzero
            bad_llr.check(self.code.name, res.bad_llr)
        if self._soft and res.llr is not None:
            llr = res.llr
            if self.code.is_binary and self._extrinsic:
                llr = soft.extrinsic(llr, arr, getattr(self._impl, "llr_unit", 1.0))
            if self.code.is_binary and self._negate:
                llr = np.negative(llr, out=llr)
            if self._soft_half and llr.dtype != np.float16:
                llr = soft.to_float16(llr)
            res = res._replace(llr=llr)
        return res

    def _decode_bits_on_host(self, arr, out):
        """GF(q) bit LLRs for a backend that takes symbol LLRs: the bad-LLR rule on the bits
        (as the GPU applies it), then the conversion of :func:`gpuldpc.channel.bit_llr_to_symbol_llr`."""
        from ..channel import bit_llr_to_symbol_llr

        clean, bad = bad_llr.sanitized(arr)
        res = self._impl.decode(bit_llr_to_symbol_llr(clean, self.code.q), out)
        return self._finish(res._replace(bad_llr=res.bad_llr | bad))

    def decode_device(self, llr, frames: int, out_device: bool = False) -> DecodeResult:
        """:meth:`decode` of a raw device pointer (a thin wrapper; objects exposing DLPack or
        ``__cuda_array_interface__`` go to :meth:`decode` directly).

        ``llr``: a device allocation (PyCUDA ``DeviceAllocation`` or an integer device
        pointer) on one of the decoder's GPUs holding the frames one after the other:
        [frames, n] of the backend's LLR dtype for binary codes, symbol LLRs float32
        [frames, n, q] for GF(q) codes.  No copy in (the values never visit the host): for
        pipelines whose LLRs are made on the GPU, such as the simulator's noise
        (:mod:`gpuldpc.sim.gpu_channel`).  Results on the host unless ``out_device``.
        """
        self._device_backend("decode_device")
        view = device_arrays.from_pointer(int(llr), frames, self._shapes[0], self._dtypes[0], llr)
        return self.decode(view, out_device=out_device)

    def pinned_llr(self, frames: int, bit_llr: bool = False) -> np.ndarray:
        """An LLR array [frames, ...] that ``decode`` takes without staging it.

        Page-locked memory for the cuda backend (copied to the GPU as is);
        ordinary memory for the others.  GF(q) codes: symbol LLRs [frames, n, q], or
        with ``bit_llr=True`` bit LLRs [frames, n*m].
        """
        own = getattr(self._impl, "pinned_llr", None)
        if own is not None:
            return own(frames) if self.code.is_binary else own(frames, "bits" if bit_llr else "symbols")
        tail = ((self.code.n,) if self.code.is_binary else
                (self.code.n * self.code.bits_per_symbol,) if bit_llr else (self.code.n, self.code.q))
        return np.empty((frames,) + tail, np.float32)

    def page_lock(self, buffer) -> int:
        """Page-lock ``buffer``'s memory where it lies (``cuMemHostRegister``) until
        :meth:`page_unlock` or :meth:`close`: batches handed in from inside it are then
        copied to the GPU by DMA from where they lie instead of being staged through
        page-locked memory of the decoder's (docs/gpu.md "Input").

        For memory NumPy does not own that comes back call after call: GNU Radio's stream
        buffers (the decoder blocks lock the double map their input lies in,
        :mod:`gpuldpc.memory_maps`), a ring that C code fills.  A NumPy array handed in a
        second time is locked without asking.  The caller keeps other memory mapped until it
        is unlocked (an array NumPy owns is unlocked when NumPy frees it).  ``buffer``: a
        non-empty C-contiguous array or buffer object, else ``ValueError``.  Returns the
        bytes locked: 0 where the backend copies nothing to a GPU (cpu, reference; a latency
        plan, whose kernels read host memory themselves) or the driver refuses the range
        (batches in it are staged, as before)."""
        memory_maps.byte_range(buffer)
        own = getattr(self._impl, "page_lock", None)
        return int(own(buffer)) if own is not None else 0

    def page_unlock(self, buffer=None):
        """Undo :meth:`page_lock` of ``buffer`` (of every buffer when None) once the copies
        queued so far are done; :meth:`close` does it too."""
        own = getattr(self._impl, "page_unlock", None)
        if own is not None:
            own(buffer)

    def preferred_batch(self, preset: str = "throughput") -> int:
        """Frames per ``decode`` call that keep the backend busy.

        ``latency``: the smallest batch that fills the backend once (one GPU wave,
        one SIMD chunk, or one frame per thread on the cpu intra-frame path);
        ``throughput``: enough to overlap copies and kernels
        over all streams (or all threads).
        """
        check_choice("preset", preset, ("latency", "throughput"))
        own = getattr(self._impl, "preferred_batch", None)
        return int(own(preset)) if own is not None else (1 if preset == "latency" else 64)

    def close(self):
        """Release the backend's resources (worker thread, GPU buffers and resident kernels)."""
        if self._worker is not None:
            self._worker.shutdown()
            self._worker = None
        own = getattr(self._impl, "close", None)
        if own is not None:
            own()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        s = self.settings
        return (f"Decoder({self.code.name!r}, algorithm={s.algorithm!r}, schedule={s.schedule!r}, "
                f"max_iterations={s.max_iterations}, early_stop={s.early_stop}, "
                f"backend={self.backend!r}, on_bad_llr={s.on_bad_llr!r}, "
                f"positive_llr_bit={s.positive_llr_bit})")
