"""The cuda path of gl.MixedDecoder without a GPU (runs everywhere): the index table of each
piece (gpuldpc.cuda.mixed_pipeline.piece_table), followed through the kernels' gather and
scatter in NumPy, put every frame back at its input position; the vector width of the copy
kernels; which MixedDecoders take the cuda path; the pipeline with host memory for the GPU."""
import contextlib
import ctypes

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.cuda.mixed_pipeline import piece_table
from gpuldpc.cuda.mixed_rows import vector_bytes
from gpuldpc.decoders.mixed import _gathers_on_gpu


def tables(idx, codes, piece):
    """Each piece's table and counts as the pipeline makes them (piece_table), in one array."""
    table = np.full(idx.size, -1, np.int32)
    counts = [piece_table(idx[a:a + piece], codes, table[a:a + piece]) for a in range(0, idx.size, piece)]
    return table, np.array(counts).reshape(-1, codes)


def test_a_piece_table_groups_the_piece_by_code_in_input_order():
    table = np.full(7, -1, np.int32)
    counts = piece_table(np.array([2, 0, 1, 0, 2, 2, 0]), 4, table)
    np.testing.assert_array_equal(table, [1, 3, 6, 2, 0, 4, 5])
    np.testing.assert_array_equal(counts, [3, 1, 3, 0])             # code 3 has no frames
    table, counts = tables(np.array([2, 0, 1, 0, 2, 2, 0]), 3, 3)
    np.testing.assert_array_equal(table, [1, 2, 0, 0, 1, 2, 0])     # pieces 0..2, 3..5, 6: rows within each
    np.testing.assert_array_equal(counts, [[1, 1, 1], [1, 0, 2], [1, 0, 0]])
    idx = np.random.default_rng(5).integers(0, 40000, 9000)          # more codes than a 16-bit key holds
    table = np.full(9000, -1, np.int32)
    counts = piece_table(idx, 40000, table)
    np.testing.assert_array_equal(table, np.argsort(idx, kind="stable"))
    assert counts.size == 40000 and counts.sum() == 9000 and counts[idx[0]] == (idx == idx[0]).sum()


@pytest.mark.parametrize("frames, piece", [(1000, 128), (1000, 1000), (1000, 1), (7, 3)])
def test_gather_and_scatter_through_the_tables_restore_input_order(frames, piece):
    """Each piece's rows gathered per code as the gather kernel does (dst[i] = src[rows[i]]),
    "decoded" (each code's rows transformed on their own), scattered back as the scatter
    kernel does (dst[rows[i]] = src[i]): every frame lands at its input position, each code's
    packed rows in input order."""
    rng = np.random.default_rng(frames + piece)
    widths = (24, 20, 16)                                    # bytes a row per code
    idx = rng.choice(3, frames, p=[0.5, 0.25, 0.25])
    mixed = rng.integers(0, 256, (frames, 24), dtype=np.uint8)
    out = np.zeros((frames, 24), np.uint8)
    table, counts = tables(idx, 3, piece)
    for p, a in enumerate(range(0, frames, piece)):
        raw = mixed[a:a + piece]
        rows = table[a:a + piece]
        result = np.zeros_like(raw)
        offset = 0
        for c, count in enumerate(counts[p]):
            code_rows = rows[offset:offset + count]
            np.testing.assert_array_equal(code_rows, np.flatnonzero(idx[a:a + piece] == c))
            packed = raw[code_rows, :widths[c]]              # gather
            result[code_rows, :widths[c]] = packed ^ c       # scatter of the "decoded" rows
            offset += count
        assert offset == raw.shape[0]
        out[a:a + piece] = result
    for c, width in enumerate(widths):
        np.testing.assert_array_equal(out[idx == c, :width], mixed[idx == c, :width] ^ c)
        assert not out[idx == c, width:].any()               # padding stays zero


@pytest.mark.parametrize("sizes, v", [
    ((9216, 9216, 7776, 0x7f0000000000, 0x7f0000002400), 16),   # float32 WiMAX/WiFi rows
    ((1944, 2304, 1944, 0x7f0000000000, 0x7f0000000a00), 8),    # int8 WiFi 1944, its hard decisions
    ((4, 4, 4, 0x1000, 0x2004), 4),                             # iteration counts
    ((1150, 1150, 1152, 0x1000, 0x2000), 2),                    # float16, n = 575
    ((575, 576, 575, 0x1000, 0x2000), 1),                       # int8, n = 575
    ((9216, 9216, 9216, 0x1008, 0x2000), 8),                    # an address aligned to 8 only
])
def test_the_widest_vector_every_size_and_address_allows(sizes, v):
    assert vector_bytes(*sizes) == v


