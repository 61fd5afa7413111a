"""The GPU rate recovery's tables (gpuldpc.cuda.recovery.RecoveryTables, read by
kernels/shaping.cu): every decoded position classified right, and the kernel's arithmetic
emulated in NumPy on the tables equal to the host recovery (Shaping.recover) bit for bit
for float32, float16 and int8 -- NR rv0, rv2 wrapping past the circular buffer, fillers,
rv0+rv2 combined, a shaped WiFi code with a position sent three times.  No GPU needed; the
kernel itself is held to the same values in tests/gpu/test_nr_cuda.py."""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.codes.shaping import LLR_FORMATS, Shaping
from gpuldpc.cuda.recovery import PUNCTURED, SHORTENED, RecoveryTables


def _cases():
    wifi = gl.codes.wifi(648, "1/2")
    return {
        "nr rv0 BG1 8448/9504": gl.codes.nr(8448, 9504),
        "nr rv0 fillers": gl.codes.nr(500, 1000),
        "nr rv0 wrapping": gl.codes.nr(500, 4000),
        "nr rv2 wrapping": gl.codes.nr(500, 4000, rv=2),
        "nr BG2 3840/4320": gl.codes.nr(3840, 4320),
        "nr rv0+rv2": gl.codes.combine(gl.codes.nr(500, 2000), gl.codes.nr(500, 2000, rv=2)),
        "nr rv0+rv2 wrapping": gl.codes.combine(gl.codes.nr(500, 4000), gl.codes.nr(500, 4000, rv=2)),
        "shaped wifi": gl.codes.shaped(wifi, punctured=range(600, 648), shortened=range(300, 324),
                                       repeated=[0, 1, 2, 0, 5, 0]),
    }


CASES = _cases()


def _received(dtype, frames, e, rng):
    if dtype == np.int8:
        return rng.integers(-128, 128, (frames, e)).astype(np.int8)         # -128 too: sums saturate
    scale = 30000.0 if dtype == np.float16 else 1e3
    x = np.clip(rng.standard_normal((frames, e)) * scale, -65504, 65504).astype(dtype)
    if dtype == np.float16:
        x[0, :8] = [65504, 65504, -65504, np.inf, -np.inf, 1e-3, -0.0, 2048]
    else:
        x[0, :3] = [np.inf, -np.inf, 3e38]
    return x


@pytest.mark.parametrize("name", list(CASES))
def test_tables_classify_every_decoded_position(name):
    code = CASES[name]
    for s in (code.shaping, code.decoded_shaping):
        t = RecoveryTables(s)
        assert t.n == s.n_mother and t.e == s.n and t.src.dtype == np.int32
        assert (t.src[s.punctured] == PUNCTURED).all() and (t.src[s.shortened] == SHORTENED).all()
        sent = np.unique(s.transmitted)
        first = np.array([np.flatnonzero(s.transmitted == p)[0] for p in sent])
        np.testing.assert_array_equal(t.src[sent], first)
        assert (t.rep_start is None) == (not s.repeats)
        if s.repeats:
            for p in sent:
                want = np.flatnonzero(s.transmitted == p)[1:]            # the further copies, in order
                np.testing.assert_array_equal(t.rep_index[t.rep_start[p]:t.rep_start[p + 1]], want)
            assert t.rep_start[-1] == s.n - sent.size


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(CASES))
def test_kernel_arithmetic_on_the_tables_is_the_host_recovery(name, dtype):
    code = CASES[name]
    rng = np.random.default_rng(len(name))
    for s in (code.shaping, code.decoded_shaping):
        llr = _received(np.dtype(dtype), 3, s.n, rng)
        want = s.recover(llr)
        got = RecoveryTables(s).emulate(llr)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))   # bit for bit


def test_repeats_saturate_in_order_of_transmission():
    """int8: 100 + 100 - 100 is 27 (saturated first), float16: 60000 + 60000 - 60000 is 5504."""
    s = Shaping(4, [1, 1, 1, 2], shortened=[0])
    t = RecoveryTables(s)
    np.testing.assert_array_equal(t.src, [SHORTENED, 0, 3, PUNCTURED])
    np.testing.assert_array_equal(t.rep_index, [1, 2])
    q = np.array([[100, 100, -100, 5]], np.int8)
    np.testing.assert_array_equal(t.emulate(q), [[127, 27, 5, 0]])
    np.testing.assert_array_equal(t.emulate(q), s.recover(q))
    h = np.array([[60000, 60000, -60000, 5]], np.float16)
    np.testing.assert_array_equal(t.emulate(h), [[65504, 5504, 5, 0]])
    np.testing.assert_array_equal(t.emulate(h), s.recover(h))
    assert t.emulate(q.astype(np.float32))[0, 0] == np.float32(LLR_FORMATS[np.dtype(np.float32)].certain)


