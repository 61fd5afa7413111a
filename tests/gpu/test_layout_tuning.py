"""CPU-side parts of the CUDA backend (run everywhere, no GPU needed): the QC layout
the kernels read, kernel selection, launch shapes (paper 001 IV-D) and the backend's
behaviour without PyCUDA."""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.cuda import DeviceLimits, KernelAttributes, NotQuasiCyclic, kernel_name, launch_shape, qc_layout
from gpuldpc.cuda.decoder import kernel_state_bytes
from gpuldpc.cuda.tuning import blocks_per_sm, shared_bytes, threads_per_block

H200 = DeviceLimits(sm_count=132, max_threads_per_sm=2048, max_threads_per_block=1024, registers_per_sm=65536,
                    shared_per_sm=233472, shared_per_block_optin=232448, max_blocks_per_sm=32,
                    l2_bytes=60 * 2**20)
MS_KERNEL = KernelAttributes(registers=88, static_shared=0, local_bytes=0, max_threads=512)


def _qc_binary_codes():
    return [n for n in gl.codes.names() if n.startswith(("wifi-", "wimax-576-", "wimax-1152-", "wimax-2304-"))]


@pytest.mark.parametrize("name", _qc_binary_codes())
def test_layout_expands_to_h(name):
    code = gl.codes.get(name)
    lay = qc_layout(code)                       # raises unless its rows are exactly code.H
    assert lay.nblocks * lay.z == code.H.nnz
    assert lay.layer_start[-1] == lay.nblocks and lay.layers * lay.z == code.m
    shift = lay.z - lay.edges[:, 1]
    assert np.all((shift >= 0) & (shift < lay.z))
    assert np.all((lay.edges[:, 0] - shift) % lay.z == 0)
    assert lay.max_row_blocks == int(np.diff(code.H.indptr).max())


def test_kernel_choice_by_code_shape():
    get = lambda n: qc_layout(gl.codes.get(n))  # noqa: E731
    assert kernel_name(get("wimax-2304-1/2"), "nms", "layered", "float32") == "qc_ms12x7_layered_f32"
    assert kernel_name(get("wifi-1944-1/2"), "nms", "layered", "float32") == "qc_ms12x8_layered_f32"
    assert kernel_name(get("wifi-1944-2/3"), "oms", "flooding", "int8") == "qc_ms8x16_flooding_i8"
    assert kernel_name(get("wifi-648-5/6"), "nms", "layered", "float16") == "qc_ms4x24_layered_f16"
    assert kernel_name(get("wimax-2304-1/2"), "spa", "layered", "float32") == "qc_stored_layered_f32"
    # the latency preset where a rate-1/2 code fits: layered, a row a thread with its state in shared
    # memory (16 + layers x 8 edges x 8 bytes x 96 thread slots); flooding, 2 lanes of 4 edges a row
    assert kernel_name(get("wimax-2304-1/2"), "nms", "layered", "float32", "latency") == \
        "qc_ep12x1x8_layered_f32"
    assert kernel_state_bytes("qc_ep12x1x8_layered_f32", get("wimax-2304-1/2"), 96) == 16 + 12 * 8 * 8 * 96
    # two layers a step: 6 steps of 192 thread slots, 8 column addresses of 4 bytes (R lives in registers)
    assert kernel_state_bytes("qc_pl12x2x7_layered_f32", get("wimax-2304-1/2"), 192) == 16 + 6 * 8 * 4 * 192
    assert kernel_state_bytes("qc_ep12x2x4_flooding_f32", get("wimax-2304-1/2"), 192) == 0
    assert kernel_state_bytes("qc_ms12x7_layered_f32", get("wimax-2304-1/2"), 512) == 0
    assert kernel_name(get("wifi-648-1/2"), "oms", "flooding", "int8", "latency") == "qc_ep12x2x4_flooding_i8"
    assert kernel_name(get("wifi-1944-5/6"), "nms", "layered", "float32", "latency") == "qc_ms4x24_layered_f32"
    assert kernel_name(get("wimax-2304-1/2"), "spa", "layered", "float32", "latency") == "qc_stored_layered_f32"


def test_non_qc_code_is_refused():
    code = gl.codes.get("wimax-576-1/2")
    plain = gl.codes.Code("plain", code.H.copy(), code.k)
    with pytest.raises(NotQuasiCyclic, match="no QC base matrix"):
        qc_layout(plain)