def test_which_mixed_decoders_gather_on_the_gpu():
    wimax, nb, nr = gl.codes.get("wimax-2304-1/2"), gl.codes.get("gf16-300-150"), gl.codes.nr(200, 300)
    cuda2 = ("cuda", "cuda")
    assert _gathers_on_gpu((wimax, nb), cuda2, {"max_iterations": 5})
    assert _gathers_on_gpu((wimax, wimax), cuda2, {"positive_llr_bit": 1, "llr_dtype": "int8"})
    assert not _gathers_on_gpu((wimax, nb), ("cuda", "cpu"), {})
    assert not _gathers_on_gpu((wimax, wimax), cuda2, {"soft_output": "posterior"})
    assert not _gathers_on_gpu((wimax, nr), cuda2, {})               # shaped: E LLRs from host arrays only
    assert not _gathers_on_gpu((wimax, nb), cuda2, {"positive_llr_bit": 1})
    dec = gl.MixedDecoder(["wifi-648-1/2", "wifi-648-2/3"], backend="reference")
    assert not dec.on_gpu and dec.piece_frames == (8, 8)          # an eighth of 64 a code


# ----------------------------------------------------------------------------------------------
# The pipeline's addresses, tables and copies, with host memory standing in for the GPU: every
# CUDA call of gpuldpc.cuda.mixed_pipeline replaced by its effect on bytes at the addresses it
# is given (copies and the kernels at once, in issue order), each code's decoder by a host
# gl.Decoder reading the rows at the DeviceLLR's address.

def _at(address: int, nbytes: int) -> np.ndarray:
    return np.ctypeslib.as_array((ctypes.c_uint8 * max(nbytes, 1)).from_address(address))[:nbytes]


class _Memory:
    def __init__(self, nbytes):
        self.bytes = np.zeros(nbytes, np.uint8)

    def __int__(self):
        return self.bytes.ctypes.data

    def free(self):
        pass


class _Stream:
    handle = 0x5150

    def synchronize(self):
        pass


class _Driver:
    Stream = _Stream
    Error = MemoryError = RuntimeError

    @staticmethod
    def mem_alloc(nbytes):
        return _Memory(nbytes)

    @staticmethod
    def memcpy_htod_async(dst, src, stream):
        assert src.flags.c_contiguous
        _at(int(dst), src.nbytes)[:] = src.reshape(-1).view(np.uint8)

    @staticmethod
    def memcpy_dtoh_async(dst, src, stream):
        dst.reshape(-1).view(np.uint8)[:] = _at(int(src), dst.nbytes)

    @staticmethod
    def memset_d8_async(dst, value, count, stream):
        _at(int(dst), count)[:] = value


class _Kernels:
    """kernels/mixed_rows.cu in NumPy; every access aligned to the vector the launcher picks."""

    def __init__(self, ctx):
        pass

    @staticmethod
    def _move(src, src_pitch, dst, dst_pitch, rows, width, count, gather):
        assert vector_bytes(width, src_pitch, dst_pitch, src, dst) >= min(4, width)
        table = _at(rows, 4 * count).view(np.int32)
        for i, r in enumerate(table):
            s, d = (r, i) if gather else (i, r)
            _at(dst + int(d) * dst_pitch, width)[:] = _at(src + int(s) * src_pitch, width)

    def gather(self, stream, *args):
        self._move(*args, gather=True)

    def scatter(self, stream, *args):
        self._move(*args, gather=False)


class _Context:
    def __init__(self, device):
        self.id = device

    def active(self):
        return contextlib.nullcontext()


class _Pool:
    def __init__(self, ctx):
        pass

    @staticmethod
    def take(nbytes, guard):
        return np.zeros(nbytes, np.uint8)


class _Registry:
    def __init__(self, takes):
        self.takes, self.pinned = takes, []

    def covers(self, arr):
        return False                     # nothing held by Decoder.page_lock here

    def pin(self, arr):
        self.pinned.append(arr)
        return self.takes


