"""Launch shapes from the device's limits and the kernel's own attributes.

Paper 001 section IV-D (adaptive performance tuning): maximize the useful threads
resident on a multiprocessor under its four limits,

    threads/block   = roundup(N_CW / F * Z * lanes, warp)  <= max threads per block
    active threads  = threads/block * blocks/SM <= max threads per SM
    registers       = active threads * registers/thread <= registers per SM
    shared memory   = blocks/SM * shared/block <= shared memory per SM

where ``N_CW`` (frames per block) is ours to choose, ``lanes`` is the kernel's
threads per check row (1, or 2 / 8 for the edge-parallel latency kernels), ``F``
its frames per thread (2 for the float16 kernels, which pack a frame pair in each
half2 word: ``N_CW`` even, ``N_CW / F`` words of posteriors per column, see
:func:`shared_bytes`), and the
thread limit, register and shared memory figures are the compiled kernel's
(``cuFuncGetAttribute``) and the layout's (posteriors of ``N_CW`` frames).
Unlike paper 004 we do not pad ``Z`` to the warp per frame: frames share warps,
so only the block's last warp has idle lanes.
A *wave* is ``blocks/SM * SMs`` blocks: the frames one launch keeps resident.

Presets
-------
``throughput``: ``N_CW`` maximizing resident useful threads per SM; each
stream launches ``waves_per_chunk`` waves; ``streams`` streams depth-first.
``latency``: one frame (a float16 kernel: one frame pair) per block (a small
batch spreads over the most multiprocessors) and one stream; the decoder picks the edge-parallel kernel
where the code fits it (:func:`gpuldpc.cuda.decoder.kernel_name`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import BackendUnavailable

WARP = 32
EDGE_PAD = 32                  # kernels/qc_decode.cu kEdgePad
PRESETS = ("throughput", "latency")


@dataclass(frozen=True)
class DeviceLimits:
    """Per-device limits (``cuDeviceGetAttribute``)."""

    sm_count: int
    max_threads_per_sm: int
    max_threads_per_block: int
    registers_per_sm: int
    shared_per_sm: int
    shared_per_block_optin: int
    max_blocks_per_sm: int = 32
    register_granule: int = 256     # registers are allocated per warp in units of 256
    sub_partitions: int = 4         # schedulers an SM, each with a quarter of the register file (sm_70 .. sm_90)
    shared_reserved: int = 1024     # per block, reserved by the driver (sm_80+)
    l2_bytes: int = 0               # L2 cache (0: not known)


@dataclass(frozen=True)
class KernelAttributes:
    """Attributes of one compiled kernel (``cuFuncGetAttribute``)."""

    registers: int
    static_shared: int
    local_bytes: int
    max_threads: int


@dataclass(frozen=True)
class LaunchShape:
    """How one stream's chunk of frames is launched."""

    frames_per_block: int
    threads: int
    shared_bytes: int
    blocks_per_sm: int
    sm_count: int
    blocks_per_frame: int = 1       # thread-block cluster kernels: the CTAs that share one frame

    @property
    def frames_per_wave(self) -> int:
        return self.frames_per_block * self.blocks_per_sm * self.sm_count // self.blocks_per_frame

    def grid_blocks(self, frames: int) -> int:
        """Blocks of a launch of ``frames`` frames."""
        return -(-frames // self.frames_per_block) * self.blocks_per_frame


def shared_bytes(layout, frames_per_block: int, flooding: bool, frames_per_thread: int = 1,
                 row_blocks: int = 0, state_bytes: int = 0) -> int:
    """Dynamic shared memory of one block (kernels/qc_decode.cu ``decode_frames``): posteriors
    (4-byte words), block table, layer starts, flags.  ``frames_per_thread`` 2 (the float16
    kernels): a word holds a frame pair, a pair's slot is ``n + z`` words rounded up to a
    multiple of 4 (its pad words), and the table has ``row_blocks`` entries a layer.
    ``state_bytes``: what the kernel keeps after these (the shared-state latency kernel's
    messages and column addresses, :func:`gpuldpc.cuda.decoder.kernel_state_bytes`)."""
    if frames_per_thread == 1:
        floats = (3 if flooding else 1) * frames_per_block * layout.n
        table = layout.nblocks + EDGE_PAD              # EDGE_PAD spare entries
    else:
        if row_blocks < 1:
            raise ValueError("the float16 kernels' shared memory needs row_blocks, their block-table width")
        floats = (3 if flooding else 1) * (frames_per_block // 2) * (-(-(layout.n + layout.z) // 4) * 4)
        table = layout.layers * row_blocks
    floats += floats & 1
    # the flags end with the +inf pad slot
    return 4 * floats + 8 * table + 4 * (layout.layers + 1) + 12 * frames_per_block + 4 + state_bytes


def threads_per_block(z: int, frames_per_block: int, lanes: int = 1, frames_per_thread: int = 1) -> int:
    return -(-(frames_per_block // frames_per_thread) * z * lanes // WARP) * WARP


def blocks_per_sm(dev: DeviceLimits, kern: KernelAttributes, threads: int, shared: int) -> int:
    """Resident blocks per multiprocessor under the four limits (0: does not fit).  Registers as
    CUDA's own calculator counts them (``cuda_occupancy.h``, ``cudaOccMaxBlocksPerSMRegsLimit``):
    a warp lives on one of the SM's ``sub_partitions`` schedulers and takes its registers from
    that scheduler's share of the file, so the SM holds ``sub_partitions x floor(share /
    registers a warp)`` warps, and a block must fit the file with its warps rounded up to the
    sub-partitions.  (Nsight Compute's "Block Limit Registers" on the H200: 139 registers x 7
    warps, 1 block, where the whole file divided by the block would give 2; 64 x 3 warps, 10;
    172 x 4 warps, 2.)"""
    warps = threads // WARP
    regs_per_warp = -(-kern.registers * WARP // dev.register_granule) * dev.register_granule
    per_partition = dev.registers_per_sm // dev.sub_partitions // max(regs_per_warp, 1)
    fits = regs_per_warp * -(-warps // dev.sub_partitions) * dev.sub_partitions <= dev.registers_per_sm
    by_regs = dev.sub_partitions * per_partition // max(warps, 1) if fits else 0
    by_threads = dev.max_threads_per_sm // threads
    per_block_shared = shared + kern.static_shared + dev.shared_reserved
    by_shared = dev.shared_per_sm // per_block_shared
    return max(0, min(dev.max_blocks_per_sm, by_regs, by_threads, by_shared))


def launch_shape(layout, dev: DeviceLimits, kern: KernelAttributes, flooding: bool,
                 preset: str = "throughput", frames_per_block: int | None = None,
                 lanes: int = 1, frames_per_thread: int = 1, row_blocks: int = 0,
                 state_bytes: int = 0) -> LaunchShape:
    """Frames per block and the resulting block shape (paper 001 IV-D, see module docstring):
    the first of :func:`ranked_shapes`."""
    return ranked_shapes(layout, dev, kern, flooding, preset, frames_per_block, lanes, frames_per_thread,
                         row_blocks, state_bytes)[0]


def ranked_shapes(layout, dev: DeviceLimits, kern: KernelAttributes, flooding: bool,
                  preset: str = "throughput", frames_per_block: int | None = None,
                  lanes: int = 1, frames_per_thread: int = 1, row_blocks: int = 0,
                  state_bytes: int = 0) -> list[LaunchShape]:
    """The shapes that fit, best first: the most useful resident threads per SM, ties to fewer
    frames per block; ``frames_per_block`` or ``preset="latency"`` (one frame, or pair, a block)
    give one shape.  ``kern.max_threads`` is the kernel's ``__launch_bounds__``; frames per block
    are a multiple of ``frames_per_thread``; ``row_blocks``, ``state_bytes``: see :func:`shared_bytes`."""
    if preset not in PRESETS:
        raise ValueError(f"preset={preset!r} is not one of {', '.join(map(repr, PRESETS))}")
    limit = min(kern.max_threads, dev.max_threads_per_block)
    pack = frames_per_thread

    def shape(fpb):
        threads = threads_per_block(layout.z, fpb, lanes, pack)
        shared = shared_bytes(layout, fpb, flooding, pack, row_blocks, state_bytes)
        if threads > limit or shared > dev.shared_per_block_optin:
            return None
        bps = blocks_per_sm(dev, kern, threads, shared)
        return LaunchShape(fpb, threads, shared, bps, dev.sm_count) if bps else None

    if frames_per_block is not None:
        if frames_per_block % pack:
            raise ValueError(f"frames_per_block={frames_per_block} is not a multiple of {pack}: this kernel "
                             f"serves {pack} frames a thread (precision='float16')")
        got = shape(int(frames_per_block))
        if got is None:
            raise ValueError(f"frames_per_block={frames_per_block} does not fit this device: "
                             f"{threads_per_block(layout.z, frames_per_block, lanes, pack)} threads (limit {limit}), "
                             f"{shared_bytes(layout, frames_per_block, flooding, pack, row_blocks, state_bytes)} B "
                             f"shared memory "
                             f"(limit {dev.shared_per_block_optin} B)")
        return [got]
    candidates = [s for s in (shape(f) for f in range(pack, limit // (layout.z * lanes) * pack + 1, pack))
                  if s is not None]
    if not candidates:
        raise BackendUnavailable(f"code with n={layout.n}, z={layout.z}: one frame{' pair' if pack == 2 else ''} needs "
                         f"{shared_bytes(layout, pack, flooding, pack, row_blocks, state_bytes)} B of shared memory and "
                         f"{threads_per_block(layout.z, pack, lanes, pack)} threads; this device allows "
                         f"{dev.shared_per_block_optin} B and {limit}")
    if preset == "latency":
        return candidates[:1]
    return sorted(candidates, key=lambda s: (-s.frames_per_block * layout.z * s.blocks_per_sm, s.frames_per_block))
