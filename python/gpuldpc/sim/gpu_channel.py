"""One batch on the GPU: the codeword pool lives on the device, LLRs are made there.

:class:`DeviceTransmitter` uploads the pool of :class:`~gpuldpc.sim.frames.Transmitter`
once and launches ``kernels/sim_noise.cu`` per batch: the same counter-based
Philox4x64-10 stream and Box-Muller normals as :mod:`gpuldpc.sim.noise`, the
same channel arithmetic as :mod:`gpuldpc.sim.frames`, so a GPU batch equals
the CPU's regeneration of it to a few float32 ulp (tests/sim/test_gpu_noise.py).

The decoder reads the LLRs straight from device memory
(:meth:`gpuldpc.Decoder.decode_device`): no host round trip per batch, only the
hard decisions, iterations and flags come back.  :meth:`DeviceTransmitter.llr_host`
copies a batch to the host for the regeneration test.  Context, kernel loading
(installed fatbin, else ``kernels/sim_noise.cu`` compiled once and cached) and
pinned memory are the cuda backend's
(:class:`gpuldpc.cuda.DeviceContext`, DESIGN.md "GPU rules"); a worker process
pinned to one GPU (``CUDA_VISIBLE_DEVICES``) sees it as device 0.
"""
from __future__ import annotations

import time

import numpy as np

from .. import channel
from .frames import POOL_SIZE, BatchCounts, Transmitter, count_batch
from .noise import batch_key

__all__ = ["DeviceTransmitter", "simulate_batch_on_device"]

_THREADS = 256
_MODULE = "sim_noise"


class DeviceTransmitter:
    """The pool of ``transmitter`` on the current GPU and the batch-LLR kernels.

    Parameters
    ----------
    transmitter : Transmitter
        Host pool (same seed and code) whose words the device sends.
    device : int
        CUDA device id (0 in a worker process pinned to one GPU).
    """

    def __init__(self, transmitter: Transmitter, device: int = 0):
        from ..cuda import DeviceContext, driver

        self._drv = driver()
        self.transmitter = transmitter
        code = transmitter.code
        self.m = code.bits_per_symbol
        self.nbits = code.n * self.m
        self.out_width = code.n if code.is_binary else code.n * code.q     # floats per frame
        self.ctx = DeviceContext(device)
        with self.ctx.active():
            if code.is_binary:
                self._kernel = self.ctx.function(_MODULE, "sim_bit_llr")
                self._kernel.prepare("PiiqiQQffP")
            else:
                self._kernel = self.ctx.function(_MODULE, "sim_symbol_llr")
                self._kernel.prepare("PiiiqiQQffP")
            self._pool = self._drv.mem_alloc(transmitter.bits.nbytes)
            self._drv.memcpy_htod(self._pool, transmitter.bits)
            self._stream = self._drv.Stream()
        self._llr = None
        self._host = None
        self._capacity = 0

    def _reserve(self, frames: int):
        from ..cuda import pinned_empty

        if frames > self._capacity:
            self._llr = self._drv.mem_alloc(4 * frames * self.out_width)
            self._host = pinned_empty(frames * self.out_width, np.float32)
            self._capacity = frames

    def _launch(self, ebn0_db: float, batch: int, frames: int):
        code = self.transmitter.code
        sigma = channel.sigma_from_ebn0(ebn0_db, code.k / code.n)
        k0, k1 = (np.uint64(k) for k in batch_key(self.transmitter.seed, code.name, ebn0_db, batch))
        first_row = np.int64((int(batch) * frames) % POOL_SIZE)
        gain, sigma32 = np.float32(2.0 / sigma ** 2), np.float32(sigma)
        self._reserve(frames)
        if code.is_binary:
            blocks = -(-frames * self.nbits // 8)
            self._kernel.prepared_async_call(((blocks + _THREADS - 1) // _THREADS, 1), (_THREADS, 1, 1),
                                             self._stream, self._pool, np.int32(POOL_SIZE),
                                             np.int32(self.nbits), first_row, np.int32(frames), k0, k1, sigma32,
                                             gain, self._llr)
        else:
            symbols = frames * code.n
            self._kernel.prepared_async_call(((symbols + _THREADS - 1) // _THREADS, 1), (_THREADS, 1, 1),
                                             self._stream, self._pool, np.int32(POOL_SIZE), np.int32(code.n),
                                             np.int32(self.m), first_row, np.int32(frames), k0, k1, sigma32,
                                             gain, self._llr)

    def llr_device(self, ebn0_db: float, batch: int, frames: int):
        """Launch the batch's LLRs into the device buffer (valid until the next call); returns it."""
        with self.ctx.active():
            self._launch(ebn0_db, batch, frames)
            self._stream.synchronize()
        return self._llr

    def llr_host(self, ebn0_db: float, batch: int, frames: int) -> np.ndarray:
        """The batch's LLRs made on the device, copied to the reused page-locked buffer
        ([frames, n] or [frames, n, q] float32)."""
        code = self.transmitter.code
        with self.ctx.active():
            self._launch(ebn0_db, batch, frames)
            host = self._host[:frames * self.out_width]
            self._drv.memcpy_dtoh_async(host, self._llr, self._stream)
            self._stream.synchronize()
        shape = (frames, code.n) if code.is_binary else (frames, code.n, code.q)
        return host.reshape(shape)


def simulate_batch_on_device(decoder, device: DeviceTransmitter, ebn0_db: float, batch: int,
                             frames: int) -> BatchCounts:
    """LLRs on the GPU, decode them there, count (module docstring)."""
    t0 = time.perf_counter()
    result = decoder.decode_device(device.llr_device(ebn0_db, batch, frames), frames)
    return count_batch(device.transmitter, batch, result, time.perf_counter() - t0, decoder.backend)
