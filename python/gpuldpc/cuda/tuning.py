"""Launch shapes from the device's limits and the kernel's own attributes.

Paper 001 section IV-D (adaptive performance tuning): maximize the useful threads
resident on a multiprocessor under its four limits,

    threads/block   = roundup(N_CW * Z * lanes, warp)  <= max threads per block
    active threads  = threads/block * blocks/SM <= max threads per SM
    registers       = active threads * registers/thread <= registers per SM
    shared memory   = blocks/SM * shared/block <= shared memory per SM

where ``N_CW`` (frames per block) is ours to choose, ``lanes`` is the kernel's
threads per check row (1, or 8 for the edge-parallel latency kernel), and the
thread limit, register and shared memory figures are the compiled kernel's
(``cuFuncGetAttribute``) and the layout's (posteriors of ``N_CW`` frames).
Unlike paper 004 we do not pad ``Z`` to the warp per frame: frames share warps,
so only the block's last warp has idle lanes.
A *wave* is ``blocks/SM * SMs`` blocks: the frames one launch keeps resident.

Presets
-------
``throughput``: ``N_CW`` maximizing resident useful threads per SM; each
stream launches ``waves_per_chunk`` waves; ``streams`` streams depth-first.
``latency``: one frame per block (a small batch spreads over the most
multiprocessors) and one stream; the decoder picks the edge-parallel kernel
where the code fits it (:func:`gpuldpc.cuda.decoder.kernel_name`).
"""
from __future__ import annotations

from dataclasses import dataclass

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
    shared_reserved: int = 1024     # per block, reserved by the driver (sm_80+)


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


def shared_bytes(layout, frames_per_block: int, flooding: bool) -> int:
    """Dynamic shared memory of one block (kernels/qc_decode.cu ``decode_frames``)."""
    floats = (3 if flooding else 1) * frames_per_block * layout.n
    floats += floats & 1
    # the block table has EDGE_PAD spare entries; the flags end with the +inf pad slot
    return 4 * floats + 8 * (layout.nblocks + EDGE_PAD) + 4 * (layout.layers + 1) + 12 * frames_per_block + 4


def threads_per_block(z: int, frames_per_block: int, lanes: int = 1) -> int:
    return -(-frames_per_block * z * lanes // WARP) * WARP


def blocks_per_sm(dev: DeviceLimits, kern: KernelAttributes, threads: int, shared: int) -> int:
    """Resident blocks per multiprocessor under the four limits (0: does not fit)."""
    warps = threads // WARP
    regs_per_warp = -(-kern.registers * WARP // dev.register_granule) * dev.register_granule
    by_regs = dev.registers_per_sm // max(regs_per_warp * warps, 1)
    by_threads = dev.max_threads_per_sm // threads
    per_block_shared = shared + kern.static_shared + dev.shared_reserved
    by_shared = dev.shared_per_sm // per_block_shared
    return max(0, min(dev.max_blocks_per_sm, by_regs, by_threads, by_shared))


def launch_shape(layout, dev: DeviceLimits, kern: KernelAttributes, flooding: bool,
                 preset: str = "throughput", frames_per_block: int | None = None,
                 lanes: int = 1) -> LaunchShape:
    """Frames per block and the resulting block shape (paper 001 IV-D, see module docstring);
    ``kern.max_threads`` is the kernel's ``__launch_bounds__``."""
    if preset not in PRESETS:
        raise ValueError(f"preset={preset!r} is not one of {', '.join(map(repr, PRESETS))}")
    limit = min(kern.max_threads, dev.max_threads_per_block)

    def shape(fpb):
        threads = threads_per_block(layout.z, fpb, lanes)
        shared = shared_bytes(layout, fpb, flooding)
        if threads > limit or shared > dev.shared_per_block_optin:
            return None
        bps = blocks_per_sm(dev, kern, threads, shared)
        return LaunchShape(fpb, threads, shared, bps, dev.sm_count) if bps else None

    if frames_per_block is not None:
        got = shape(int(frames_per_block))
        if got is None:
            raise ValueError(f"frames_per_block={frames_per_block} does not fit this device: "
                             f"{threads_per_block(layout.z, frames_per_block, lanes)} threads (limit {limit}), "
                             f"{shared_bytes(layout, frames_per_block, flooding)} B shared memory "
                             f"(limit {dev.shared_per_block_optin} B)")
        return got
    candidates = [s for s in (shape(f) for f in range(1, limit // (layout.z * lanes) + 1)) if s is not None]
    if not candidates:
        raise ValueError(f"code with n={layout.n}, z={layout.z}: one frame needs "
                         f"{shared_bytes(layout, 1, flooding)} B of shared memory and "
                         f"{threads_per_block(layout.z, 1, lanes)} threads; this device allows "
                         f"{dev.shared_per_block_optin} B and {limit}")
    if preset == "latency":
        return candidates[0]
    # most useful resident threads per SM; ties -> fewer frames per block
    return max(candidates, key=lambda s: (s.frames_per_block * layout.z * s.blocks_per_sm,
                                          -s.frames_per_block))
