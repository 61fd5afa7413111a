"""GRC: every example compiles (to the committed Python), and user errors are clear.

Errors checked in Python and in ``grcc``: unknown code name, wrong vector
length, a malformed matrix file, a code of the wrong kind for the block.
"""
import glob
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from gnuradio import blocks, gr

import gpuldpc as gl
from gnuradio import gpuldpc

GRCC = shutil.which("grcc")
needs_grcc = pytest.mark.skipif(GRCC is None, reason="grcc (GNU Radio Companion) is not installed")

BAD_ALIST = "648 324\n3 7\n1 2\n"        # column weights line too short


def block_graph(block_id, fields, in_type, vlen, out_vlen, out_type="byte"):
    """A .grc: vector source (in_type, vlen) -> the block ``block_id`` with parameters
    ``fields`` (a dict) -> null sink (out_type, out_vlen)."""
    parameters = "{" + ", ".join(f"{key}: '{value}'" for key, value in fields.items()) + "}"
    return f"""options:
  parameters: {{generate_options: no_gui, id: check, output_language: python, run: 'True',
    run_options: run, title: check}}
  states: {{coordinate: [8, 8], rotation: 0, state: enabled}}
blocks:
- name: src
  id: blocks_vector_source_x
  parameters: {{repeat: 'False', tags: '[]', type: {in_type}, vector: '[0] * {vlen}', vlen: '{vlen}'}}
  states: {{coordinate: [8, 100], rotation: 0, state: enabled}}
- name: dec
  id: {block_id}
  parameters: {parameters}
  states: {{coordinate: [200, 100], rotation: 0, state: enabled}}
- name: snk
  id: blocks_null_sink
  parameters: {{num_inputs: '1', type: {out_type}, vlen: '{out_vlen}'}}
  states: {{coordinate: [400, 100], rotation: 0, state: enabled}}
connections:
- [src, '0', dec, '0']
- [dec, '0', snk, '0']
metadata: {{file_format: 1, grc_version: 3.10.5.1}}
"""


def decoder_graph(code, vlen, out_vlen):
    """:func:`block_graph` of the LDPC Decoder: float LLRs in.

    ``code``: the decoder's code parameter (a name), or a dict of its 5G NR fields (or of
    another family's fields, with ``family``)."""
    fields = {"code": code} if isinstance(code, str) else {"family": "nr", **code}
    return block_graph("gpuldpc_ldpc_decoder", fields, "float", vlen, out_vlen)


@pytest.mark.parametrize("name", sorted(os.path.basename(p) for p in
                                        glob.glob(os.path.join(os.path.dirname(__file__), "..", "..",
                                                               "examples", "*.grc"))))
