"""Fixtures for the GPU tests: the CUDA package (skip without a GPU), noisy frames,
and reference-decoder results.

Reference results are cached on disk when ``GPULDPC_REFERENCE_CACHE`` is set
(reference_cache.py, loaded by path: the tests use pytest's importlib mode).
"""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.codes.qc import in_layer_order

_spec = importlib.util.spec_from_file_location("gpu_reference_cache",
                                               Path(__file__).with_name("reference_cache.py"))
reference_cache = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference_cache)
reference_decode = reference_cache.reference_decode


@pytest.fixture(scope="session")
def cuda():
    """The gpuldpc.cuda package; skips the test without PyCUDA or a CUDA device."""
    from gpuldpc import cuda as gpu

    if not gpu.available():
        pytest.skip("needs an NVIDIA GPU and PyCUDA")
    return gpu


def same_decisions(got, want):
    """Two DecodeResults with equal hard decisions (bits or GF(q) symbols; the differing
    frames named), iteration counts and syndrome flags; and equal ``info`` where both are host
    arrays (a GF(q) decoder's is DMA'd run by run where it is not a view: gpuldpc.result.info_runs)."""
    bad = np.flatnonzero((got.bits != want.bits).any(axis=1))
    assert bad.size == 0, f"{bad.size} frames differ in their decisions, first {bad[:5].tolist()}"
    if isinstance(got.info, np.ndarray) and isinstance(want.info, np.ndarray):
        np.testing.assert_array_equal(got.info, want.info)
    np.testing.assert_array_equal(got.iterations, want.iterations)
    np.testing.assert_array_equal(got.valid, want.valid)


@pytest.fixture(scope="session")
def same():
    """:func:`same_decisions`, for tests comparing a GPU result with the reference's."""
    return same_decisions


def code_in_layer_order(code, dec):
    """``code`` with its base rows in the order the CUDA decoder ``dec`` (a ``gl.Decoder`` or a
    ``CudaDecoder``) updates its layers (gpuldpc.codes.qc.in_layer_order): the latency preset's
    paired-layer kernel (gpuldpc.cuda.layout.pair_layers, WiMAX rate 1/2) decodes in
    ``layout.order``; the code itself where the order is 0..mb-1."""
    cuda_decoder = dec._impl.decoder if hasattr(dec, "_impl") else dec
    order = getattr(cuda_decoder.layout, "order", None)
    return code if order is None else in_layer_order(code, order)


@pytest.fixture(scope="session")
def layered_as():
    """:func:`code_in_layer_order`."""
    return code_in_layer_order


def noisy_frames(code, ebn0_db, frames, seed):
    """(codewords, float32 LLRs) of random codewords over BPSK/AWGN (gpuldpc.channel)."""
    rng = np.random.default_rng(seed)
    cw = code.encode(rng.integers(0, 2, (frames, code.k), dtype=np.uint8))
    return cw, gl.channel.transmit(code, cw, ebn0_db, rng)


@pytest.fixture(scope="session")
def frames():
    return noisy_frames


@pytest.fixture(scope="session")
def reference():
    return reference_decode


class FakeKernels:
    """A stand-in context for plans built without a GPU: ``function(module, name)`` gives a
    kernel whose ``prepare`` checks the format against ``formats[(module, name)]`` and whose
    prepared calls are recorded in ``calls`` as (name, grid, block, args)."""

    def __init__(self, formats):
        self.formats, self.calls = formats, []

    def function(self, module, name):
        fake, expected = self, self.formats[(module, name)]

        class Kernel:
            def prepare(self, types):
                assert types == expected

            def prepared_async_call(self, grid, block, stream, *args):
                fake.calls.append((name, grid, block, args))

        return Kernel()

    def inner_plan(self, name, bits_width, frame_bytes=0, scratch_per_frame=0, soft_width=0):
        """A stand-in decoding plan for a stage (gpuldpc.cuda.stages) to wrap: its attributes as
        given, ``scratch_per_frame`` bytes of scratch a frame, each launch recorded in ``calls`` as
        ("decode", count, dev_in, out, scratch, capacity)."""
        calls = self.calls

        class Inner:
            def frame_bytes(self, kind):
                return frame_bytes

            def scratch_bytes(self, frames):
                return scratch_per_frame * frames

            def launch(self, stream, count, dev_in, kind, out, scratch, capacity):
                calls.append(("decode", count, dev_in, out, scratch, capacity))

        inner = Inner()
        inner.name, inner.bits_width, inner.soft_width = name, bits_width, soft_width
        return inner


@pytest.fixture
def fake_kernels():
    return FakeKernels
