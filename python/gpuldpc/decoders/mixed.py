"""Frames of several codes in one call: ``gl.MixedDecoder(codes=[...]).decode(llrs, code_index)``.

Adaptive and variable coding (DVB-S2 ACM/VCM, 5G NR with many UEs, CCSDS with several rates)
sends frames of different codes, rates and lifting sizes in one stream.  A MixedDecoder holds
one :class:`gpuldpc.Decoder` per code (same options; each keeps its tables resident on the
GPU and its own buffers) and decodes a batch whose frame ``i`` belongs to code
``code_index[i]``.

On the cuda backend (every decoder on it, no soft output, no shaped code) the rows never
pass through a host copy: :class:`gpuldpc.cuda.mixed_pipeline.MixedPipeline` copies the
caller's batch to the GPU as it lies, piece by piece in input order, gathers each code's
rows there (kernels/mixed_rows.cu), queues each code's decoding kernels on them (the
decoders' plans, on the pipeline's streams) and scatters the results into input order on
the GPU before one copy back.  Elsewhere (the reference and cpu backends, soft output, shaped codes) the frames are
grouped on the host:

1. every argument is checked before anything is decoded (code indices, row lengths, dtype;
   both paths);
2. the frames are grouped by code (a stable sort of ``code_index``: each group in input
   order);
3. each group, in *pieces* of at most ``piece_frames`` frames, is gathered row by row straight
   into its decoder's input, ``Decoder.pinned_llr`` (page-locked memory the cuda backend copies
   to the GPU as it lies; :func:`gpuldpc.row_copy.gather_rows`: one pass over memory, split
   over threads), and handed over with ``Decoder.submit``, so the GPU decodes one piece while
   the host gathers the next and the groups' copies and launches overlap on their streams;
4. the results are collected piece by piece and scattered back into input order
   (:func:`gpuldpc.row_copy.scatter_rows`) into arrays padded to the widest code
   (:class:`gpuldpc.mixed_result.MixedDecodeResult`).

Each frame is decoded by its own code's decoder with its own early stop, so the result is bit
for bit what ``gl.Decoder(code).decode`` gives for the same frames code by code.  What the host
grouping costs beside that: the gather (a host copy of the LLRs, 4 bytes a bit for float32, 1
for int8) and the scatter of the bits; the cuda path adds only the padding of the narrower
codes' rows to what crosses PCIe, and two memory-bound kernels (docs/mixed.md).

Non-finite LLRs (:mod:`gpuldpc.bad_llr`): the decoders flag the frames; ``on_bad_llr="raise"``
then raises a ValueError naming them by their position in the caller's batch, ``"erase"``
returns them marked in ``bad_llr``.

GF(q) codes take the bit LLRs of their binary image, ``n*m`` a frame (``m = log2 q``); their
``bits`` are symbols.  Soft output is offered for binary codes only.
"""
from __future__ import annotations

import threading

import numpy as np

from .. import bad_llr, device_arrays
from ..codes import get as get_code
from ..codes.shaping import ShapedCode
from ..mixed_result import MixedDecodeResult
from ..result import info_index
from ..row_copy import gather_rows, scatter_rows
from ..settings import check_choice
from .front import Decoder


def _input_width(code) -> int:
    """LLRs a frame of ``code`` takes in a row: ``n`` (a shaped code: its ``n`` = E
    transmitted LLRs), GF(q): the ``n*m`` bit LLRs of its binary image."""
    return code.n if code.is_binary else code.n * code.bits_per_symbol


def _bits_width(code) -> int:
    """Width of ``code``'s ``DecodeResult.bits`` rows."""
    return len(code.decoded_positions) if isinstance(code, ShapedCode) else code.n


