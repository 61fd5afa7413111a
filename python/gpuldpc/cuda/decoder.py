"""The binary QC-LDPC CUDA decoder: kernel choice and the plan the stream engine runs.

:class:`CudaDecoder` is the ``backend="cuda"`` of :class:`gpuldpc.Decoder` for binary
QC codes.  The streams, pinned buffers, several GPUs, ``submit``/``result`` and
``decode_device`` are the shared engine's (:mod:`.engine`, paper 004 section IV);
this module picks the entry point of kernels/qc_decode.cu for a code and settings
(:func:`kernel_name`) and gives the engine its per-device plan (:class:`_QcPlan`:
tables, launch shape from the device and the kernel, paper 001 section IV-D).
"""
from __future__ import annotations

import weakref

import numpy as np

from .. import packed_bits
from ..codes.shaping import Shaping
from ..float16 import check_half_range
from ..int4 import packed_width
from ..result import DecodeResult
from ..settings import BINARY_ALGORITHMS, SCHEDULES
from . import autotune
from .context import CudaError, DeviceContext
from .driver import PackedLaunch, allow_shared, driver
from .engine import GpuDecoder
from .host_memory import pinned_empty
from .layout import NotQuasiCyclic, pair_layers, qc_layout
from .recovery import RecoveryPlan, RecoveryTables
from .resident import ARG_TYPES as RESIDENT_ARG_TYPES
from .sparse_layout import MODULE as SPARSE_MODULE
from .sparse_layout import POSTERIORS, SparseLayout, SparsePlan, needs_sparse, sparse_layout
from .stages import HalfSoftPlan, Int4Plan, PackedInfoPlan, StagePlan
from .resident import MAX_FRAMES, ResidentKernel, resident_name
from .resident import MODULE as RESIDENT_MODULE
from .tuning import PRESETS, ranked_shapes

KERNEL_MODULE = "qc_decode"
# min-sum kernels with compressed rows in registers: (layers, blocks per row) they fit, in the order
# kernel_name tries them (the first that fits; variants added later go last, so a code keeps the
# kernel it had): (8, 24), (16, 24), (24, 10) are for the pruned 5G NR graphs (BG1 rate 8/9 and
# 4/5: 5 / 8 layers of up to 19 blocks; rate 2/3 and 3/4: 13 / 10 layers; BG2 rate 1/3: 22 layers,
# rows of up to 10)
REGISTER_VARIANTS = ((12, 7), (12, 8), (8, 16), (4, 24), (16, 16), (8, 24), (16, 24), (24, 10))
# latency kernels, per (preset, schedule): (layers, lanes per row, edges per lane, block limit of
# its __launch_bounds__): lanes > 1, a check row spread over several threads (kernels/qc_decode.cuh
# EdgeParallelMinSum, v8 `ep12x2x4`, still the fastest flooding one); lanes 1, a row a thread with
# its state in shared memory (SharedRowMinSum, v10 `ep12x1x8`: 96 threads a WiMAX 2304 frame;
# docs/gpu.md).  The throughput preset has none.
EDGE_PARALLEL = {("latency", "layered"): (12, 1, 8, 96), ("latency", "flooding"): (12, 2, 4, 192)}
# the layered row kernel with two layers of no common column a step (SharedRowMinSum GROUP 2,
# `pl12x2x7`, 2z threads a frame, rows of up to 7 blocks), taken where :func:`.layout.pair_layers`
# pairs the code's layers (WiMAX rate 1/2): half the layer steps, the layered schedule in the
# paired order; entry prefix -> (paired prefix, its row weight limit)
PAIRED_ROWS = {"qc_ep12x1x8_layered_": ("qc_pl12x2x7_layered_", 7)}
STORED_MAX_ROW_BLOCKS = 27        # kernels/qc_decode.cu: StoredMessages<27>, sign bits of a row
# precision="float16": min-sum in binary16, two frames a thread (kernels/qc_decode.cu HalfMinSum,
# entry points qc_hs<layers>x<blocks>_*), for codes of these shapes, tried in this order; both presets.
# The variants with rows of up to 8 blocks read their columns from a column table of bytes (z <= 256:
# HALF_TABLE_MAX_Z); at larger z the same rows run as qc_hw12x8_* (HalfMinSum without the table)
HALF_VARIANTS = ((12, 7), (12, 8), (8, 16), (4, 24), (8, 24), (24, 10), (16, 24))
HALF_TABLE_MAX_Z = 256
HALF_WIDE = (12, 8)
# min-sum with the rows' state in device memory (kernels/qc_decode.cuh RowState<0, ...>; entry points
# qc_mm<blocks>_* float32, qc_hm<blocks>_* binary16): any number of layers, rows of up to this many
# blocks; taken where no register variant holds the layers (5G NR BG1 below rate 2/3, BG2 below 1/3)
MEMORY_ROW_BLOCKS = 24
MEMORY_STATE_WORDS = {"mm": 3, "hm": 5}    # 32-bit words a row and layer of a frame (hm: frame pair)
# register variants whose __launch_bounds__ allow fewer than 512 threads a block (kernels/qc_decode.cu:
# past 128 registers they would spill): a code whose z rounded up to the warp exceeds it skips them
VARIANT_MAX_THREADS = {"ms24x10": 384, "hs24x10": 384, "hs16x24": 384, "mm24": 384, "hm24": 384}
PRECISIONS = ("float32", "float16")
RULES = {"nms": 0, "oms": 1, "spa": 2}
# llr_dtype -> (the kernels' input suffix, the dtype ``decode`` takes); "int4": packed bytes, read as they are
# by the binary16 QC kernels (``_i4``), unpacked on the GPU into the int8 rows the other kernels read
# (:class:`.stages.Int4Plan`, :func:`unpacked_suffix`)
LLR_DTYPES = {"float32": ("f32", np.float32), "float16": ("f16", np.float16), "int8": ("i8", np.int8),
              "int4": ("i4", np.uint8)}