def test_a_backend_offering_make_shaped_gets_the_e_llrs_as_they_are():
    """One rule per backend (codes.shaping.make_backend): a module whose ``make_shaped`` returns a
    decoder (cuda, throughput preset) is handed the caller's E array itself; one returning None,
    or without it (cpu, reference), gets the host recovery."""
    from types import SimpleNamespace

    from gpuldpc.codes.shaping import make_backend
    from gpuldpc.result import make_result
    from gpuldpc.settings import Settings

    code = gl.codes.nr(500, 1000)
    seen = []

    class Impl:
        llr_dtypes = (np.float32,)

        def __init__(self, c, n_in=None, info_of=None):
            self.code, self.n_in = c, n_in or c.n           # n_in: the LLRs a row it takes
            self.info_of = info_of or c                     # whose info its results give (make_shaped's: code's)

        def pinned_llr(self, frames):
            return np.zeros((frames, self.n_in), np.float32)

        def decode(self, llr, out=None, out_device=False):
            seen.append(llr)
            bits = np.zeros((llr.shape[0], self.code.n), np.uint8)
            return make_result(self.info_of, bits, np.ones(llr.shape[0], np.int32), np.ones(llr.shape[0], bool),
                               np.zeros(llr.shape[0], bool))

    settings = Settings("nms", "layered", 5, True, 0.75, 0.5, "float32", None, {})
    on_gpu = SimpleNamespace(make=lambda c, s: Impl(c), make_shaped=lambda c, s: Impl(c.decoded, c.n, c))
    on_host = SimpleNamespace(make=lambda c, s: Impl(c), make_shaped=lambda c, s: None)
    llr = np.ones((2, code.n), np.float32)
    dev = make_backend(on_gpu, code, settings)
    assert dev.on_device and dev.pinned_llr(3).shape == (3, code.n)
    res = dev.decode(llr)
    assert seen[-1] is llr and res.info.shape == (2, code.k)
    for module in (on_host, SimpleNamespace(make=on_host.make)):
        host = make_backend(module, code, settings)
        assert not host.on_device
        host.decode(llr)
        np.testing.assert_array_equal(seen[-1], code.decoded_shaping.recover(llr))


def test_recovery_plan_launches_the_recovery_then_the_inner_plan_on_its_rows(monkeypatch):
    """RecoveryPlan (no GPU: driver, kernel and its launch faked): E-value input frames, the
    recovered rows at the start of the slot's scratch and the inner plan's scratch after them
    (256-aligned), the inner launch reading the recovered rows; other attributes are the inner
    plan's."""
    from types import SimpleNamespace

    from gpuldpc.cuda import recovery

    calls = []

    class Func:
        def prepare(self, types):
            assert types == recovery.ARG_TYPES

    class Launch:                      # records what the plan hands gpuldpc.cuda.driver.PackedLaunch
        def __init__(self, func, threads, shared):
            assert isinstance(func, Func) and shared == 0
            self.block = (threads, 1, 1)

        def __call__(self, stream, grid, *args):
            calls.append(("recover", grid, self.block, args))

    monkeypatch.setattr(recovery, "PackedLaunch", Launch)

    class Inner:
        name, bits_width, frames_per_wave = "qc_hs8x24_layered_i8", 1280, 64

        def scratch_bytes(self, frames):
            return 12 * frames

        def launch(self, stream, count, dev_in, kind, out, scratch, capacity):
            calls.append(("decode", count, dev_in, scratch, capacity))

    monkeypatch.setattr(recovery, "driver", lambda: SimpleNamespace(to_device=lambda a: ("dev", a.size)))
    ctx = SimpleNamespace(function=lambda module, name: (module, name) == ("shaping", "shaping_recover_i8")
                          and Func())
    code = gl.codes.nr(500, 1000)
    tables = RecoveryTables(code.decoded_shaping)
    plan = recovery.RecoveryPlan(ctx, Inner(), tables, np.int8)
    assert plan.frame_bytes("llr") == 1000 and plan.bits_width == 1280 and plan.resident(None) is None
    capacity, rows = 100, -(-100 * tables.n // 256) * 256
    assert plan.scratch_bytes(capacity) == rows + 1200
    plan.launch("stream", 70, 4096, "llr", ("bits", "it", "flags"), 1 << 20, capacity)
    (_, grid, block, args), decode = calls
    assert grid == (-(-tables.n // 256), 70) and block == (256, 1, 1)
    assert args[:4] == (4096, 1000, 1 << 20, tables.n) and args[5:7] == (0, 0) and args[7] == 70
    assert args[8] == 127
    assert decode == ("decode", 70, 1 << 20, (1 << 20) + rows, capacity)