class MixedDecoder:
    """Decode frames of several codes in one call; see the module docstring.

    Parameters
    ----------
    codes : sequence of Code, ShapedCode or str
        The codes (``gl.codes.get`` names or code objects; distinct names), binary or GF(q);
        ``code_index`` values point into this list.
    on_bad_llr : {"raise", "erase"}
        As :class:`gpuldpc.Decoder`; ``"raise"`` names the frames by their input position.
    piece_frames : int or None
        Host grouping: frames per ``submit`` of a group (groups larger are split); None
        takes, per code, an eighth of ``Decoder.preferred_batch("throughput")`` (on the GPU:
        two stream launches of the throughput preset, four waves, so the first piece is
        decoding while the next is gathered, and the pieces in flight keep every stream
        fed), at least ``preferred_batch("latency")``.  Cuda path: frames of the caller's
        batch per piece (copied in, gathered, decoded, scattered and copied out while other
        pieces are); None takes the largest of those per-code values, halved for binary16
        messages (``precision="float16"``, whose preferred batch is doubled by their two frames
        a thread: H100, the issue's mix of 50 000 int8 frames, 20.4 Gb/s with pieces of 5280
        against 17.6 with 10560).
    **options
        Handed to every :class:`gpuldpc.Decoder` as they are (``algorithm``, ``schedule``,
        ``max_iterations``, ``early_stop``, ``backend``, ``precision``, ``positive_llr_bit``,
        ``soft_output``, ``llr_dtype``, ``devices``, ...).

    Attributes
    ----------
    codes : tuple of the codes;  decoders : tuple of gl.Decoder, one per code;
    backends : tuple of their backends' names;  piece_frames : tuple, per code (host
    grouping), or int (the cuda path);  on_gpu : whether the cuda path runs.
    """

    def __init__(self, codes, *, on_bad_llr: str = "raise", piece_frames: int | None = None, **options):
        if isinstance(codes, (str, bytes)) or not hasattr(codes, "__len__") or len(codes) == 0:
            raise ValueError(f"codes must be a non-empty list of codes or code names, got {codes!r}")
        codes = tuple(get_code(c) if isinstance(c, str) else c for c in codes)
        names = [getattr(c, "name", None) for c in codes]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"codes: {twice} given more than once; each code once (code_index points into the list)")
        check_choice("on_bad_llr", on_bad_llr, bad_llr.POLICIES)
        if piece_frames is not None and (isinstance(piece_frames, bool) or not isinstance(piece_frames, (int, np.integer))
                                         or piece_frames < 1):
            raise ValueError(f"piece_frames must be None or an integer >= 1, got {piece_frames!r}")
        if options.get("soft_output") is not None and not all(c.is_binary for c in codes):
            raise ValueError("soft_output with GF(q) codes among the codes: a MixedDecoder gives soft output for "
                             "binary codes only (a GF(q) frame's are [n, q] symbol costs); decode them with gl.Decoder")
        if options.get("packed"):
            raise ValueError("packed=True: a MixedDecoder returns unpacked bits (its rows are padded per frame)")
        self.codes = codes
        self.on_bad_llr = on_bad_llr
        self._buffers: list[np.ndarray | None] = [None] * len(codes)
        built: list[Decoder] = []
        try:
            for code in codes:
                built.append(Decoder(code, on_bad_llr="erase", **options))
        except BaseException:
            for dec in built:
                dec.close()
            raise
        self.decoders = tuple(built)
        self.backends = tuple(d.backend for d in self.decoders)
        self._soft = options.get("soft_output") is not None
        self._in_width = np.array([_input_width(c) for c in codes], np.int64)
        self._widths = (np.array([_bits_width(c) for c in codes], np.int32), np.array([c.k for c in codes], np.int32))
        self._info = tuple(info_index(c) for c in codes)
        self._pieces = tuple(piece_frames or max(d.preferred_batch("latency"), d.preferred_batch("throughput") // 8)
                             for d in self.decoders)
        self._lock = threading.Lock()
        self._pipeline = None
        if _gathers_on_gpu(codes, self.backends, options):
            from ..cuda.mixed_pipeline import MixedPipeline

            piece = piece_frames or max(1, max(self._pieces) // (2 if options.get("precision") == "float16" else 1))
            try:
                impls = [d._impl for d in self.decoders]      # the cuda backends (gpuldpc.decoders.cuda)
                kinds = ["llr" if c.is_binary else "bits" for c in codes]     # GF(q): bit LLRs
                self._pipeline = MixedPipeline([i.plan_on() for i in impls], kinds,
                                               self._in_width, self._widths[0], piece,
                                               impls[0].device_ids[0], [c.name for c in codes])
            except BaseException:
                self.close()
                raise

    @property
    def on_gpu(self) -> bool:
        """Whether the rows are gathered and scattered on the GPU (the cuda path)."""
        return self._pipeline is not None

    @property
    def piece_frames(self) -> tuple | int:
        """Host grouping: frames per ``submit`` of each code's group (a tuple); the cuda path:
        frames of the caller's batch per piece (the ``piece_frames`` argument, or the
        default)."""
        return self._pieces if self._pipeline is None else self._pipeline.piece

    # ------------------------------------------------------------------ checks
    def _check_index(self, code_index) -> np.ndarray:
        idx = np.asarray(code_index)
        if idx.ndim == 1 and idx.size == 0:           # [] is float64 to numpy
            idx = idx.astype(np.int64)
        if idx.ndim != 1 or idx.dtype.kind not in "iu":
            raise TypeError(f"code_index must be a 1-D integer array (one code index a frame), got "
                            f"{idx.dtype} {idx.shape}")
        bad = np.flatnonzero((idx < 0) | (idx >= len(self.codes)))
        if bad.size:
            raise ValueError(f"code_index: frame {int(bad[0])} has index {int(idx[bad[0]])}, outside 0..{len(self.codes) - 1} "
                             f"(the decoder's {len(self.codes)} codes){f'; {bad.size} such frames' if bad.size > 1 else ''}")
        return idx.astype(np.int64, copy=False)

    def _check_dtype(self, dtype, used):
        """TypeError unless every decoder of a code in use takes LLRs of ``dtype`` (as
        :meth:`gpuldpc.Decoder.check_llr` says, converting floats where it would)."""
        for c in used:
            try:
                self.decoders[c].check_llr(np.empty((0, self._in_width[c]), dtype))
            except TypeError as exc:
                raise TypeError(f"llrs: {exc}") from None

    def _check_llrs(self, llrs, idx: np.ndarray, used):
        """The LLRs as a 2-D array [frames, width] with rows at least as wide as each frame's
        code takes, or a list of 1-D rows of exactly that width."""
        if type(llrs) is not np.ndarray and device_arrays.view(llrs) is not None:
            raise TypeError("llrs: a MixedDecoder takes host arrays (the mixed rows, copied as they lie); "
                            "hand a GPU array of one code's frames to that code's gl.Decoder")
        frames = idx.size
        if isinstance(llrs, (list, tuple)):
            if len(llrs) != frames:
                raise ValueError(f"llrs: {len(llrs)} frames for {frames} entries of code_index")
            rows = [np.asarray(r) for r in llrs]
            for i, r in enumerate(rows):
                want = self._in_width[idx[i]]
                if r.ndim != 1 or r.shape[0] != want:
                    raise ValueError(f"llrs[{i}]: code {self.codes[idx[i]].name!r} takes {want} LLRs a frame "
                                     f"(a 1-D array), got shape {r.shape}")
            for dtype in {r.dtype for r in rows}:
                self._check_dtype(dtype, used)
            return rows
        arr = np.asarray(llrs)
        if arr.ndim != 2 or arr.shape[0] != frames:
            raise ValueError(f"llrs must be a 2-D array [frames, width] with {frames} rows (one a code_index "
                             f"entry), or a list of 1-D rows; got shape {arr.shape}")
        if frames:
            need = self._in_width[used].max()
            if arr.shape[1] < need:
                short = int(np.flatnonzero(self._in_width[idx] > arr.shape[1])[0])
                raise ValueError(f"llrs: rows hold {arr.shape[1]} LLRs, frame {short} (code "
                                 f"{self.codes[idx[short]].name!r}) needs {self._in_width[idx[short]]}")
        self._check_dtype(arr.dtype, used)
        return arr

    # ------------------------------------------------------------------ decode
    def decode(self, llrs, code_index) -> MixedDecodeResult:
        """Decode frame ``i`` of ``llrs`` with code ``codes[code_index[i]]``.

        ``llrs``: a 2-D array [frames, width] whose row ``i`` holds frame ``i``'s LLRs in its
        first ``n`` entries (``n`` of its code; GF(q): ``n*m`` bit LLRs; the rest of the row is
        ignored), or a list of 1-D arrays of exactly those lengths (each copied on its own:
        slower).  ``code_index``: int [frames].  Dtype and sign as for :class:`gpuldpc.Decoder`.
        Returns a :class:`~gpuldpc.mixed_result.MixedDecodeResult` in input order.
        """
        idx = self._check_index(code_index)
        counts = np.bincount(idx, minlength=len(self.codes))
        used = np.flatnonzero(counts)
        llrs = self._check_llrs(llrs, idx, used)
        with self._lock:
            if self._pipeline is not None and idx.size:      # (no soft output on this path)
                bits, iterations, valid, bad, soft = (*self._pipeline.decode(self._as_array(llrs, idx), idx,
                                                                             self._llr_dtype(llrs, used)), None)
            else:
                bits, iterations, valid, bad, soft = self._decode_grouped(llrs, idx, counts, used)
        if self.on_bad_llr == "raise" and bad.any():
            self._raise_bad(bad, idx)
        return MixedDecodeResult(self.codes, idx, self._widths, self._info, bits, iterations, valid, bad, soft)

    def _as_array(self, llrs, idx: np.ndarray) -> np.ndarray:
        """The LLRs as one 2-D array (the cuda path copies rows as they lie): a list of rows
        copied into one, zero padded to the widest."""
        if not isinstance(llrs, list):
            return llrs
        arr = np.zeros((idx.size, int(self._in_width[idx].max())), np.result_type(*{r.dtype for r in llrs}))
        for i, r in enumerate(llrs):
            arr[i, :r.size] = r
        return arr

    def _llr_dtype(self, llrs, used) -> np.dtype:
        """The dtype the decoders take LLRs of ``llrs``'s dtype in (``gl.Decoder.check_llr``'s
        conversion: float32, or the cuda ``llr_dtype``; the same for every decoder, whose
        options are the same)."""
        dtype = np.result_type(*{r.dtype for r in llrs}) if isinstance(llrs, list) else llrs.dtype
        c = int(used[0])
        return self.decoders[c].check_llr(np.empty((0, self._in_width[c]), dtype)).dtype

    def _decode_grouped(self, llrs, idx: np.ndarray, counts: np.ndarray, used):
        """The host grouping (module docstring, steps 2-4): (bits, iterations, valid, bad_llr,
        soft output or None) in input order."""
        frames = idx.size
        widths, k = self._widths
        bits = np.zeros((frames, int(widths.max())), np.uint8)
        iterations = np.zeros(frames, np.int32)
        valid = np.zeros(frames, bool)
        bad = np.zeros(frames, bool)
        soft = np.zeros((frames, int(widths.max())), np.float32) if self._soft else None
        order = np.argsort(idx, kind="stable")
        starts = np.concatenate([[0], np.cumsum(counts)])
        pending = []
        try:
            for c in used:
                rows = order[starts[c]:starts[c + 1]]
                pending += self._submit_group(int(c), rows, llrs)
        finally:
            failure = None
            for rows, ticket in pending:     # every ticket collected, so no buffer is reused early
                try:
                    res = ticket.result()
                except Exception as exc:  # noqa: BLE001  (the first failure is raised below)
                    failure = failure or exc
                    continue
                scatter_rows(bits, rows, res.bits)
                iterations[rows], valid[rows], bad[rows] = res.iterations, res.valid, res.bad_llr
                if soft is not None:
                    scatter_rows(soft, rows, res.llr)
        if failure is not None:
            raise failure
        return bits, iterations, valid, bad, soft

    def _submit_group(self, c: int, rows: np.ndarray, llrs) -> list:
        """Gather code ``c``'s frames (input positions ``rows``) into its decoder's input and
        submit them in pieces; [(rows of the piece, ticket)]."""
        dec, piece = self.decoders[c], self._pieces[c]
        buf = self._buffer(c, rows.size)
        tickets = []
        for a in range(0, rows.size, piece):
            part, dst = rows[a:a + piece], buf[a:a + piece]
            if isinstance(llrs, list):
                for j, r in enumerate(part):
                    dst[j] = llrs[r]
            else:
                gather_rows(dst, llrs, part)
            tickets.append((part, dec.submit(dst)))
        return tickets

    def _buffer(self, c: int, frames: int) -> np.ndarray:
        """Decoder ``c``'s input rows for ``frames`` frames: its ``pinned_llr`` array, kept
        between calls and grown by an eighth more than asked when too small."""
        buf = self._buffers[c]
        if buf is None or buf.shape[0] < frames:
            self._buffers[c] = None          # the old one is released before the new one is made
            dec = self.decoders[c]
            rows = frames + frames // 8
            buf = dec.pinned_llr(rows) if dec.code.is_binary else dec.pinned_llr(rows, bit_llr=True)
            self._buffers[c] = buf
        return buf[:frames]

    def _raise_bad(self, bad: np.ndarray, idx: np.ndarray):
        frames = np.flatnonzero(bad)
        names = sorted({self.codes[c].name for c in idx[frames]})
        raise ValueError(f"llrs: frames {frames[:8].tolist()}{'...' if frames.size > 8 else ''} (codes {names}) "
                         "contain NaN or infinite values; gl.MixedDecoder(..., on_bad_llr='erase') decodes them "
                         "as erasures instead")

    def close(self):
        """Release every decoder's resources, the input buffers and the cuda path's device buffers."""
        self._buffers = [None] * len(self.codes)
        if self._pipeline is not None:
            self._pipeline.close()
            self._pipeline = None
        for dec in self.decoders:
            dec.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"MixedDecoder({[c.name for c in self.codes]}, backends={list(self.backends)})"


def _gathers_on_gpu(codes, backends, options) -> bool:
    """Whether a MixedDecoder takes the cuda path (:mod:`gpuldpc.cuda.mixed_pipeline`): every
    decoder on the cuda backend with its kernels behind one plan (no shaped code: its decoder
    is the host's rate recovery around the cuda one, :mod:`gpuldpc.codes.shaping`), no soft
    output (the pipeline copies hard decisions only), and no GF(q) code with
    ``positive_llr_bit=1`` (gl.Decoder negates GF(q) bit LLRs on the host; the binary kernels
    apply the sign in their load)."""
    return (all(b == "cuda" for b in backends) and options.get("soft_output") is None
            and not any(isinstance(c, ShapedCode) for c in codes)
            and not (options.get("positive_llr_bit", 0) == 1 and not all(c.is_binary for c in codes)))