SOFT_DTYPES = ("float32", "float16")
_ARG_TYPES = "PfPiPPPPPiiiiiiiiiffP"
RESIDENT_PREFIXES = ("qc_ep12x1x8_", "qc_pl12x2x7_")  # kernels/qc_resident.cu: their resident copies


def unpacked_suffix(llr_dtype: str) -> str:
    """The input suffix of a kernel without an ``_i4`` entry point (float32 QC kernels, the sparse
    kernel): int4 rows reach it unpacked to int8."""
    return "i8" if llr_dtype == "int4" else LLR_DTYPES[llr_dtype][0]


def kernel_name(layout, algorithm: str, schedule: str, llr_dtype: str, preset: str = "throughput",
                precision: str = "float32") -> str:
    """Entry point of kernels/qc_decode.cu for a code layout and settings: float16, the
    binary16 kernel of the code's shape (:data:`HALF_VARIANTS`, either preset), else the one
    with its rows' state in device memory (:data:`MEMORY_ROW_BLOCKS`); float32, the preset's
    edge-parallel kernel (:data:`EDGE_PARALLEL`) where the code fits it (layers, row weight,
    threads a frame, and n <= 8192: its column offsets are int16 byte offsets), else the
    row-per-thread kernels: min-sum in registers, then in device memory, then (and for
    sum-product) every message stored."""
    if precision == "float16":
        if algorithm == "spa":
            raise ValueError("precision='float16' runs min-sum only ('nms', 'oms'); algorithm='spa' needs "
                             "precision='float32'")
        for layers, row in HALF_VARIANTS:
            if row <= 8 and layout.z > HALF_TABLE_MAX_Z:     # past the column table's bytes
                layers, row = HALF_WIDE
                variant = f"hw{layers}x{row}"
            else:
                variant = f"hs{layers}x{row}"
            if _fits(layout, variant, layers, row):
                return f"qc_{variant}_{schedule}_{LLR_DTYPES[llr_dtype][0]}"
        if _fits(layout, f"hm{MEMORY_ROW_BLOCKS}", layout.layers, MEMORY_ROW_BLOCKS):
            return f"qc_hm{MEMORY_ROW_BLOCKS}_{schedule}_{LLR_DTYPES[llr_dtype][0]}"
        raise NotQuasiCyclic(f"precision='float16' has kernels for codes with rows of up to {MEMORY_ROW_BLOCKS} "
                             f"blocks and z <= 384 (the register variants {HALF_VARIANTS} also for larger z, up "
                             f"to 512 threads a frame pair); this code has {layout.layers} layers, rows of up to "
                             f"{layout.max_row_blocks} blocks and z = {layout.z}: use precision='float32'")
    variant = "stored"
    ep = EDGE_PARALLEL.get((preset, schedule))
    if (ep and algorithm != "spa" and layout.layers <= ep[0] and layout.max_row_blocks <= ep[1] * ep[2]
            and layout.z * ep[1] <= ep[3] and layout.n <= 8192):
        variant = "ep{}x{}x{}".format(*ep[:3])
    elif algorithm != "spa":
        for layers, row in REGISTER_VARIANTS:
            if _fits(layout, f"ms{layers}x{row}", layers, row):
                variant = f"ms{layers}x{row}"
                break
        else:       # more layers than any register variant holds
            if _fits(layout, f"mm{MEMORY_ROW_BLOCKS}", layout.layers, MEMORY_ROW_BLOCKS):
                variant = f"mm{MEMORY_ROW_BLOCKS}"
    if layout.max_row_blocks > STORED_MAX_ROW_BLOCKS:
        raise NotQuasiCyclic(f"a check row of {layout.max_row_blocks} blocks exceeds the kernels' "
                             f"limit of {STORED_MAX_ROW_BLOCKS}")
    return f"qc_{variant}_{schedule}_{unpacked_suffix(llr_dtype)}"