def test_launch_shape_respects_paper_001_limits():
    for name in ("wimax-2304-1/2", "wifi-1944-1/2", "wifi-648-1/2"):
        lay = qc_layout(gl.codes.get(name))
        for flooding in (False, True):
            s = launch_shape(lay, H200, MS_KERNEL, flooding)
            assert s.threads == threads_per_block(lay.z, s.frames_per_block) <= 512
            assert s.threads % 32 == 0 and s.threads >= s.frames_per_block * lay.z
            assert s.blocks_per_sm * s.threads <= H200.max_threads_per_sm
            assert s.blocks_per_sm * s.threads * MS_KERNEL.registers <= H200.registers_per_sm
            assert s.blocks_per_sm * (s.shared_bytes + 1024) <= H200.shared_per_sm
            assert s.shared_bytes == shared_bytes(lay, s.frames_per_block, flooding)
    lay = qc_layout(gl.codes.get("wimax-2304-1/2"))
    s = launch_shape(lay, H200, MS_KERNEL, False)
    # 96 threads a frame, 88 registers (2816 a warp): 5 warps in each quarter of the register file,
    # 20 an SM, 6 blocks of 3 warps (not 65536 / (88 * 96) = 7.75: tuning.blocks_per_sm)
    assert (s.frames_per_block, s.threads, s.blocks_per_sm, s.frames_per_wave) == (1, 96, 6, 792)
    # WiFi z = 81: the most useful resident threads an SM, ties to fewer frames a block: 1 frame
    # (96 threads, 6 blocks) = 2 (6 warps, 3 blocks) = 3 (8 warps, 2) = 486 rows; 4 frames (324
    # threads in 11 warps, 8 % idle lanes) fit once (20 warps an SM): 324
    wifi = launch_shape(qc_layout(gl.codes.get("wifi-1944-1/2")), H200, MS_KERNEL, False)
    assert (wifi.frames_per_block, wifi.blocks_per_sm) == (1, 6)
    shared = launch_shape(qc_layout(gl.codes.get("wifi-1944-1/2")), H200, MS_KERNEL, False, frames_per_block=4)
    assert (shared.threads, shared.blocks_per_sm) == (352, 1)


def test_latency_preset_and_overrides():
    lay = qc_layout(gl.codes.get("wifi-648-1/2"))
    assert launch_shape(lay, H200, MS_KERNEL, False, "latency").frames_per_block == 1
    assert launch_shape(lay, H200, MS_KERNEL, False, frames_per_block=3).threads == 96
    with pytest.raises(ValueError, match="frames_per_block=40 does not fit"):
        launch_shape(lay, H200, MS_KERNEL, False, frames_per_block=40)
    with pytest.raises(ValueError, match="preset='fast' is not one of"):
        launch_shape(lay, H200, MS_KERNEL, False, "fast")


def test_cuda_backend_unavailable_is_clear():
    from gpuldpc import cuda

    if cuda.available():
        pytest.skip("a GPU is present")
    code = gl.codes.get("wimax-576-1/2")
    with pytest.raises(gl.BackendUnavailable, match="backend 'cuda' is not usable here"):
        gl.Decoder(code, backend="cuda")
    assert gl.Decoder(code, backend="auto").backend in ("cpu", "reference")


