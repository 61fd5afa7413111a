"""Where batches run: in this process, one local process per GPU, or a Dask cluster.

All three offer the same three calls to the runner: ``submit(fn, task) ->
future``, ``wait_first(futures) -> finished futures``, ``close()``; and
``workers``, the number of batches worth keeping in flight.

* :class:`InlineExecutor` runs each batch at submit time (one process, the
  default when one device does the work).
* :class:`LocalProcessExecutor` starts ``workers`` processes (``spawn``), each
  pinned to one GPU through ``CUDA_VISIBLE_DEVICES`` before CUDA is touched, so
  every visible GPU of the host decodes at once -- the role dask-cuda's
  ``LocalCUDACluster`` plays, without needing Dask on the GPU host.
* :class:`DaskExecutor` connects to an existing ``dask.distributed`` scheduler
  (``tcp://host:port``); its workers need ``gpuldpc`` importable (and a GPU
  each for the cuda backend: start them with one thread per GPU, e.g.
  ``dask-cuda-worker`` or ``CUDA_VISIBLE_DEVICES=i dask worker --nthreads 1``).
"""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
from concurrent.futures.process import BrokenProcessPool

__all__ = ["InlineExecutor", "LocalProcessExecutor", "DaskExecutor", "visible_gpus"]


class InlineExecutor:
    """Run every task in the calling process, at submit time."""

    workers = 1

    def submit(self, fn, task):
        future = cf.Future()
        try:
            future.set_result(fn(task))
        except BaseException as exc:  # handed to the runner through the future, as a pool would
            future.set_exception(exc)
        return future

    def wait_first(self, futures):
        return [f for f in futures if f.done()]

    def close(self):
        pass


def _pin_device(device):
    if device is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(device)


class LocalProcessExecutor:
    """``workers`` local processes; worker ``i`` sees only GPU ``devices[i]`` when given.

    A worker process that dies (a crash inside a batch) fails its batches with
    ``BrokenProcessPool``, which the runner retries; the next batch for that worker
    starts a new process in its place."""

    def __init__(self, workers: int, devices=None):
        devices = list(devices) if devices is not None else [None] * workers
        self._devices = devices[:workers]
        self._pools = [self._start(d) for d in self._devices]
        self._load = [0] * len(self._pools)
        self._owner: dict = {}
        self.workers = len(self._pools)

    @staticmethod
    def _start(device):
        ctx = multiprocessing.get_context("spawn")
        return cf.ProcessPoolExecutor(1, mp_context=ctx, initializer=_pin_device, initargs=(device,))

    def submit(self, fn, task):
        i = min(range(self.workers), key=self._load.__getitem__)
        try:
            future = self._pools[i].submit(fn, task)
        except BrokenProcessPool:          # its process died: start another
            self._pools[i].shutdown(wait=False)
            self._pools[i] = self._start(self._devices[i])
            future = self._pools[i].submit(fn, task)
        self._load[i] += 1
        self._owner[future] = i
        return future

    def wait_first(self, futures):
        done, _ = cf.wait(futures, return_when=cf.FIRST_COMPLETED)
        for f in done:
            self._load[self._owner.pop(f)] -= 1
        return list(done)

    def close(self):
        for pool in self._pools:
            pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """Tasks on a ``dask.distributed`` cluster at ``address``; the client stays here."""

    def __init__(self, address: str):
        try:
            from distributed import Client
        except ImportError as exc:
            raise RuntimeError("--scheduler needs dask.distributed: pip install dask distributed") from exc
        self._client = Client(address, timeout="30s")
        self.workers = max(1, sum(self._client.nthreads().values()))

    def submit(self, fn, task):
        return self._client.submit(fn, task, pure=False)

    def wait_first(self, futures):
        from distributed import wait

        done, _ = wait(list(futures), return_when="FIRST_COMPLETED")
        return list(done)

    def close(self):
        self._client.close()


def visible_gpus() -> int:
    """Number of CUDA devices this process sees (0 without PyCUDA or a driver)."""
    try:
        import pycuda.driver as drv

        drv.init()
        return drv.Device.count()
    except Exception:  # no PyCUDA, no driver, no device: all mean "no GPU here"
        return 0