def _fits(layout, variant: str, layers: int, row: int) -> bool:
    """Whether a register variant (``ms``/``hs<layers>x<row>``; ``mm``/``hm<row>`` with ``layers`` the
    code's own) holds the code: its layers (the memory variants: at least 2, RowState's prefetch of
    the next layer), its row weight, and one frame (float16: one frame pair) of z threads, rounded up
    to the warp, under the variant's thread bound (:data:`VARIANT_MAX_THREADS`, else 512)."""
    return (2 <= layout.layers <= layers and layout.max_row_blocks <= row
            and -(-layout.z // 32) * 32 <= VARIANT_MAX_THREADS.get(variant, 512))


def kernel_lanes(kernel: str) -> int:
    """Threads per check row index of an entry point (``qc_ep<layers>x<lanes>x<edges>_...``: lanes;
    ``qc_pl<layers>x2x<row>_...``: 2, one a layer of the step; else 1)."""
    variant = kernel.split("_")[1]
    return int(variant.split("x")[1]) if variant.startswith(("ep", "pl")) else 1


def kernel_state_bytes(kernel: str, layout, max_threads: int) -> int:
    """Dynamic shared memory a block of a row-a-thread latency entry point (``qc_ep<L>x1x<E>_...``,
    ``qc_pl<L>x2x<E>_...``: kernels/qc_decode.cuh SharedRowMinSum) needs after the tables: per
    layer step (pl: two layers a step) and thread slot of its ``__launch_bounds__``
    (``max_threads``, the kernel's own attribute) E messages and E column addresses (8 bytes
    each; E rounded up to 4s; pl: the column addresses only, its messages live in registers),
    plus 16 bytes of alignment; the binary16 register variants with rows of up to 8 blocks
    (``qc_hs<L>x<D>_...``, D <= 8, z <= :data:`HALF_TABLE_MAX_Z`) their column table
    (HalfMinSum::columns: z rows of L x D bytes rounded up to an odd number of 4-byte words) and
    each frame pair's block bases (L x D words a pair, ``max_threads // z`` pairs at most); 0 for
    the other kernels."""
    variant = kernel.split("_")[1]
    if variant.startswith("hs"):
        layers, row = (int(v) for v in variant[2:].split("x"))
        if row > 8:
            return 0
        return layout.z * ((layers * row + 3) // 4 | 1) * 4 + max_threads // layout.z * layers * row * 4
    if not (variant.startswith("pl") or variant.startswith("ep") and kernel_lanes(kernel) == 1):
        return 0
    steps = layout.layers // kernel_lanes(kernel)
    per_edge = 4 if variant.startswith("pl") else 8
    return 16 + steps * -(-int(variant.split("x")[2]) // 4) * 4 * per_edge * max_threads


def has_resident_copy(kernel: str, schedule: str) -> bool:
    """Whether an entry point has a resident copy in kernels/qc_resident.cu (the layered latency
    kernels of :data:`RESIDENT_PREFIXES`)."""
    return schedule == "layered" and kernel.startswith(RESIDENT_PREFIXES)


def latency_kernel_is_resident(code, algorithm: str, schedule: str, llr_dtype: str, precision: str,
                               resident: bool = True) -> bool:
    """Whether ``CudaDecoder(code, ..., preset="latency")`` with these settings decodes with a
    resident kernel (:mod:`.resident`), decided as the decoder decides it, without a GPU: the
    entry point :meth:`CudaDecoder._kernel` picks, with a resident copy, ``resident`` on."""
    try:
        _, kernel = CudaDecoder._kernel(code, algorithm, schedule, llr_dtype, "latency", precision)
    except NotQuasiCyclic:
        return False
    return resident and has_resident_copy(kernel, schedule)


def kernel_pairs(kernel: str) -> tuple[int, int]:
    """(frames a thread serves, block-table entries a layer): (2, blocks) for the binary16 entry
    points ``qc_hs<layers>x<blocks>_...``, ``qc_hw12x8_...`` and ``qc_hm<blocks>_...`` (a half2
    frame pair, rows padded through the table), else (1, 0)."""
    variant = kernel.split("_")[1]
    return (2, int(variant[2:].split("x")[-1])) if variant.startswith(("hs", "hw", "hm")) else (1, 0)


def message_words(kernel: str, layout) -> int:
    """32-bit words of ``msg_store`` a frame (binary16: a frame pair, :func:`kernel_pairs`) of an
    entry point needs: ``stored`` every message (a word an edge), ``mm``/``hm`` the rows' state
    (:data:`MEMORY_STATE_WORDS` a row and layer), 0 for the others."""
    variant = kernel.split("_")[1]
    if variant == "stored":
        return layout.nblocks * layout.z
    return MEMORY_STATE_WORDS.get(variant[:2], 0) * layout.layers * layout.z


def _prepare(func, arg_types: str, shared_bytes: int):
    """``func`` prepared for calls with ``arg_types``, allowed ``shared_bytes`` of dynamic shared
    memory (:func:`.driver.allow_shared`)."""
    allow_shared(func, shared_bytes)
    func.prepare(arg_types)
    return func


class _QcPlan:
    """The binary kernel on one device (the engine's plan, :mod:`.engine`): entry point,
    index tables, launch shape (:mod:`.tuning`)."""

    def __init__(self, ctx: DeviceContext, dec: "CudaDecoder", frames_per_block):
        drv = driver()
        layout = dec.layout
        self.dec, self.name = weakref.proxy(dec), dec.kernel   # weak: the decoder owns the plan (no cycle)
        self.func = ctx.function(KERNEL_MODULE, dec.kernel)
        self.attributes = ctx.kernel_attributes(self.func)
        self.func.prepare(_ARG_TYPES)
        self.edges = drv.to_device(layout.edges)
        self.layer_start = drv.to_device(layout.layer_start)
        self.bits_width = packed_bits.width(dec.code.n) if dec.packed else dec.code.n
        self.soft_width = dec.code.n if dec.soft_output else 0    # posteriors a frame (engine)
        self.msg_words = message_words(dec.kernel, layout)     # a frame (pair) of msg_store
        self.default_streams = 1 if dec.preset == "latency" else 8
        shapes = ranked_shapes(layout, ctx.limits, self.attributes, dec.schedule == "flooding", dec.preset,
                               frames_per_block, kernel_lanes(dec.kernel), *kernel_pairs(dec.kernel),
                               state_bytes=kernel_state_bytes(dec.kernel, layout, self.attributes.max_threads))
        key = (dec.kernel, layout.n, layout.z, layout.edges.tobytes(), layout.layer_start.tobytes(),
               dec.max_iterations, dec.packed, dec.soft_output)
        shape, rates = autotune.measured_shape(self, ctx, shapes, key, self._noise, "llr",
                                               dec.chunk_request)
        self.tuning = None if rates is None else {s.frames_per_block: rate for s, rate in rates.items()}
        self.use_shape(shape)
        # latency: the kernel reads the LLRs (one coalesced pass) and writes its results
        # in mapped host memory, no copies (:mod:`.engine`)
        self.mapped_input = self.mapped_output = dec.preset == "latency" and ctx.unified
        # and its small chunks go to a resident copy of the kernel (:mod:`.resident`)
        self.resident_kernel = (resident_name(dec.kernel) if dec.resident and self.mapped_input
                                and has_resident_copy(dec.kernel, dec.schedule)
                                and self.shape.frames_per_block == 1 else None)
        self.ctx = ctx

    def use_shape(self, shape):
        """Launch in ``shape`` from now on."""
        self.shape = shape
        self._launch = PackedLaunch(self.func, shape.threads, shape.shared_bytes)
        self.frames_per_wave = shape.frames_per_wave

    @staticmethod
    def wave_frames(shape) -> int:
        """Frames a launch in ``shape`` keeps resident."""
        return shape.frames_per_wave

    def _noise(self) -> np.ndarray:
        """64 frames of noise LLRs in the kernel's input dtype (its name's suffix; :mod:`.autotune`)."""
        rng = np.random.default_rng(0)
        shape = (64, self.dec.layout.n)
        if self.name.endswith("_i8"):                               # int8 (and int4, unpacked to int8)
            return rng.integers(-20, 21, shape).astype(np.int8)
        if self.name.endswith("_i4"):                               # packed int4 bytes
            return rng.integers(0, 256, (64, packed_width(self.dec.layout.n)), dtype=np.uint8)
        return rng.normal(0.0, 2.0, shape).astype(np.float16 if self.name.endswith("_f16") else np.float32)

    def resident(self, slot):
        """The resident kernel serving ``slot``'s chunks of up to :data:`.resident.MAX_FRAMES`
        frames, or None (:mod:`.engine`)."""
        if self.resident_kernel is None:
            return None
        d, lay, shape = self.dec, self.dec.layout, self.shape
        func = _prepare(self.ctx.function(RESIDENT_MODULE, self.resident_kernel), RESIDENT_ARG_TYPES,
                        shape.shared_bytes)
        tail = (d.llr_scale, slot.out[0], int(d.packed), slot.out[1], slot.out[2], self.edges, self.layer_start,
                0, lay.n, lay.z, lay.layers, lay.nblocks, d.max_iterations, int(d.early_stop), RULES[d.algorithm],
                d.alpha, d.beta)
        return ResidentKernel(self.ctx, func, shape.threads, shape.shared_bytes,
                              min(MAX_FRAMES, slot.capacity), tail)

    def default_chunk(self, streams, free_bytes) -> int:
        """One wave (latency) or two (throughput) per stream launch."""
        return self.frames_per_wave * (1 if self.dec.preset == "latency" else 2)

    def frame_bytes(self, kind) -> int:
        if self.name.endswith("_i4"):
            return packed_width(self.dec.layout.n)
        return self.dec.layout.n * np.dtype(self.dec.llr_np_dtype).itemsize

    def scratch_bytes(self, frames) -> int:
        pack = kernel_pairs(self.dec.kernel)[0]
        return 4 * -(-frames // pack) * self.msg_words

    def launch(self, stream, count, dev_in, kind, out, scratch, capacity):
        d, lay, shape = self.dec, self.dec.layout, self.shape
        self._launch(
            stream, (shape.grid_blocks(count), 1),
            dev_in, d.llr_scale, out[0], int(d.packed), out[1], out[2], self.edges, self.layer_start,
            scratch if scratch is not None else 0, lay.n, lay.z, lay.layers, lay.nblocks, count,
            shape.frames_per_block, d.max_iterations, int(d.early_stop), RULES[d.algorithm], d.alpha, d.beta,
            out[3])


def _checked_info_at(info_at, code):
    """``info_at`` (a slice of step 1 or positions) if it lies within ``code``'s n decisions,
    else ValueError."""
    if isinstance(info_at, slice):
        start, stop, step = info_at.indices(code.n)
        ends = (info_at.start, info_at.stop)
        ok = step == 1 and start < stop and all(v is None or 0 <= v <= code.n for v in ends)
    else:
        info_at = np.asarray(info_at)
        ok = info_at.ndim == 1 and info_at.dtype.kind in "iu" and info_at.size > 0 and \
            0 <= info_at.min() and info_at.max() < code.n
    if not ok:
        raise ValueError(f"info_at must be a slice of step 1 or integer positions within the {code.n} decisions "
                         f"of code {code.name!r}, got {info_at!r}")
    return info_at


class CudaDecoder(GpuDecoder):
    """Binary QC-LDPC decoder on one or several GPUs (the engine: :mod:`.engine`).

    Parameters
    ----------
    code : gpuldpc Code
        A binary QC code (``code.base``, ``code.z``), e.g. ``gl.codes.get("wimax-2304-1/2")``.
    algorithm, schedule, max_iterations, early_stop, alpha, beta
        As :class:`gpuldpc.Decoder`; min-sum ("nms", "oms") is bit-exact with the
        reference decoder, "spa" matches its frame error rate.
    precision : {"float32", "float16"}
        Message arithmetic.  "float16": min-sum in IEEE binary16, two frames a thread
        (``qc_hs*`` kernels), bit-exact with the reference decoder's float16 arithmetic
        (:mod:`gpuldpc.decoders.reference_binary`: LLRs clamped to +-2048, messages to
        2048); codes whose column weight would let a posterior exceed the float16 range
        raise ValueError.  ``frames_per_block`` must then be even.
    devices : "all", int or list of int
        GPUs to use; a batch is split over them in equal parts.
    preset : {"throughput", "latency"}
        Launch shape and stream count (:mod:`gpuldpc.cuda.tuning`).
    streams, chunk_frames, frames_per_block : int, optional
        Overrides: streams per device, frames per stream launch, frames per block.  Without
        ``frames_per_block`` the throughput preset times the model's first shapes on the device
        when the decoder is made and keeps the fastest (:mod:`.autotune`; ``tuning``).
    llr_dtype : {"float32", "float16", "int8", "int4"}
        Input format; every value is multiplied by ``llr_scale`` in the kernels' load (int8,
        int4 and float16: the quantisation step; a negative scale takes LLRs whose positive means
        bit 1, as ``gl.Decoder(positive_llr_bit=1)`` hands them).  "int4": packed uint8
        [batch, ceil(n/2)], two 4-bit values a byte (:mod:`gpuldpc.int4`), copied to the GPU as
        they are; the binary16 QC kernels read them so (their ``_i4`` entry points), the other
        kernels after an unpack into int8 rows (:class:`.stages.Int4Plan`); not with ``shaping``.
    packed : bool
        Hard decisions packed 8 per byte (``numpy.packbits`` order) instead of one per byte.
    resident : bool
        ``preset="latency"``, layered min-sum in float32 on a code the latency kernel fits:
        keep the kernel running between calls and post each chunk of up to
        :data:`.resident.MAX_FRAMES` frames to it through mapped memory instead of
        launching it (:mod:`gpuldpc.cuda.resident`: about 5 us less a call; the kernel
        leaves by itself 1 ms after the last call).  Ignored otherwise (and with ``shaping``).
    posteriors : {"auto", "shared", "device"}
        Codes the QC kernels do not hold (DVB-S2, CCSDS C2, AR4JA k = 16384, alist codes)
        go to the sparse kernel (:mod:`.sparse_layout`, min-sum only); its posteriors live in
        shared memory where a frame's fit ("auto"), or in device memory.  Ignored by the QC
        kernels.
    soft_output : bool
        Also return each frame's float32 posteriors at its stop (``DecodeResult.llr``,
        :mod:`gpuldpc.soft`; in the caller's sign, units of ``value * llr_scale``), written by
        the throughput preset's kernels (``ms*``, ``hs*``: binary16 converted, ``stored``);
        ValueError with ``preset="latency"``.
    soft_dtype : {"float32", "float16"}
        The soft output's dtype: "float16" converts the kernels' float32 posteriors on the GPU
        (:class:`.stages.HalfSoftPlan`: clamped to +-65504, rounded to nearest, as
        :func:`gpuldpc.soft.to_float16`) before the copy to the host, 2 bytes a bit over PCIe.
    shaping : gpuldpc.codes.shaping.Shaping, optional
        The transmission of ``code`` (a shaped code's ``decoded_shaping``, with ``code`` its
        ``decoded``): ``decode`` then takes the ``shaping.n`` received LLRs [batch, E] of
        ``llr_dtype`` and recovers the decoded code's LLRs on the GPU, chunk by chunk,
        before the decoding kernel (:mod:`.recovery`; bit for bit the host's
        :meth:`~gpuldpc.codes.shaping.Shaping.recover`).
    info_at : slice or array of int, optional
        Where ``DecodeResult.info`` lies among the ``n`` decisions (default the first ``k``; a
        shaped code's ``decoded_info``, :func:`gpuldpc.result.info_index`).  With ``packed``, a
        run starting inside a byte (CCSDS C2: bit 18) is shifted to bit 0 on the GPU
        (:class:`.stages.PackedInfoPlan`) by the throughput preset, on the host otherwise
        (:func:`gpuldpc.packed_bits.info_of`).
    """

    def __init__(self, code, algorithm="nms", schedule="layered", max_iterations=10, early_stop=True,
                 alpha=0.75, beta=0.5, *, precision="float32", devices="all", preset="throughput", streams=None,
                 chunk_frames=None, frames_per_block=None, llr_dtype="float32", llr_scale=1.0,
                 packed=False, resident=True, shaping=None, posteriors="auto", soft_output=False,
                 soft_dtype="float32", info_at=None):
        if algorithm not in BINARY_ALGORITHMS:
            raise ValueError(f"algorithm={algorithm!r} is not one of {BINARY_ALGORITHMS}")
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule={schedule!r} is not one of {SCHEDULES}")
        if preset not in PRESETS:
            raise ValueError(f"preset={preset!r} is not one of {PRESETS}")
        if llr_dtype not in LLR_DTYPES:
            raise ValueError(f"llr_dtype={llr_dtype!r} is not one of {tuple(LLR_DTYPES)}")
        if precision not in PRECISIONS:
            raise ValueError(f"precision={precision!r} is not one of {PRECISIONS}")
        if frames_per_block is not None and (not isinstance(frames_per_block, (int, np.integer))
                                             or frames_per_block < 1):
            raise ValueError(f"frames_per_block must be None or an integer >= 1, got {frames_per_block!r}")
        if not isinstance(max_iterations, (int, np.integer)) or max_iterations < 1:
            raise ValueError(f"max_iterations must be an integer >= 1, got {max_iterations!r}")
        self.code = code
        if shaping is not None and (not isinstance(shaping, Shaping) or shaping.n_mother != code.n):
            raise ValueError(f"shaping must be a gpuldpc Shaping of a code of length {code.n} (code "
                             f"{code.name!r}), got {shaping!r}")
        if shaping is not None and llr_dtype == "int4":
            raise ValueError(f"code {code.name!r}: llr_dtype='int4' takes plain codes; rate recovery reads "
                             "llr_dtype='int8', 'float16' or 'float32'")
        if soft_dtype not in SOFT_DTYPES:
            raise ValueError(f"soft_dtype={soft_dtype!r} is not one of {SOFT_DTYPES}")
        self.shaping = shaping
        self.n_in = code.n if shaping is None else shaping.n
        if llr_dtype == "int4":
            self.n_in = packed_width(code.n)
        if precision == "float16":
            check_half_range(code)
        self.algorithm, self.schedule, self.preset, self.precision = algorithm, schedule, preset, precision
        self.max_iterations, self.early_stop = int(max_iterations), bool(early_stop)
        self.alpha, self.beta = np.float32(alpha), np.float32(beta)
        self.llr_dtype, self.llr_np_dtype = llr_dtype, LLR_DTYPES[llr_dtype][1]
        self.llr_scale = np.float32(llr_scale)
        self.packed, self.resident = bool(packed), bool(resident)
        self.soft_output, self.soft_dtype = bool(soft_output), soft_dtype
        if self.soft_output and preset == "latency":
            raise ValueError("soft_output is written by the throughput preset's kernels; the latency "
                             "preset's (ep*, resident) write hard decisions only: use preset='throughput', "
                             "or backend='cpu'")
        if posteriors not in POSTERIORS:
            raise ValueError(f"posteriors={posteriors!r} is not one of {POSTERIORS}")
        self.posteriors = posteriors
        self.info_at = slice(0, code.k) if info_at is None else _checked_info_at(info_at, code)
        self._shifted_info = self._info_shift_run()
        if self._shifted_info is not None:
            self.info_runs = ((0, 0, packed_bits.width(self._shifted_info[1] - self._shifted_info[0])),)
        self.layout, self.kernel = self._kernel(code, algorithm, schedule, llr_dtype, preset, precision)
        self._frames_per_block = frames_per_block
        self._tables = None
        self._start(devices, streams, chunk_frames, "llr")
        if self.sparse:
            plan = self.engines[0].plan
            while isinstance(plan, StagePlan):
                plan = plan.inner
            self.kernel = plan.name

    @property
    def sparse(self) -> bool:
        """Whether the code goes to the sparse kernel (:mod:`.sparse_layout`)."""
        return isinstance(self.layout, SparseLayout)

    @staticmethod
    def _kernel(code, algorithm, schedule, llr_dtype, preset, precision):
        """(layout, entry point): the QC kernels' where they describe the code, else the sparse
        kernel's tables (its entry point is chosen per device, :class:`.sparse_layout.SparsePlan`)."""
        try:
            layout = qc_layout(code)
            if not needs_sparse(layout):
                name = kernel_name(layout, algorithm, schedule, llr_dtype, preset, precision)
                for prefix, (paired_prefix, row_limit) in PAIRED_ROWS.items():
                    paired = pair_layers(layout) if name.startswith(prefix) and layout.max_row_blocks <= row_limit \
                        else None
                    if paired is not None:
                        return paired, paired_prefix + name[len(prefix):]
                return layout, name
        except NotQuasiCyclic:
            pass
        if algorithm == "spa":
            raise NotQuasiCyclic(f"code {code.name!r} goes to the sparse kernel (no QC form the QC kernels "
                                 "hold), which runs min-sum ('nms', 'oms'); for 'spa' use backend='cpu'")
        return sparse_layout(code), "sparse_decode"

    def _plan(self, ctx):
        """The decoding plan behind its stages (:mod:`.stages`): rate recovery (``shaping``),
        the int4 unpack (``llr_dtype="int4"``), the binary16 soft output (``soft_dtype``)."""
        plan = (SparsePlan(ctx, self, unpacked_suffix(self.llr_dtype), self.posteriors) if self.sparse
                else _QcPlan(ctx, self, self._frames_per_block))
        if self.shaping is not None:
            if self._tables is None:
                self._tables = RecoveryTables(self.shaping)
            plan = RecoveryPlan(ctx, plan, self._tables, self.llr_np_dtype)
        if self.llr_dtype == "int4" and not self.kernel.endswith("_i4"):
            plan = Int4Plan(ctx, plan)
        if self.soft_output and self.soft_dtype == "float16":
            plan = HalfSoftPlan(ctx, plan)
        if self._shifted_info is not None:
            plan = PackedInfoPlan(ctx, plan, *self._shifted_info)
        return plan

    def _info_shift_run(self) -> tuple[int, int] | None:
        """(start, stop) of the information bits where the GPU shifts them out of packed
        decisions (:class:`.stages.PackedInfoPlan`: ``packed``, the throughput preset, a run
        starting inside a byte), else None (``info`` a view of ``bits``, or made on the host)."""
        at = self.info_at
        if not (self.packed and self.preset == "throughput" and isinstance(at, slice)):
            return None
        start, stop, _ = at.indices(self.code.n)
        return (start, stop) if start % 8 else None

    def pinned_llr(self, batch: int) -> np.ndarray:
        """A page-locked LLR array [batch, n] (with ``shaping``: [batch, E]; int4: uint8
        [batch, ceil(n/2)]) of ``llr_dtype`` that ``decode`` copies as is."""
        return pinned_empty((batch, self.n_in), self.llr_np_dtype, self.engines[0].ctx)

    def check_llr(self, llr) -> tuple[np.ndarray, str]:
        """Validate ``llr`` [batch, n] (with ``shaping``: [batch, E]; int4: [batch, ceil(n/2)])
        of ``llr_dtype``; (C-contiguous array, input kind)."""
        arr = np.asarray(llr)
        if arr.ndim == 1:
            arr = arr[None]
        if arr.ndim != 2 or arr.shape[1] != self.n_in:
            raise ValueError(f"code {self.code.name!r}: LLRs must have shape [batch, {self.n_in}], "
                             f"got {np.shape(llr)}")
        if arr.dtype != self.llr_np_dtype:
            what = "uint8 (packed int4, gl.pack_int4)" if self.llr_dtype == "int4" else self.llr_dtype
            raise TypeError(f"LLRs must be {what} for this decoder (llr_dtype={self.llr_dtype!r}), "
                            f"got dtype {arr.dtype}")
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        return arr, "llr"

    def _make_result(self, bits, iterations, valid, bad_llr, info=None) -> DecodeResult:
        """DecodeResult of the arrays the kernels filled (``valid``, ``bad_llr``: the flags' bits,
        :func:`.engine.split_flags`); ``info``: the ticket's rows the GPU shifted
        (:class:`.stages.PackedInfoPlan`), else None and taken from ``bits`` at ``info_at`` (a
        view where it can be; packed: :func:`gpuldpc.packed_bits.info_of`)."""
        if info is None:
            info = (packed_bits.info_of(bits, self.code.n, self.info_at) if self.packed
                    else bits[:, self.info_at])
        return DecodeResult(bits, info, iterations, valid, bad_llr)

    def syndrome_weight(self, bits) -> np.ndarray:
        """Unsatisfied checks per frame of hard decisions uint8 [batch, n] (kernels/syndrome.cu)."""
        drv = driver()
        bits = np.ascontiguousarray(bits, dtype=np.uint8)
        if bits.ndim != 2 or bits.shape[1] != self.code.n:
            raise ValueError(f"code {self.code.name!r}: bits must have shape [batch, {self.code.n}], "
                             f"got {bits.shape}")
        if self.sparse:
            return np.asarray((self.code.H @ bits.T.astype(np.int32)) % 2).sum(axis=0).astype(np.int32)
        layout, eng = self.layout, self.engines[0]
        weight = np.zeros(bits.shape[0], np.int32)
        threads = 256
        with eng.ctx.active():
            func = eng.ctx.function("syndrome", "syndrome_weight")
            d_bits, d_weight = drv.to_device(bits), drv.to_device(weight)
            try:
                func(d_bits, d_weight, eng.plan.edges, eng.plan.layer_start, np.int32(layout.layers),
                     np.int32(layout.n), np.int32(layout.z), np.int32(bits.shape[0]),
                     block=(threads, 1, 1), grid=(-(-bits.shape[0] * layout.layers * layout.z // threads), 1))
                drv.memcpy_dtoh(weight, d_weight)
            except drv.Error as exc:
                raise CudaError(f"kernel syndrome_weight (code {self.code.name!r}, batch of "
                                f"{bits.shape[0]} frames, device {eng.ctx.id}): {exc}") from exc
        return weight

    def describe(self) -> dict:
        """Kernel, launch shape and streams per device (for logs and benchmarks)."""
        return {"kernel": self.kernel, "precision": self.precision, "devices": [
            {"id": e.ctx.id, "name": e.ctx.name,
             "module": e.ctx.module_origin(SPARSE_MODULE if self.sparse else KERNEL_MODULE),
             "registers": e.plan.attributes.registers, "frames_per_block": e.plan.shape.frames_per_block,
             "blocks_per_frame": e.plan.shape.blocks_per_frame,
             "threads": e.plan.shape.threads, "shared_bytes": e.plan.shape.shared_bytes,
             "blocks_per_sm": e.plan.shape.blocks_per_sm, "frames_per_wave": e.plan.frames_per_wave,
             "streams": e.streams, "chunk_frames": e.chunk} for e in self.engines]}

    def __repr__(self):
        return (f"CudaDecoder({self.code.name!r}, {self.algorithm}, {self.schedule}, {self.precision}, "
                f"max_iterations={self.max_iterations}, devices={[e.ctx.id for e in self.engines]})")