def test_example_compiles_to_the_committed_python(repo, tmp_path, name, grcc):
    result = grcc(os.path.join(repo, "examples", name), tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    generated = (tmp_path / name.replace(".grc", ".py")).read_text()
    with open(os.path.join(repo, "examples", name.replace(".grc", ".py"))) as f:
        assert generated == f.read(), f"examples/{name}: regenerate the .py with grcc -o examples"


@pytest.mark.parametrize("code, vlen, out_vlen, message", [
    ("wifi-648-1/2", 647, 324, 'Source IO size "2588" does not match sink IO size "2592"'),
    ("wifi-648-1/3", 648, 324, "no code named 'wifi-648-1/3'; did you mean 'wifi-648-2/3'"),
    ("gf16-300-150", 1200, 150, 'Assertion "family != \'named\' or gpuldpc.load_code(code).is_binary" failed'),
    ("BAD", 648, 324, "line 3: expected 648 integers (the 648 column weights), found 2"),
])
def test_grcc_reports_user_errors(tmp_path, code, vlen, out_vlen, message, grcc):
    if code == "BAD":
        code = str(tmp_path / "bad.alist")
        (tmp_path / "bad.alist").write_text(BAD_ALIST)
    (tmp_path / "check.grc").write_text(decoder_graph(code, vlen, out_vlen))
    result = grcc(tmp_path / "check.grc", tmp_path)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr


def test_grcc_accepts_a_good_decoder_graph(tmp_path, grcc):
    (tmp_path / "check.grc").write_text(decoder_graph("wifi-648-1/2", 648, 324))
    result = grcc(tmp_path / "check.grc", tmp_path)
    assert result.returncode == 0, result.stdout
    assert "gpuldpc.ldpc_decoder(code='wifi-648-1/2'" in (tmp_path / "check.py").read_text()


@pytest.mark.parametrize("fields, message", [
    (dict(k=9000, e=12000), "k=9000 is outside 12..8448"),
    (dict(k=1000, e=1000), "n_or_e=1000 is outside >= 1053 (E >= k/0.95 for k=1000"),
    (dict(k=1000, e=1200, rv=4), "rv=4 is outside 0..3"),
    (dict(k=1000, e=1200, rv="[0, 5]"), "rv=5 is outside 0..3"),
])
def test_grcc_reports_bad_nr_fields(tmp_path, fields, message, grcc):
    """The 5G NR fields' bad values: the code library's errors, at flowgraph build time."""
    (tmp_path / "check.grc").write_text(decoder_graph(fields, 1200, 1000))
    result = grcc(tmp_path / "check.grc", tmp_path)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr


def test_grcc_builds_the_nr_decoder_from_its_fields(tmp_path, grcc):
    """Vector lengths from the fields (rv [0, 2]: 2 x 1200 LLRs in), and the generated
    Python passes the fields to the block as a Python user does."""
    nr = dict(k=1000, e=1200, rv="[0, 2]", bg="1", qm="2")
    (tmp_path / "check.grc").write_text(decoder_graph(nr, 2400, 1000))
    result = grcc(tmp_path / "check.grc", tmp_path)
    assert result.returncode == 0, result.stdout
    assert "gpuldpc.ldpc_decoder(k=1000, e=1200, rv=[0, 2], bg=1, n_ref=None, qm=2, algorithm=" \
        in (tmp_path / "check.py").read_text()
    (tmp_path / "check.grc").write_text(decoder_graph(nr, 1200, 1000))
    result = grcc(tmp_path / "check.grc", tmp_path)
    assert 'Source IO size "4800" does not match sink IO size "9600"' in result.stdout + result.stderr


@pytest.mark.parametrize("fields, n, k, name", [
    (dict(family="dvbs2", dvbs2_frame="short", dvbs2_rate="1/2"), 16200, 7200, "dvbs2-short-1/2"),
    (dict(family="dvbs2", dvbs2_frame="normal", dvbs2_rate="13/45"), 64800, 18720, "dvbs2-normal-13/45"),
    (dict(family="ccsds", ccsds_code="ar4ja", ccsds_k="1024", ccsds_rate="2/3"), 1536, 1024,
     "ccsds-ar4ja-1024-2/3"),
    (dict(family="ccsds", ccsds_code="c2"), 8160, 7136, "ccsds-c2"),
])
def test_grcc_builds_dvbs2_and_ccsds_decoders_by_name(tmp_path, fields, n, k, name, grcc):
    """The DVB-S2 and CCSDS families' fields: vector lengths from the code, and the generated
    Python passes the registry name as a Python user does; that Python builds the block."""
    (tmp_path / "check.grc").write_text(decoder_graph(fields, n, k))
    result = grcc(tmp_path / "check.grc", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    generated = (tmp_path / "check.py").read_text()
    assert f"gpuldpc.ldpc_decoder(code='{name}', algorithm=" in generated
    block = gpuldpc.ldpc_decoder(code=name, backend="cpu")
    assert block.input_signature().sizeof_stream_item(0) == 4 * n
    assert block.output_signature().sizeof_stream_item(0) == k
    (tmp_path / "check.grc").write_text(decoder_graph(fields, n + 1, k))
    result = grcc(tmp_path / "check.grc", tmp_path)
    assert result.returncode != 0


@pytest.mark.parametrize("fields, message", [
    (dict(family="dvbs2", dvbs2_frame="short", dvbs2_rate="9/10"),
     "dvbs2: rate='9/10' is not a code rate of short frames; use one of '1/4'"),
    (dict(family="dvbs2", dvbs2_frame="short", dvbs2_rate="13/45"),
     "rate='13/45' is not a code rate of short frames"),
])
def test_grcc_reports_a_rate_the_dvbs2_frame_lacks(tmp_path, fields, message, grcc):
    """All S2/S2X rates are offered for both frame sizes; a rate the frame does not have stops
    the flowgraph at build time with the code library's message listing the frame's rates."""
    (tmp_path / "check.grc").write_text(decoder_graph(fields, 16200, 7200))
    result = grcc(tmp_path / "check.grc", tmp_path)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr


def test_family_names_with_bad_parameters_in_python():
    with pytest.raises(ValueError, match=r"rate='9/10' is not a code rate of short frames"):
        gpuldpc.ldpc_decoder(code="dvbs2-short-9/10")
    with pytest.raises(ValueError, match=r"k=2048 is not an information block size"):
        gpuldpc.ldpc_encoder(code="ccsds-ar4ja-2048-1/2")


def test_unknown_code_name_in_python():
    with pytest.raises(ValueError, match=r"no code named 'wifi-1944-1/3'; did you mean .*"
                                         r"or give an existing \.alist file"):
        gpuldpc.ldpc_decoder("wifi-1944-1/3")


def test_bad_matrix_files_in_python(tmp_path):
    bad = tmp_path / "bad.alist"
    bad.write_text(BAD_ALIST)
    with pytest.raises(gl.codes.CodeFormatError, match=r"bad\.alist', line 3: expected 648 integers"):
        gpuldpc.ldpc_decoder(str(bad))
    base = tmp_path / "base.txt"
    base.write_text("0 -1 3\n1 2 -1\n")
    with pytest.raises(ValueError, match=r"base\.txt:z=<expansion>"):
        gpuldpc.ldpc_encoder(str(base))
    code = gpuldpc.ldpc_encoder(f"{base}:z=5").core.code
    assert (code.n, code.z) == (15, 5)


def test_code_of_the_wrong_kind():
    with pytest.raises(ValueError, match=r"'gf16-300-150' is a GF\(16\) code: use the NB-LDPC block"):
        gpuldpc.ldpc_decoder("gf16-300-150")
    with pytest.raises(ValueError, match=r"'wifi-648-1/2' is binary: use the LDPC block"):
        gpuldpc.nb_ldpc_encoder("wifi-648-1/2")


def test_wrong_vector_length_in_python():
    decoder = gpuldpc.ldpc_decoder("wifi-648-1/2", backend="reference")
    tb = gr.top_block()
    with pytest.raises(Exception, match="itemsize mismatch"):
        tb.connect(blocks.vector_source_f([0.0] * 647, False, 647), decoder)
    with pytest.raises(ValueError, match=r"vector of 648 LLRs \(n=648 bit LLRs\), got shape "
                                         r"\(2, 647\); set the upstream vector length to 648"):
        decoder.core.decode_frames(np.zeros((2, 647), np.float32))


def test_bad_parameters_in_python():
    with pytest.raises(ValueError, match=r"positive_llr_bit must be 1 \(GNU Radio"):
        gpuldpc.ldpc_decoder("wifi-648-1/2", positive_llr_bit=-1)
    with pytest.raises(ValueError, match=r"on_failure='skip' is not one of 'pass', 'drop'"):
        gpuldpc.ldpc_decoder("wifi-648-1/2", on_failure="skip")
    with pytest.raises(ValueError, match=r"batch must be an integer >= 0"):
        gpuldpc.ldpc_decoder("wifi-648-1/2", batch=-2)


PLATFORM_REPORT = """families = {key: [p["options"] for p in block.parameters_data if p["id"] == "family"]
            for key, block in platform.blocks.items() if key.startswith("gpuldpc_")}
print(json.dumps({"problems": records, "families": families}))"""


@needs_grcc
def test_grc_platform_loads_the_code_family_choices(repo, grc_platform, tmp_path):
    """GRC's platform loads this checkout's YAML cleanly, and the encoder and decoders offer
    the DVB-S2 and CCSDS families beside "Name or file" and 5G NR; the PDU decoder also
    "Several" (codes chosen by each PDU's ldpc_code)."""
    import json
    env = dict(os.environ, GRC_BLOCKS_PATH=os.path.join(repo, "grc"), HOME=str(tmp_path),
               GR_CONF_GRC_GLOBAL_BLOCKS_PATH=os.path.join(gr.prefix(), "share", "gnuradio", "grc", "blocks"))
    result = subprocess.run([sys.executable, "-c", grc_platform + PLATFORM_REPORT], capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    library = json.loads(result.stdout)
    assert [p for p in library["problems"] if "gpuldpc" in p] == []
    for key in ("gpuldpc_ldpc_encoder", "gpuldpc_ldpc_decoder"):
        assert library["families"][key] == [["named", "nr", "dvbs2", "ccsds"]], key
    assert library["families"]["gpuldpc_ldpc_decoder_pdu"] == [["named", "nr", "dvbs2", "ccsds", "mixed"]]


@pytest.mark.parametrize("frame, rate, vlen, out_vlen, message", [
    ("short", "1/2", 7200, 7032, None),
    ("normal", "13/45", 18720, 18528, None),
    ("short", "9/10", 7200, 7032, "dvbs2: rate='9/10' is not a code rate of short frames; use one of '1/4'"),
    ("short", "1/2", 16200, 7032, 'Source IO size "16200" does not match sink IO size "7200"'),
])
def test_grcc_builds_the_dvbs2_bch_decoder_or_reports_the_error(tmp_path, grcc, frame, rate, vlen,
                                                                 out_vlen, message):
    """The DVB-S2 BCH Decoder: n_bch in and k_bch out from its frame size and rate; a rate
    the frame lacks and the LDPC Decoder's codeword (n bits) as input stop the build."""
    fields = {"dvbs2_frame": frame, "dvbs2_rate": rate}
    (tmp_path / "check.grc").write_text(block_graph("gpuldpc_dvbs2_bch_decoder", fields, "byte", vlen, out_vlen))
    result = grcc(tmp_path / "check.grc", tmp_path)
    if message is None:
        assert result.returncode == 0, result.stdout + result.stderr
        assert (f"gpuldpc.dvbs2_bch_decoder(code='dvbs2-{frame}-{rate}', stats_interval=1.0)"
                in (tmp_path / "check.py").read_text())
    else:
        assert result.returncode != 0
        assert message in result.stdout + result.stderr


def soft_output_graph(soft_vlen):
    """:func:`decoder_graph` of wifi-648-1/2 with ``soft_output: posterior`` and its second
    port (float, ``soft_vlen``) into a null sink."""
    sink = ("- name: llr_snk\n  id: blocks_null_sink\n"
            f"  parameters: {{num_inputs: '1', type: float, vlen: '{soft_vlen}'}}\n"
            "  states: {coordinate: [400, 200], rotation: 0, state: enabled}\n")
    return decoder_graph("wifi-648-1/2", 648, 324).replace(
        "{code: 'wifi-648-1/2'}", "{code: 'wifi-648-1/2', soft_output: posterior}").replace(
        "connections:\n", sink + "connections:\n- [dec, '1', llr_snk, '0']\n")


def test_grcc_builds_the_decoder_with_soft_output(tmp_path, grcc):
    """Soft output: a second port of n float LLRs, passed to the block as a Python user does."""
    (tmp_path / "check.grc").write_text(soft_output_graph(648))
    result = grcc(tmp_path / "check.grc", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    generated = (tmp_path / "check.py").read_text()
    assert "precision='float32', frame_tags=True,\n            soft_output='posterior')" in generated
    assert "self.connect((self.dec, 1), (self.llr_snk, 0))" in generated
    (tmp_path / "check.grc").write_text(soft_output_graph(324))
    result = grcc(tmp_path / "check.grc", tmp_path)
    assert 'Source IO size "2592" does not match sink IO size "1296"' in result.stdout + result.stderr


@pytest.mark.parametrize("frame, rate, constellation, error", [
    ("short", "26/45", "8psk", None),
    ("short", "1/2", "32apsk", "constellation='32apsk' is not used with rate 1/2 in short frames"),
    ("normal", "3/5", "8psk", 'Source IO size "259200" does not match sink IO size "64800"'),
])
def test_grcc_builds_the_dvbs2_demapper_or_reports_the_error(tmp_path, grcc, frame, rate, constellation, error):
    """The DVB-S2 Soft Demapper (tests/gr/test_dvbs2_demapper.py): complex symbols in, n = 16200
    LLRs a vector out; a MODCOD the standard lacks and a wrong vector length downstream."""
    fields = {"dvbs2_frame": frame, "dvbs2_rate": rate, "constellation": constellation, "esn0_db": 7.5,
              "max_log": True}
    (tmp_path / "check.grc").write_text(block_graph("gpuldpc_dvbs2_demapper", fields, "complex", 1, 16200, "float"))
    result = grcc(tmp_path / "check.grc", tmp_path)
    if error is None:
        assert result.returncode == 0, result.stdout + result.stderr
        assert (f"gpuldpc.dvbs2_demapper(code='dvbs2-{frame}-{rate}', constellation='{constellation}', "
                "esn0_db=7.5, max_log=True)") in (tmp_path / "check.py").read_text()
    else:
        assert result.returncode != 0 and error in result.stdout + result.stderr, result.stdout + result.stderr


def test_grcc_builds_the_nb_decoder_with_each_trellis_rule(tmp_path, grcc):
    """The NB-LDPC Decoder's Algorithm options include both trellis rules ("tmm", "tmm1"): the
    generated Python passes the choice on, and the block so built takes the code's n x 4 bit LLRs."""
    code = gl.codes.get("gf16-300-150")
    for algorithm in ("tmm", "tmm1"):
        graph = block_graph("gpuldpc_nb_ldpc_decoder", {"code": "gf16-300-150", "algorithm": algorithm},
                            "float", code.n * 4, code.k)
        (tmp_path / "check.grc").write_text(graph)
        result = grcc(tmp_path / "check.grc", tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        generated = (tmp_path / "check.py").read_text()
        assert f"gpuldpc.nb_ldpc_decoder(code='gf16-300-150', algorithm='{algorithm}'," in generated
        dec = gpuldpc.nb_ldpc_decoder("gf16-300-150", algorithm=algorithm, backend="cpu")
        assert dec.input_signature().sizeof_stream_item(0) == 4 * code.n * 4
