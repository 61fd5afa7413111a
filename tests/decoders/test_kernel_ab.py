"""bench/kernel_ab.py (docs/gpu.md "Fewer instructions a row step"): the parent's side, which runs
without a GPU: it refuses fewer than two builds, and its table and verdict follow the processes."""
import os

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


def test_variant_environment_and_shapes_in_the_table(ab, monkeypatch, tmp_path):
    """A variant ``NAME=FOLDER@VAR=VALUE`` runs its processes with VAR set besides GPULDPC_KERNEL_DIR
    (docs/gpu.md "Launch shapes by measurement": the same build with GPULDPC_AUTOTUNE=0); the table
    names each gl.Decoder row's frames a block and the shapes its decoder timed."""
    import json
    import types

    seen = []
    real_run = ab.subprocess.run

    def run(cmd, env=None, **kw):
        if "--child" not in cmd:                                   # git: the commit
            return real_run(cmd, env=env, **kw)
        seen.append((env["GPULDPC_KERNEL_DIR"], env.get("GPULDPC_AUTOTUNE")))
        proc = _process("x", 0, 58.9 if env.get("GPULDPC_AUTOTUNE") is None else 56.6, "d0")
        proc["rows"][1].update(frames_per_block=4, shapes_timed={"2": 52.6, "4": 54.1})
        return types.SimpleNamespace(returncode=0, stdout=json.dumps(dict(rows=proc["rows"], digests=proc["digests"])),
                                     stderr="")

    monkeypatch.setattr(ab.subprocess, "run", run)
    monkeypatch.setattr(ab, "gpu_facts", lambda: dict(gpu="GPU", driver="1"))
    assert ab.main(["--variant", "model=kdir@GPULDPC_AUTOTUNE=0", "--variant", "measured=kdir", "--rounds", "1",
                    "--out", str(tmp_path), "--name", "t"]) == 0
    assert [(os.path.basename(k), a) for k, a in seen] == [("kdir", "0"), ("kdir", None)]
    lines = (tmp_path / "t.txt").read_text().splitlines()
    assert [ln.split()[-2] for ln in lines if "kernel only, one launch" in ln] == ["56.60", "58.90"]
    assert lines[4].startswith("model1") and lines[4].endswith(
        "(kernel only 49.6)  4 frames a block (timed: 2: 52.6, 4: 54.1 Gb/s)")


def test_sparse_rows_and_another_tree(ab, monkeypatch, tmp_path):
    """``--sparse`` reaches every child and its rows name their kernels in the table; a variant's
    ``@PYTHONPATH=DIR`` goes in front of the path the parent has (another tree's python/), its
    other settings replace."""
    import json
    import types

    seen = []
    real_run = ab.subprocess.run

    def run(cmd, env=None, **kw):
        if "--child" not in cmd:
            return real_run(cmd, env=env, **kw)
        seen.append(("--sparse" in cmd, env["PYTHONPATH"], env.get("GPULDPC_AUTOTUNE")))
        rows = [dict(code="ccsds-c2", api="gl.Decoder", input="numpy int8, float16 messages", coded_gbps=15.3,
                     kernel_gbps=15.7, kernel="sp34_f16_sh_layered_i8")]
        return types.SimpleNamespace(returncode=0, stdout=json.dumps(dict(rows=rows, digests={"ccsds-c2": "d"})),
                                     stderr="")

    monkeypatch.setattr(ab.subprocess, "run", run)
    monkeypatch.setattr(ab, "gpu_facts", lambda: dict(gpu="GPU", driver="1"))
    monkeypatch.setenv("PYTHONPATH", "/site")
    assert ab.main(["--variant", "base=kdir@PYTHONPATH=/tree/python@GPULDPC_AUTOTUNE=0", "--variant", "new=kdir",
                    "--rounds", "1", "--sparse", "--out", str(tmp_path), "--name", "t"]) == 0
    assert seen == [(True, os.pathsep.join(["/tree/python", "/site"]), "0"), (True, "/site", None)]
    body = [ln for ln in (tmp_path / "t.txt").read_text().splitlines() if ln.startswith(("base1  ccsds", "new1  ccsds"))]
    assert len(body) == 2 and all(ln.endswith("(kernel only 15.7)  sp34_f16_sh_layered_i8") for ln in body)
    assert [name for name, *_ in ab.SPARSE_ROWS].count("ccsds-c2") == 4
    assert [row[-1] for row in ab.SPARSE_ROWS].count(True) == 1          # C2 packed: info shifted on the GPU
