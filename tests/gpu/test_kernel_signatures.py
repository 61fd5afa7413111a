"""The argument formats of the prepared kernel calls match the kernels' C signatures.

Runs everywhere (no GPU): a prepared PyCUDA call packs its arguments by a format string
(``P`` pointer, ``i`` int, ``f`` float, ``q`` 64-bit int); a string that drifts from the
``extern "C"`` parameter list would hand the kernel garbage, so each one is compared with
the parameter list parsed from the kernel source.
"""
import re
from pathlib import Path

import pytest

from gpuldpc.cuda import decoder, mixed_rows, nb_decoder, nb_frame, recovery, resident, sparse_layout, stages

KERNELS = Path(__file__).resolve().parents[2] / "kernels"


def _parameters(source: str, opening: str) -> list[str]:
    """The comma-separated parameters after ``opening`` up to its matching parenthesis."""
    start = source.index(opening) + len(opening)
    depth, end = 1, start
    while depth:
        depth += {"(": 1, ")": -1}.get(source[end], 0)
        end += 1
    text = re.sub(r"\\\n", " ", source[start:end - 1])
    return [p.strip() for p in text.split(",")]


def _format(parameters: list[str]) -> str:
    def one(p):
        if "*" in p:
            return "P"
        kind = p.rsplit(" ", 1)[0].replace("const ", "").strip()
        return {"int": "i", "float": "f", "long long": "q", "unsigned": "I", "unsigned long long": "Q"}[kind]
    return "".join(one(p) for p in parameters)


@pytest.mark.parametrize("path, opening, expected", [
    ("qc_decode.cu", "#define GPULDPC_ARGS(In)", decoder._ARG_TYPES),
    ("sparse_decode.cu", "#define SPARSE_ARGS(In)", sparse_layout._ARG_TYPES),
    ("nb_minmax.cu", "__launch_bounds__(kMaxThreads, RULE != Rule::kMinMax && Q > 32 ? 1 : 2) NAME(",
     nb_decoder._MINMAX_ARGS),
    ("nb_fftspa.cu", "nb_fftspa_q##Q(", nb_decoder._FFTSPA_ARGS),
    ("nb_frame.cu", "nb_frame_q##Q(", nb_frame.ARG_TYPES),
    ("nb_frame.cu", "nb_frame_resident_q##Q(", nb_frame.RESIDENT_ARG_TYPES),
    ("qc_resident.cu", "__launch_bounds__(M::kMaxThreads, M::kMinBlocks) name(", resident.ARG_TYPES),
    ("shaping.cu", "__launch_bounds__(256) NAME(", recovery.ARG_TYPES),
    ("transport.cu", "__launch_bounds__(256) unpack_int4(", stages.UNPACK_ARGS),
    ("transport.cu", "__launch_bounds__(256) soft_to_half(", stages.HALF_ARGS),
    ("transport.cu", "__launch_bounds__(256) packed_run(", stages.RUN_ARGS),
    ("mixed_rows.cu", "__launch_bounds__(128) NAME(", mixed_rows.ARG_TYPES),
])
def test_prepared_formats_match_the_kernels(path, opening, expected):
    source = (KERNELS / path).read_text()
    if opening.startswith("#define"):          # a macro body: the parameters run to the end of the macro
        body = source[source.index(opening) + len(opening):].split("\n#define", 1)[0]
        params = [p.strip() for p in re.sub(r"\\\n", " ", body).split(",")]
    else:
        params = _parameters(source, opening)
    assert _format(params) == expected, f"{path}: {params}"


def test_packed_launch_packs_each_grid_and_argument_tuple_once():
    """gpuldpc.cuda.driver.PackedLaunch (every decoding plan's launch): the buffer PyCUDA's
    packer makes for a (grid, arguments) pair is reused while they repeat, a new pair gets its
    own, the block shape and shared bytes go with every launch, and at most LIMIT are kept."""
    pvt = pytest.importorskip("pycuda._pvt_struct")
    from gpuldpc.cuda.driver import PackedLaunch

    calls = []

    class Func:                                # records what the launch is handed
        arg_format = "Pif"

        def _launch_kernel(self, grid, block, buf, shared, stream):
            calls.append((grid, block, buf, shared, stream))

    launch = PackedLaunch(Func(), 96, 4096)
    launch("s0", (2, 1), 0x1000, 7, 0.5)
    launch("s0", (2, 1), 0x1000, 7, 0.5)
    launch("s1", (3, 1), 0x2000, 7, 0.5)
    assert calls[0][2] is calls[1][2] and bytes(calls[0][2]) == bytes(pvt.pack("Pif", 0x1000, 7, 0.5))
    assert bytes(calls[2][2]) == bytes(pvt.pack("Pif", 0x2000, 7, 0.5))
    assert [c[0] for c in calls] == [(2, 1), (2, 1), (3, 1)] and [c[4] for c in calls] == ["s0", "s0", "s1"]
    assert all(c[1] == (96, 1, 1) and c[3] == 4096 for c in calls)
    for i in range(PackedLaunch.LIMIT + 5):
        launch("s0", (1, 1), i, 0, 0.0)
    assert len(launch._packed) <= PackedLaunch.LIMIT


def test_packed_launch_opts_in_past_48_kib(monkeypatch):
    """PackedLaunch (and every resident kernel, through driver.allow_shared) allows the kernel its
    dynamic shared memory where that passes the 48 KiB a kernel gets without opting in, and only
    there."""
    import importlib
    import types

    cuda_driver = importlib.import_module("gpuldpc.cuda.driver")   # the module: gpuldpc.cuda.driver is a function

    monkeypatch.setattr(cuda_driver, "driver", lambda: types.SimpleNamespace(
        function_attribute=types.SimpleNamespace(MAX_DYNAMIC_SHARED_SIZE_BYTES="max-dynamic-shared")))
    set_calls = []

    class Func:
        def set_attribute(self, attribute, value):
            set_calls.append((attribute, value))

    cuda_driver.PackedLaunch(Func(), 96, 48 * 1024)
    assert set_calls == []
    cuda_driver.PackedLaunch(Func(), 96, 48 * 1024 + 16)
    cuda_driver.allow_shared(Func(), 200_000)
    assert set_calls == [("max-dynamic-shared", 48 * 1024 + 16), ("max-dynamic-shared", 200_000)]
