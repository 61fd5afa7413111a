"""bench/kernel_ab.py (docs/gpu.md "Fewer instructions a row step"): the parent's side, which runs
without a GPU: it refuses fewer than two builds, and its table and verdict follow the processes."""
import pytest


@pytest.fixture(scope="module")
def ab(bench_module):
    return bench_module("kernel_ab")


def test_needs_two_builds(ab, capsys):
    with pytest.raises(SystemExit):
        ab.main(["--variant", "B=.gpukernels-base"])
    assert "give two or more --variant NAME=folder" in capsys.readouterr().err


def _process(variant, rnd, gbps, digest):
    rows = [dict(code="wimax-2304-1/2", api="CudaDecoder.kernel_seconds (kernel only, one launch)",
                 input="resident", coded_gbps=gbps),
            dict(code="wimax-2304-1/2", api="gl.Decoder", input="pinned int4, packed bits", coded_gbps=gbps - 5,
                 kernel_gbps=gbps - 7)]
    rows.append(dict(code="nr-bg1-z384-k8448-e25344-rv0", api="gl.Decoder", input="numpy int8 E LLRs, packed bits",
                     coded_gbps=3 * gbps / 4, info_gbps=gbps / 4, kernel_gbps=gbps))
    return dict(variant=variant, round=rnd, rows=rows, digests={"wimax-2304-1/2": digest})


def test_table_lists_each_process_in_order(ab):
    doc = dict(gpu="GPU", driver="1", commit="abc", date="today", variants={"B": "b", "P": "p"},
               processes=[_process("B", 1, 55.36, "d0"), _process("P", 1, 56.41, "d0")], identical=True)
    lines = ab.format_table(doc).splitlines()
    body = [ln for ln in lines if ln[:2] in ("B1", "P1")]
    assert [ln.split()[0] for ln in body] == ["B1"] * 4 + ["P1"] * 4
    assert "55.36 Gb/s" in body[0] and "56.41 Gb/s" in body[4]
    assert body[1].endswith("(kernel only 48.4)") and "50.36 Gb/s" in body[1]
    assert "41.52 Gb/s" in body[2] and body[2].endswith("(kernel only 55.4)  info 13.84 Gb/s")
    assert lines[-1] == "decisions, iterations, flags identical across variants: True"