class _HostPlan:
    """A code's decoder plan, its kernels replaced by a host gl.Decoder: reads ``count`` rows at
    ``dev_in``, writes hard decisions, iteration counts and flag bytes (bit 0 valid, bit 1 bad
    LLRs) at the three addresses of ``out``, as the kernels do."""

    def __init__(self, code, backend):
        self.dec = gl.Decoder(code, backend=backend, on_bad_llr="erase", max_iterations=5)
        self.n, self.name = code.n, code.name
        self.launches = []

    @staticmethod
    def scratch_bytes(frames):
        return 0

    def launch(self, stream, count, dev_in, kind, out, scratch, capacity):
        assert kind == "llr" and dev_in % 16 == 0 and scratch is None and out[3] == 0
        self.launches.append(count)
        res = self.dec.decode(_at(dev_in, 4 * count * self.n).view(np.float32).reshape(count, self.n).copy())
        _at(out[0], count * self.n)[:] = res.bits.reshape(-1)
        _at(out[1], 4 * count).view(np.int32)[:] = res.iterations
        _at(out[2], count)[:] = res.valid | res.bad_llr << 1


@pytest.mark.parametrize("piece, dtype, in_place", [(64, np.float32, True), (1000, np.float32, True),
                                                    (7, np.float64, False), (50, np.float32, False)])
def test_the_pipeline_puts_every_frame_back_in_input_order(monkeypatch, backend, piece, dtype, in_place):
    """Three codes (n = 576, 648, 648), rows of 700 LLRs, NaN frames: bits, iterations, valid and
    bad_llr of each frame equal its code's gl.Decoder on its frames alone; narrower rows padded
    with zeros; the slots reused (pieces smaller than the batch) or one piece; the caller's
    array copied in place or staged (float64, or an array the registry refuses)."""
    from gpuldpc.cuda import host_memory as hm
    from gpuldpc.cuda import mixed_pipeline as mp

    registry = _Registry(in_place)
    for name, value in (("driver", lambda: _Driver), ("DeviceContext", _Context), ("RowKernels", _Kernels),
                        ("ResultPool", _Pool), ("pinned_empty", lambda shape, dtype, ctx: np.zeros(shape, dtype))):
        monkeypatch.setattr(mp, name, value)
    monkeypatch.setattr(hm, "is_pinned", lambda a: False)
    monkeypatch.setattr(mp.HostRegistry, "shared", classmethod(lambda cls, ctx: registry))
    codes = [gl.codes.get(n) for n in ("wimax-576-1/2", "wifi-648-2/3", "wifi-648-1/2")]
    rng = np.random.default_rng(piece)
    idx = rng.choice(3, 300, p=[0.5, 0.25, 0.25])
    llr = np.full((300, 700), np.nan)
    for c, code in enumerate(codes):
        rows = np.flatnonzero(idx == c)
        cw = code.encode(rng.integers(0, 2, (rows.size, code.k), dtype=np.uint8))
        llr[rows, :code.n] = gl.channel.transmit(code, cw, 2.5, rng)
    llr[np.flatnonzero(idx == 1)[[2, 9]], 5] = np.inf
    llr = llr.astype(dtype)
    plans = [_HostPlan(c, backend) for c in codes]
    pipe = mp.MixedPipeline(plans, ["llr"] * 3, [576, 648, 648], [576, 648, 648], piece, 0)
    bits, iterations, valid, bad = pipe.decode(llr, idx, np.dtype(np.float32))
    assert bits.shape == (300, 648)
    assert [a is llr for a in registry.pinned] == ([True] if dtype == np.float32 else [])   # float64: staged
    for c, code in enumerate(codes):
        rows = np.flatnonzero(idx == c)
        want = gl.Decoder(code, backend=backend, on_bad_llr="erase", max_iterations=5).decode(
            llr[rows, :code.n].astype(np.float32))
        np.testing.assert_array_equal(bits[rows, :code.n], want.bits)
        assert not bits[rows, code.n:].any()
        np.testing.assert_array_equal(iterations[rows], want.iterations)
        np.testing.assert_array_equal(valid[rows], want.valid)
        np.testing.assert_array_equal(bad[rows], want.bad_llr)
        assert sum(plans[c].launches) == rows.size and max(plans[c].launches) <= piece   # a launch a piece
    assert bad.sum() == 2 and valid.sum() > 200