def test_the_cuda_package_imports_nothing_from_the_decoders():
    """gpuldpc.cuda is a backend below gl.Decoder (issue 13 item 5, the package docstring): no
    module of it imports gpuldpc.decoders (the Tanner graph tables it shares with the reference
    decoders live in gpuldpc.codes.tanner)."""
    import ast
    from pathlib import Path

    import gpuldpc.cuda

    found = []
    for path in sorted(Path(gpuldpc.cuda.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [("." * node.level) + (node.module or "")] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.name}: {n}" for n in names if n.startswith(("..decoders", "gpuldpc.decoders"))]
    assert found == []


@pytest.mark.parametrize("registers, threads, blocks", [
    (139, 224, 1),    # Nsight Compute on the H200: 7 warps of 4608 registers, 3 a quarter of the file
    (64, 96, 10),     # the binary16 WiMAX kernel: 30 warps an SM (docs/gpu.md)
    (172, 128, 2),    # the C2 pair variant of the sparse kernel: two blocks of 4 warps
    (255, 1024, 0),   # 32 warps of 8192 registers: more than the file
    (32, 1024, 2),
])
def test_blocks_per_sm_counts_registers_per_sub_partition(registers, threads, blocks):
    """As cuda_occupancy.h's cudaOccMaxBlocksPerSMRegsLimit: warps a quarter of the register file,
    times four, over the block's warps; the first three were measured (Block Limit Registers)."""
    kern = KernelAttributes(registers=registers, static_shared=0, local_bytes=0, max_threads=1024)
    assert blocks_per_sm(H200, kern, threads, 0) == blocks


def test_gf_q_worker_threads():
    """Threads a check row: Min-Max's two halves of min(q/4, 32), T-MM's four parts up to GF(32)
    (nb_minmax.cu TrellisParts: a warp a row at GF(32)) and two above, FFT-SPA min(q, 32)."""
    from gpuldpc.cuda.nb_layout import unit_threads

    assert [unit_threads("minmax", q) for q in (4, 32, 64, 256)] == [2, 16, 32, 64]
    assert [unit_threads("tmm", q) for q in (4, 16, 32, 64, 256)] == [4, 16, 32, 32, 64]
    assert [unit_threads("fft-spa", q) for q in (4, 32, 256)] == [4, 32, 32]


@pytest.mark.parametrize("name, algorithm, layered, registers, units, blocks", [
    ("gf32-837-726", "tmm", True, 64, 16, 2),       # a warp a row; 4 x 8 rows would overflow the L2
    ("gf32-837-726", "tmm1", True, 64, 16, 2),
    ("gf32-620-310", "tmm1", True, 64, 8, 4),       # 8 x 4 rows overflow the L2 and lose to 4 x 8
    ("gf64-1512-1325", "tmm", True, 122, 4, 4),     # two parts of 16 threads a row: 16 x 1 row > 8 frames
    ("gf64-1260-630", "tmm1", True, 124, 4, 4),
    ("gf32-837-726", "mmma", True, 64, 11, 2),
    ("gf32-744-653", "mmma", True, 64, 8, 3),       # ties with 6 x 4 rows: the fewer frames
    ("gf32-620-310", "minmax", False, 64, 16, 4),   # 8 x 8 rows overflow the L2
    ("gf64-1512-1325", "mmma", True, 64, 3, 4),
    ("gf256-384-128", "fft-spa", False, 64, 8, 4),  # (d + 1) q words a group since session 30 (6 x 5 before)
])
def test_gf_q_block_shapes(name, algorithm, layered, registers, units, blocks):
    """nb_layout.launch_shape on the H200's limits: the rows busy times the chance that some block is
    not at a barrier (1 - 0.15^blocks), 5 % less where the resident frames' posteriors fill more
    than three quarters of the 60 MiB L2, near-ties to the most rows a block, more than 8 frames an
    SM only where nothing else fits."""
    from gpuldpc.cuda.nb_layout import launch_shape as nb_shape, nb_layout

    lay = nb_layout(gl.codes.get(name))
    ptr = lay.layer_ptr if layered else lay.flood_ptr
    rows = int(np.diff(ptr).max())
    kern = KernelAttributes(registers=registers, static_shared=0, local_bytes=0, max_threads=512)
    shape = nb_shape(algorithm, lay, H200, kern, rows)
    assert (shape.units, shape.blocks_per_sm) == (units, blocks)
    assert nb_shape(algorithm, lay, H200, kern, rows, preset="latency").units >= units   # the most one block holds


def test_gf_q_shape_follows_the_l2():
    """The L2 term alone moves gf32-837-726's tmm1 shape: 4 blocks of 8 rows (57 MB of posteriors)
    where the L2 is unknown or holds them within three quarters (80 MiB), 2 blocks of 16 rows with
    the H200's 60 MiB."""
    import dataclasses

    from gpuldpc.cuda.nb_layout import launch_shape as nb_shape, nb_layout

    lay = nb_layout(gl.codes.get("gf32-837-726"))
    rows = int(np.diff(lay.layer_ptr).max())
    kern = KernelAttributes(registers=64, static_shared=0, local_bytes=0, max_threads=512)
    shapes = [nb_shape("tmm1", lay, dataclasses.replace(H200, l2_bytes=l2), kern, rows)
              for l2 in (0, 80 * 2**20, 60 * 2**20)]
    assert [(s.units, s.blocks_per_sm) for s in shapes] == [(8, 4), (8, 4), (16, 2)]


@pytest.mark.parametrize("name, algorithm, registers, measured_best", [
    ("gf32-837-726", "mmma", 64, 4),     # bench/results/h200-nb-shapes.txt: 4 rows 224.2 Mb/s, the model's 11 213.7
    ("gf64-1512-1325", "mmma", 64, 4),   # 4 rows 125.2, the model's 3 115.9
    ("gf32-837-726", "tmm1", 64, 16),    # the model's first is the fastest measured
])
def test_gf_q_ranked_shapes_hold_the_fastest_measured(name, algorithm, registers, measured_best):
    """ranked_shapes on the H200's limits: launch_shape's shape first, distinct shapes, and among the
    first autotune.CANDIDATES (the shapes a decoder times) the one measured fastest on the H200;
    a forced ``units`` or the latency preset give one shape."""
    from gpuldpc.cuda import autotune
    from gpuldpc.cuda.nb_layout import launch_shape as nb_shape, nb_layout, ranked_shapes

    lay = nb_layout(gl.codes.get(name))
    rows = int(np.diff(lay.layer_ptr).max())
    kern = KernelAttributes(registers=registers, static_shared=0, local_bytes=0, max_threads=512)
    ranked = ranked_shapes(algorithm, lay, H200, kern, rows)
    assert ranked[0] == nb_shape(algorithm, lay, H200, kern, rows)
    assert len({s.units for s in ranked}) == len(ranked) > autotune.CANDIDATES
    assert measured_best in [s.units for s in ranked[:autotune.CANDIDATES]]
    assert [s.units for s in ranked_shapes(algorithm, lay, H200, kern, rows, units=2)] == [2]
    assert len(ranked_shapes(algorithm, lay, H200, kern, rows, preset="latency")) == 1


def test_fastest_shape_by_its_best_round():
    """autotune.fastest: one untimed launch of the model's first shape, then ROUNDS alternated
    rounds; a shape's rate from its best round; the model's first unless another beats it by more
    than SAME."""
    from gpuldpc.cuda import autotune
    from gpuldpc.cuda.nb_layout import NbShape

    shapes = [NbShape(units, 32 * units, 1024, blocks) for units, blocks in ((11, 2), (3, 7), (4, 5))]
    calls = []

    def run(seconds):
        def seconds_of(shape):
            calls.append(shape.units)
            frames = 132 * shape.blocks_per_sm
            times = seconds[shape.units]
            return frames, times[sum(1 for u in calls if u == shape.units) % len(times)]
        return seconds_of

    # frames: 264, 924, 660; seconds a frame: 11 rows 1e-5, 3 rows 1.1e-5 (one round disturbed), 4 rows 0.95e-5
    pick, rates = autotune.fastest(shapes, run({11: [2.64e-3], 3: [2e-2, 1.0164e-2], 4: [6.27e-3]}))
    assert calls == [11] + [11, 3, 4] * autotune.ROUNDS
    assert pick == shapes[2]
    assert rates[shapes[2]] == pytest.approx(660 / 6.27e-3) and rates[shapes[1]] == pytest.approx(924 / 1.0164e-2)
    # 4 rows only 1 % faster than the model's first: the first is kept
    calls.clear()
    pick, _ = autotune.fastest(shapes, run({11: [2.64e-3], 3: [1.0164e-2], 4: [660 * 1e-5 / 1.01]}))
    assert pick == shapes[0]


def test_autotune_switch(monkeypatch):
    from gpuldpc.cuda import autotune

    monkeypatch.delenv(autotune.ENV, raising=False)
    assert autotune.enabled()
    monkeypatch.setenv(autotune.ENV, "0")
    assert not autotune.enabled()
    monkeypatch.setenv(autotune.ENV, "1")
    assert autotune.enabled()


@pytest.mark.parametrize("name, kernel, registers, measured_best", [
    ("wimax-2304-1/2", "qc_hs12x7_layered_f32", 64, 4),   # h200-autotune.txt: 4 frames a block 58.4 Gb/s, 2: 56.6
    ("wifi-1944-1/2", "qc_hs12x8_layered_f32", 64, 6),    # 6 (the model's first) 50.1, 4: 42.9, 12: 43.7
])
def test_binary_ranked_shapes_hold_the_fastest_measured(name, kernel, registers, measured_best):
    """tuning.ranked_shapes on the H200's limits: launch_shape's first, the most useful resident
    threads first, ties to fewer frames a block, and the fastest measured among the shapes a decoder
    times; one shape for a forced frames_per_block or the latency preset."""
    from gpuldpc.cuda import autotune
    from gpuldpc.cuda.decoder import kernel_pairs
    from gpuldpc.cuda.tuning import ranked_shapes

    lay = qc_layout(gl.codes.get(name))
    kern = KernelAttributes(registers=registers, static_shared=0, local_bytes=0, max_threads=512)
    args = (lay, H200, kern, False)
    pairs = dict(frames_per_thread=2, row_blocks=kernel_pairs(kernel)[1],
                 state_bytes=kernel_state_bytes(kernel, lay, 512))
    ranked = ranked_shapes(*args, **pairs)
    assert ranked[0] == launch_shape(*args, **pairs)
    useful = [s.frames_per_block * lay.z * s.blocks_per_sm for s in ranked]
    assert useful == sorted(useful, reverse=True)
    assert measured_best in [s.frames_per_block for s in ranked[:autotune.CANDIDATES]]
    assert [s.frames_per_block for s in ranked_shapes(*args, frames_per_block=8, **pairs)] == [8]
    assert [s.frames_per_block for s in ranked_shapes(*args, "latency", **pairs)] == [2]
