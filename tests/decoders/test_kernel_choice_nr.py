"""Which kernels/qc_decode.cu entry point the cuda backend picks (``kernel_name``, no GPU needed)
for the pruned 5G NR graphs (gpuldpc.codes.shaping.prune; issue 14 item 3): the register
variants added for them (float32 ``ms8x24``, ``ms16x24``, ``ms24x10``; binary16 ``hs8x24``,
``hs24x10``, ``hs16x24``), and that every WiFi/WiMAX code keeps the entry point it had before
they were added, for every setting."""
import itertools

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.cuda import decoder as cuda_decoder
from gpuldpc.cuda.decoder import kernel_name
from gpuldpc.cuda.layout import NotQuasiCyclic, QcLayout, qc_layout

OLD_REGISTER_VARIANTS = ((12, 7), (12, 8), (8, 16), (4, 24), (16, 16))
OLD_HALF_VARIANTS = ((12, 7), (12, 8), (8, 16), (4, 24))

# (k, E, base graph): decoded shape (layers x columns), layers, widest row, float32 and float16 variant
NR = [((8448, 9504, 1), "5x27", 5, 19, "ms8x24", "hs8x24"),       # BG1 Zc 384 rate 8/9
      ((8448, 10560, 1), "8x30", 8, 19, "ms8x24", "hs8x24"),      # BG1 rate 4/5
      ((8448, 12672, 1), "13x35", 13, 19, "ms16x24", "hs16x24"),  # BG1 rate 2/3
      ((3840, 11520, 2), "22x32", 22, 10, "ms24x10", "hs24x10"),  # BG2 Zc 384 rate 1/3
      ((1000, 3000, 2), "22x32", 22, 10, "ms24x10", "hs24x10"),   # BG2 Zc 104 rate 1/3
      ((3840, 4320, 2), "4x14", 4, 10, "ms8x16", "hs8x16")]       # BG2 rate 8/9: as before


@pytest.mark.parametrize("block,shape,layers,row,ms,hs", NR, ids=lambda v: str(v))
def test_pruned_nr_shapes_get_a_register_kernel(block, shape, layers, row, ms, hs):
    k, e, bg = block
    code = gl.codes.nr(k, e, bg=bg)
    lay = qc_layout(code.decoded)
    assert code.decoded.name.endswith(f"-pruned-{shape}")
    assert (lay.layers, lay.max_row_blocks) == (layers, row)
    for sched, (dtype, suffix), preset in itertools.product(
            ("layered", "flooding"), (("float32", "f32"), ("float16", "f16"), ("int8", "i8")),
            ("throughput", "latency")):
        assert kernel_name(lay, "nms", sched, dtype, preset) == f"qc_{ms}_{sched}_{suffix}"
        assert kernel_name(lay, "oms", sched, dtype, preset, "float16") == f"qc_{hs}_{sched}_{suffix}"
        # sum-product keeps the stored kernel
        assert kernel_name(lay, "spa", sched, dtype, preset) == f"qc_stored_{sched}_{suffix}"


def test_graphs_of_many_layers_take_the_kernels_with_the_row_state_in_memory():
    """BG1 below rate 2/3 and BG2 below rate 1/3 have more layers than a register variant holds:
    min-sum goes to ``mm24`` (float32) / ``hm24`` (binary16), whose rows' state lies in device
    memory (3 / 5 words a row and layer of a frame / frame pair: ``message_words``); sum-product
    keeps ``stored`` (a word an edge); z > 384 has neither (their 384-thread bound)."""
    for k, e, bg, layers in ((8448, 25344, 1, 46), (8448, 16896, 1, 24), (3840, 19200, 2, 42), (1000, 3000, 1, 44),
                             (1000, 5000, 2, 41)):
        lay = qc_layout(gl.codes.nr(k, e, bg=bg).decoded)
        assert lay.layers == layers
        for sched, dtype, suffix in (("layered", "float32", "f32"), ("flooding", "int8", "i8")):
            assert kernel_name(lay, "nms", sched, dtype) == f"qc_mm24_{sched}_{suffix}"
            assert kernel_name(lay, "oms", sched, dtype, "latency") == f"qc_mm24_{sched}_{suffix}"
            assert kernel_name(lay, "nms", sched, dtype, precision="float16") == f"qc_hm24_{sched}_{suffix}"
            assert kernel_name(lay, "spa", sched, dtype) == f"qc_stored_{sched}_{suffix}"
        assert cuda_decoder.message_words("qc_mm24_layered_f32", lay) == 3 * layers * lay.z
        assert cuda_decoder.message_words("qc_hm24_layered_i8", lay) == 5 * layers * lay.z
        assert cuda_decoder.message_words("qc_stored_layered_f32", lay) == lay.nblocks * lay.z
        assert cuda_decoder.message_words("qc_ms16x24_layered_f32", lay) == 0
    assert cuda_decoder.kernel_pairs("qc_hm24_layered_i8") == (2, 24)
    assert cuda_decoder.kernel_pairs("qc_hs16x24_layered_i8") == (2, 24)
    assert cuda_decoder.kernel_pairs("qc_mm24_layered_i8") == (1, 0)

    def layout(layers, row, z):
        return QcLayout(n=70 * z, z=z, layers=layers, edges=np.zeros((layers * row, 2), np.int32),
                        layer_start=np.arange(0, layers * row + 1, row, dtype=np.int32), max_row_blocks=row)
    assert kernel_name(layout(46, 19, 416), "nms", "layered", "float32") == "qc_stored_layered_f32"
    with pytest.raises(NotQuasiCyclic, match="z = 416"):
        kernel_name(layout(46, 19, 416), "nms", "layered", "float32", precision="float16")
    assert kernel_name(layout(30, 25, 96), "nms", "layered", "float32") == "qc_stored_layered_f32"
    with pytest.raises(NotQuasiCyclic, match="rows of up to 25 blocks"):
        kernel_name(layout(30, 25, 96), "nms", "layered", "float32", precision="float16")


def test_384_thread_variants_skip_larger_z():
    """ms24x10, hs24x10 and hs16x24 are bounded at 384 threads a block (one frame, or frame pair,
    of z rows): a code of their shape with z > 384 takes the stored kernel (float32) or none."""
    def layout(layers, row, z):
        return QcLayout(n=40 * z, z=z, layers=layers, edges=np.zeros((layers * row, 2), np.int32),
                        layer_start=np.arange(0, layers * row + 1, row, dtype=np.int32), max_row_blocks=row)
    assert kernel_name(layout(22, 10, 384), "nms", "layered", "float32") == "qc_ms24x10_layered_f32"
    assert kernel_name(layout(22, 10, 360), "nms", "layered", "float32", precision="float16") == \
        "qc_hs24x10_layered_f32"
    assert kernel_name(layout(22, 10, 416), "nms", "layered", "float32") == "qc_stored_layered_f32"
    assert kernel_name(layout(13, 19, 416), "nms", "layered", "float32") == "qc_ms16x24_layered_f32"
    for shape in ((22, 10), (13, 19)):
        with pytest.raises(NotQuasiCyclic, match="z = 416"):
            kernel_name(layout(*shape, 416), "nms", "layered", "float32", precision="float16")
    # z = 416 with 5 layers: hs8x24 has the 512-thread bound
    assert kernel_name(layout(5, 19, 416), "nms", "layered", "int8", precision="float16") == "qc_hs8x24_layered_i8"


def test_wifi_and_wimax_keep_their_entry_points(monkeypatch):
    """Every WiFi/WiMAX code, every algorithm, schedule, preset and precision: the entry point
    with today's variant lists is the one the lists before the NR variants gave."""
    settings = list(itertools.product(("nms", "oms", "spa"), ("layered", "flooding"), ("float32", "int8"),
                                      ("throughput", "latency"), ("float32", "float16")))
    layouts = {name: qc_layout(gl.codes.get(name)) for name in gl.codes.names()
               if name.startswith(("wifi-", "wimax-"))}
    assert len(layouts) > 100

    def names():
        out = {}
        for (name, lay), (alg, sched, dtype, preset, prec) in itertools.product(layouts.items(), settings):
            if prec == "float16" and alg == "spa":
                continue
            out[name, alg, sched, dtype, preset, prec] = kernel_name(lay, alg, sched, dtype, preset, prec)
        return out

    now = names()
    monkeypatch.setattr(cuda_decoder, "REGISTER_VARIANTS", OLD_REGISTER_VARIANTS)
    monkeypatch.setattr(cuda_decoder, "HALF_VARIANTS", OLD_HALF_VARIANTS)
    before = names()
    assert now == before
    new = {"ms8x24", "ms16x24", "ms24x10", "hs8x24", "hs24x10", "hs16x24", "mm24", "hm24"}
    assert not {v.split("_")[1] for v in now.values()} & new


def test_the_latency_preset_recovers_on_the_gpu_unless_its_kernel_is_resident():
    """gpuldpc.cuda.decoder.latency_kernel_is_resident (no GPU): a 5G NR block's decoded code has
    no resident kernel, so its latency preset recovers the E LLRs on the GPU too; a shaped
    WiMAX 2304 r1/2 code decodes with the resident latency kernel and keeps the host recovery,
    unless ``resident=False`` or flooding."""
    from gpuldpc.cuda.decoder import latency_kernel_is_resident

    def keeps_resident_kernel(code, schedule="layered", resident=True):
        return latency_kernel_is_resident(code, "nms", schedule, "float32", "float32", resident)

    wimax = gl.codes.shaped(gl.codes.get("wimax-2304-1/2"), punctured=range(2200, 2304))
    assert keeps_resident_kernel(wimax.decoded)
    assert not keeps_resident_kernel(wimax.decoded, resident=False)
    assert not keeps_resident_kernel(wimax.decoded, "flooding")
    for k, e in ((8448, 9504), (3840, 4320), (500, 1000)):
        assert not keeps_resident_kernel(gl.codes.nr(k, e).decoded)
