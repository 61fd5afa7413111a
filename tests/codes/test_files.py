"""alist (binary MacKay, GF(q) KN) and base-matrix files: round trips, real files, malformed input.

Every malformed file must raise CodeFormatError naming the file and the line;
the hypothesis tests feed random and mutated files to every parser: each must
load or raise CodeFormatError, never anything else.
"""
import pickle
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import gpuldpc as gl
from gpuldpc.codes import CodeError, CodeFormatError
from gpuldpc.codes.alist import format_alist
from gpuldpc.codes.standards import WIFI_RATES, WIFI_Z, WIMAX_LENGTHS, WIMAX_RATES

DATA = Path(__file__).parent / "data"
GR_FEC = Path("/usr/share/gnuradio/fec/ldpc")
NAMES = [f"wifi-{n}-{r}" for n in WIFI_Z for r in WIFI_RATES] + \
        [f"wimax-{n}-{r}" for n in WIMAX_LENGTHS for r in WIMAX_RATES]

# H = [[1 1 0 1 0 0], [0 1 1 0 1 0], [1 0 1 0 0 1]] (rank 3, k = 3), unpadded and padded
TOY_ALIST = """6 3
2 3
2 2 2 1 1 1
3 3 3
1 3
1 2
2 3
1
2
3
1 2 4
2 3 5
1 3 6
"""
TOY_ALIST_PADDED = TOY_ALIST.replace("\n1\n2\n3\n", "\n1 0\n2 0\n3 0\n")
TOY_H = np.array([[1, 1, 0, 1, 0, 0], [0, 1, 1, 0, 1, 0], [1, 0, 1, 0, 0, 1]])

# GF(4): H = [[1 alpha 0 0], [0 0 alpha^2 1]] = [[1 2 0 0], [0 0 3 1]]
TOY_KN = """4 2 4
1 1 1 1
2 2
1 0 2 1
3 2 4 0
"""
TOY_KN_H = np.array([[1, 2, 0, 0], [0, 0, 3, 1]])

# the 3 x 5 base matrix of test_encode_binary (z = 3)
TOY_BASE = """0 -1 1 0 -1
-1 2 0 0 0
1 -1 1 -1 0
"""
TOY_GF4_BASE = """0 1 -1
-1 2 0
"""


def _same(A, B) -> bool:
    A, B = sp.csr_matrix(A, dtype=np.int64), sp.csr_matrix(B, dtype=np.int64)
    return A.shape == B.shape and (A != B).nnz == 0


def _write(path: Path, content) -> Path:
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def _replace_line(text: str, number: int, new: str) -> str:
    lines = text.split("\n")
    lines[number - 1] = new
    return "\n".join(lines)


# ---------------------------------------------------------------- round trips

@pytest.mark.parametrize("name", NAMES)
def test_standard_codes_round_trip_through_alist_and_base_matrix(name, tmp_path):
    code = gl.codes.get(name)
    gl.codes.to_alist(code, tmp_path / "h.alist")
    back = gl.codes.from_alist(tmp_path / "h.alist")
    assert _same(back.H, code.H) and back.k == code.k and back.name == "h.alist"
    gl.codes.to_base_matrix(code, tmp_path / "b.txt")
    back = gl.codes.from_base_matrix(tmp_path / "b.txt", code.z, name=name)
    assert _same(back.H, code.H) and back.k == code.k and back.z == code.z and back.name == name
    np.testing.assert_array_equal(back.base, code.base)


def test_toy_alist_is_read_and_written_exactly(tmp_path):
    for text in (TOY_ALIST, TOY_ALIST_PADDED):
        code = gl.codes.from_alist(_write(tmp_path / "toy.alist", text))
        np.testing.assert_array_equal(code.H.toarray(), TOY_H)
        assert (code.n, code.m, code.k, code.q, code.base) == (6, 3, 3, 2, None)
    assert format_alist(code) == TOY_ALIST
    assert format_alist(code, pad=True) == TOY_ALIST_PADDED
    gl.codes.to_alist(code, tmp_path / "padded.alist", pad=True)
    assert (tmp_path / "padded.alist").read_text() == TOY_ALIST_PADDED


def test_weight_zero_columns_are_written_as_a_zero(tmp_path):
    H = sp.csr_matrix(np.array([[1, 0, 1, 1], [1, 0, 0, 1]], dtype=np.uint8))
    code = gl.codes.Code("gap", H, 2)
    text = format_alist(code)
    assert text.split("\n")[5] == "0"          # column 2 has no entry
    back = gl.codes.from_alist(_write(tmp_path / "gap.alist", text))
    assert _same(back.H, H) and back.k == 2


def test_toy_kn_alist_maps_exponents_to_elements(tmp_path):
    code = gl.codes.from_alist(_write(tmp_path / "toy.kn", TOY_KN))
    np.testing.assert_array_equal(code.H.toarray(), TOY_KN_H)
    assert (code.n, code.m, code.k, code.q) == (4, 2, 2, 4)
    assert format_alist(code) == TOY_KN


def test_gfq_round_trips(tmp_path):
    alist = gl.codes.from_alist(DATA / "rice_620_310_GF32.nbalist")
    base = gl.codes.from_base_matrix(DATA / "rice_620_310_GF32_base_exponents.txt", q=32)
    assert (alist.n, alist.m, alist.k, alist.q, alist.edges) == (620, 310, 310, 32, 1860)
    assert (base.n, base.k, base.q, base.z) == (620, 310, 32, 31)
    assert _same(alist.H, base.H)
    assert _same(base.H, gl.codes.get("gf32-620-310").H)
    gl.codes.to_base_matrix(base, tmp_path / "e.txt")
    back = gl.codes.from_base_matrix(tmp_path / "e.txt", q=32)
    np.testing.assert_array_equal(back.base, base.base)
    assert (tmp_path / "e.txt").read_text().split() == \
        (DATA / "rice_620_310_GF32_base_exponents.txt").read_text().split()
    for code in (alist, gl.codes.from_alist(DATA / "N96_K48_GF64.txt"),
                 gl.codes.from_alist(DATA / "N128_K64_GF256.txt")):
        gl.codes.to_alist(code, tmp_path / "x.nbalist")
        back = gl.codes.from_alist(tmp_path / "x.nbalist")
        assert _same(back.H, code.H) and (back.k, back.q) == (code.k, code.q)


def test_kn_database_files_with_blank_lines():
    # N96_K48_GF64 (bit lengths in the name): 16 symbols, 8 checks over GF(64)
    code = gl.codes.from_alist(DATA / "N96_K48_GF64.txt")
    assert (code.n, code.m, code.k, code.q, code.edges) == (16, 8, 8, 64, 32)
    # first row "4 27   7 1   10 36   16 49": entries alpha^27, alpha^1, alpha^36, alpha^49
    F = gl.gf.GF(64)
    row = code.H[0].toarray().ravel()
    assert np.flatnonzero(row).tolist() == [3, 6, 9, 15]
    assert row[[3, 6, 9, 15]].tolist() == F.exp[[27, 1, 36, 49]].tolist()
    code = gl.codes.from_alist(DATA / "N128_K64_GF256.txt")     # no final newline
    assert (code.n, code.m, code.k, code.q) == (16, 8, 8, 256)


def test_gfq_base_matrix_uses_array_dispersion(tmp_path):
    code = gl.codes.from_base_matrix(_write(tmp_path / "e.txt", TOY_GF4_BASE), q=4)
    # block exponent s: row i has alpha^c at column c = (s + i) mod 3; GF(4) alpha^0..2 = 1, 2, 3
    expected = np.array([[1, 0, 0, 0, 2, 0, 0, 0, 0],
                         [0, 2, 0, 0, 0, 3, 0, 0, 0],
                         [0, 0, 3, 1, 0, 0, 0, 0, 0],
                         [0, 0, 0, 0, 0, 3, 1, 0, 0],
                         [0, 0, 0, 1, 0, 0, 0, 2, 0],
                         [0, 0, 0, 0, 2, 0, 0, 0, 3]])
    np.testing.assert_array_equal(code.H.toarray(), expected)
    assert (code.z, code.q, code.k) == (3, 4, 9 - gl.gflinalg.gf_rank(expected, 4))


def _token_lines(text: str):
    return [line.split() for line in text.split("\n") if line.split()]


def _gr_fec_files():
    files = sorted(GR_FEC.glob("*.alist"))
    if not files:
        pytest.skip("gr-fec alists not installed (Debian package gnuradio)")
    return files


def test_padded_writer_reproduces_mackay_style_files():
    # zero-padded: MacKay's form, as in the reference and AFF3CT files
    for name in ("wifi_1944_1_2.alist", "wimax_2304_1_2.alist", "aff3ct_WIFI_540_648.alist",
                 "aff3ct_WIMAX_288_576.alist"):
        code = gl.codes.from_alist(DATA / name)
        assert _token_lines(format_alist(code, pad=True)) == _token_lines((DATA / name).read_text())


def test_default_writer_reproduces_gr_fec_files():
    # unpadded: gr-fec's form, which its fec_mtrx reader needs (a padding 0 would be row -1)
    for path in _gr_fec_files()[:6]:
        assert _token_lines(format_alist(gl.codes.from_alist(path))) == _token_lines(path.read_text())


# ------------------------------------------------------------------ real files

def test_gr_fec_alists_load():
    files = _gr_fec_files()
    assert len(files) >= 15
    for path in files:
        code = gl.codes.from_alist(path)
        lines = Path(path).read_text().split("\n")
        n, m = map(int, lines[0].split())
        assert (code.n, code.m) == (n, m)
        assert np.diff(code.H.tocsc().indptr).tolist() == list(map(int, lines[2].split()))
        named = re.fullmatch(r"n_(\d+)_k_(\d+)_gap_\d+\.alist", Path(path).name)
        if named:                                   # parity-check matrices named by (n, k)
            assert (code.n, code.k) == (int(named[1]), int(named[2]))
    assert gl.codes.from_alist(GR_FEC / "PNB2_512_23C1.alist").k == 2960


def test_aff3ct_alist_with_crlf_and_no_final_newline():
    raw = (DATA / "aff3ct_WIMAX_288_576.alist").read_bytes()
    assert b"\r\n" in raw and not raw.endswith(b"\n")
    code = gl.codes.from_alist(DATA / "aff3ct_WIMAX_288_576.alist")
    assert (code.n, code.k, code.edges) == (576, 288, 76 * 24)


# ---------------------------------------------------------- malformed files

BAD_BINARY = [
    ("", 1, "file is empty"),
    ("  \n\t\n", 1, "file is empty"),
    (_replace_line(TOY_ALIST, 1, "6"), 1, "header has 1 numbers"),
    (_replace_line(TOY_ALIST, 1, "6 3 2 1"), 1, "header has 4 numbers"),
    (_replace_line(TOY_ALIST, 1, "6 x3"), 1, "'x3' is not an integer"),
    (_replace_line(TOY_ALIST, 1, "6 3.0"), 1, "'3.0' is not an integer"),
    (_replace_line(TOY_ALIST, 1, "0 3"), 1, "N = 0 columns and M = 3 rows must both be >= 1"),
    (_replace_line(TOY_ALIST, 2, "2 4"), 2, "largest weights given as 2 4, but the weight lists have 2 3"),
    (_replace_line(TOY_ALIST, 2, "2"), 2, "expected 2 integers"),
    (_replace_line(TOY_ALIST, 3, "2 2 2 1 1"), 3, "expected 6 integers (the 6 column weights), found 5"),
    (_replace_line(TOY_ALIST, 3, "2 2 2 1 1 4"), 3, "column weight 4 is outside 0..3"),
    (_replace_line(TOY_ALIST, 3, "2 2 2 1 1 2"), 4, "row weights sum to 9 but column weights to 10"),
    (_replace_line(TOY_ALIST, 5, "1 4"), 5, "row index 4 is outside 1..3"),
    (_replace_line(TOY_ALIST, 5, "-1 3"), 5, "row index -1 is outside 1..3"),
    (_replace_line(TOY_ALIST, 5, "1 1"), 5, "column 1 lists row 1 twice"),
    (_replace_line(TOY_ALIST, 5, "1 0"), 5, "column 1 has weight 2 in the weight lists but 1 row indices"),
    (_replace_line(TOY_ALIST, 5, "1 3 2"), 5, "column 1 lists 3 numbers, more than the largest column weight 2"),
    (_replace_line(TOY_ALIST_PADDED, 8, "0 1"), 8, "column 4: zero padding before the last row index"),
    (_replace_line(TOY_ALIST, 13, "1 3 7"), 13, "column index 7 is outside 1..6"),
    (_replace_line(TOY_ALIST, 5, "2 3"), 11, "row 1 lists column 1, but column 1 (line 5) does not list row 1"),
    (_replace_line(TOY_ALIST, 11, "2 3 4"), 11, "row 1 lists column 3, but column 3 (line 7) does not list row 1"),
    (TOY_ALIST.rsplit("1 3 6", 1)[0], 12, "truncated: expected the column list of row 3"),
    (TOY_ALIST[:26], 4, "truncated: expected the row list of column 1"),
    (TOY_ALIST + "7\n", 14, "unexpected content after the M row lists"),
    (TOY_ALIST.encode().replace(b"3 3 3", b"3 3 \xe9 3"), 4, "byte 0xe9 is not ASCII"),
    ("2 2\n1 1\n1 1\n1 1\n1\n2\n1\n2\n", None, "H has GF(2) rank 2 with n = 2: dimension k = 0"),
]

BAD_KN = [
    (_replace_line(TOY_KN, 1, "4 2 6"), 1, "field size q = 6 is not one of 4, 8, 16, 32, 64, 128, 256"),
    (_replace_line(TOY_KN, 1, "4 2 2"), 1, "field size q = 2"),
    (_replace_line(TOY_KN, 4, "1 0 2 3"), 4, "exponent (entry alpha^e of GF(4)) e = 3 is outside 0..2"),
    (_replace_line(TOY_KN, 4, "1 -1 2 1"), 4, "e = -1 is outside 0..2"),
    (_replace_line(TOY_KN, 4, "1 0 5 1"), 4, "column index 5 is outside 1..4"),
    (_replace_line(TOY_KN, 4, "1 0 2"), 4, "expected 4 integers (the 2 (column, exponent) pairs of row 1), found 3"),
    (_replace_line(TOY_KN, 4, "1 0 1 1"), 4, "row 1 lists column 1 twice"),
    (_replace_line(TOY_KN, 2, "2 1 1 0"), 2, "column 1 has degree 2 here but appears in 1 row lists"),
    (_replace_line(TOY_KN, 3, "2 1"), 3, "row degrees sum to 3 but column degrees to 4"),
    (_replace_line(TOY_KN, 2, "1 1 1"), 2, "expected 4 integers (the 4 column degrees), found 3"),
    (TOY_KN.rsplit("3 2", 1)[0], 4, "truncated: expected the 2 (column, exponent) pairs of row 2"),
    (TOY_KN + "1 1\n", 6, "unexpected content after the M row lists"),
]

BAD_BASE = [
    ("", 1, "file is empty"),
    (_replace_line(TOY_BASE, 2, "-1 2 0 0"), 2, "expected 5 integers (base-matrix row 2"),
    (_replace_line(TOY_BASE, 3, "1 -1 1 -1 0 0"), 3, "expected 5 integers (base-matrix row 3"),
    (_replace_line(TOY_BASE, 2, "-1 3 0 0 0"), 2, "shift 3 is outside -1..2"),
    (_replace_line(TOY_BASE, 1, "0 -2 1 0 -1"), 1, "shift -2 is outside -1..2"),
    (_replace_line(TOY_BASE, 3, "1 -1 1 -1 zero"), 3, "'zero' is not an integer"),
    ("-1 -1\n-1 -1\n", None, "H has GF(2) rank 0 with n = 6: dimension k = 6"),
]


def _check_error(err: CodeFormatError, path: Path, line, fragment):
    assert isinstance(err, ValueError)
    assert err.path == str(path) and err.line == line
    assert fragment in err.problem
    assert str(path) in str(err) and fragment in str(err)
    if line is not None:
        assert f", line {line}: " in str(err)
    assert str(pickle.loads(pickle.dumps(err))) == str(err)


@pytest.mark.parametrize("content,line,fragment", BAD_BINARY + BAD_KN,
                         ids=[f"alist-{i}" for i in range(len(BAD_BINARY) + len(BAD_KN))])
def test_malformed_alist(content, line, fragment, tmp_path):
    path = _write(tmp_path / "bad.alist", content)
    with pytest.raises(CodeFormatError) as err:
        gl.codes.from_alist(path)
    _check_error(err.value, path, line, fragment)


@pytest.mark.parametrize("content,line,fragment", BAD_BASE,
                         ids=[f"base-{i}" for i in range(len(BAD_BASE))])
def test_malformed_base_matrix(content, line, fragment, tmp_path):
    path = _write(tmp_path / "bad.txt", content)
    with pytest.raises(CodeFormatError) as err:
        gl.codes.from_base_matrix(path, 3)
    _check_error(err.value, path, line, fragment)


def test_malformed_gfq_base_matrix(tmp_path):
    path = _write(tmp_path / "bad.txt", _replace_line(TOY_GF4_BASE, 2, "-1 3 0"))
    with pytest.raises(CodeFormatError) as err:
        gl.codes.from_base_matrix(path, q=4)
    _check_error(err.value, path, 2, "exponent (GF(4): -1 or 0..2) 3 is outside -1..2")


def test_bad_arguments_are_code_errors(tmp_path):
    path = _write(tmp_path / "b.txt", TOY_BASE)
    with pytest.raises(CodeError, match="needs the expansion factor z"):
        gl.codes.from_base_matrix(path)
    with pytest.raises(CodeError, match="got z=0"):
        gl.codes.from_base_matrix(path, 0)
    with pytest.raises(CodeError, match=r"GF\(4\) blocks have size z = q-1 = 3, got z=5"):
        gl.codes.from_base_matrix(path, 5, q=4)
    with pytest.raises(CodeError, match="q=3 is not 2 or one of 4, 8"):
        gl.codes.from_base_matrix(path, q=3)
    with pytest.raises(CodeError, match="has no base matrix"):
        gl.codes.to_base_matrix(gl.codes.from_alist(_write(tmp_path / "t.alist", TOY_ALIST)), tmp_path / "o")
    H = sp.csr_matrix(np.array([[1, 2, 0], [0, 0, 0]], dtype=np.uint8))
    with pytest.raises(CodeError, match="row 2 of H is empty"):
        gl.codes.to_alist(gl.codes.Code("z", H, 2, q=4), tmp_path / "z.alist")
    with pytest.raises(FileNotFoundError):
        gl.codes.from_alist(tmp_path / "missing.alist")


# ------------------------------------------------------- property tests

def _tokens_mutation(text: str, data) -> bytes:
    """Apply 1-3 random edits (token or line level, or a cut) to a valid file."""
    lines = [line.split() for line in text.split("\n")]
    for _ in range(data.draw(st.integers(1, 3))):
        kind = data.draw(st.sampled_from(["set", "delete", "insert", "drop_line", "dup_line",
                                          "swap_lines", "cut", "junk"]))
        i = data.draw(st.integers(0, len(lines) - 1))
        if kind in ("set", "delete", "insert") and lines[i]:
            j = data.draw(st.integers(0, len(lines[i]) - 1))
            token = str(data.draw(st.integers(-3, 12)))
            if kind == "set":
                lines[i][j] = token
            elif kind == "delete":
                del lines[i][j]
            else:
                lines[i].insert(j, token)
        elif kind == "drop_line" and len(lines) > 1:
            del lines[i]
        elif kind == "dup_line":
            lines.insert(i, list(lines[i]))
        elif kind == "swap_lines":
            k = data.draw(st.integers(0, len(lines) - 1))
            lines[i], lines[k] = lines[k], lines[i]
        elif kind == "cut":
            flat = "\n".join(" ".join(t) for t in lines)
            cut = data.draw(st.integers(0, len(flat)))
            lines = [line.split() for line in flat[:cut].split("\n")]
        elif kind == "junk":
            lines[i].append(data.draw(st.sampled_from(["x", "1.5", "+2", "--1", "\u0663", "0x1"])))
    return "\n".join(" ".join(t) for t in lines).encode("utf-8")


PROPERTY = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
RANDOM_TEXT = st.text(alphabet="0123456789 -\n\t\r", max_size=120)


def _loads_or_format_error(read, path: Path, content: bytes):
    path.write_bytes(content)
    try:
        code = read(path)
    except CodeFormatError as err:
        assert err.path == str(path) and str(path) in str(err)
        event("CodeFormatError")
        return
    event("loaded")
    assert 0 < code.k < code.n and code.H.shape == (code.m, code.n)


@PROPERTY
@given(data=st.data())
def test_alist_parser_on_mutated_files(data, tmp_path):
    text = data.draw(st.sampled_from([TOY_ALIST, TOY_ALIST_PADDED, TOY_KN]))
    _loads_or_format_error(gl.codes.from_alist, tmp_path / "m.alist", _tokens_mutation(text, data))


@PROPERTY
@given(content=st.one_of(st.binary(max_size=120), RANDOM_TEXT.map(str.encode)))
def test_alist_parser_on_random_files(content, tmp_path):
    _loads_or_format_error(gl.codes.from_alist, tmp_path / "r.alist", content)


@PROPERTY
@given(data=st.data())
def test_base_matrix_parsers_on_mutated_files(data, tmp_path):
    if data.draw(st.booleans()):
        content = _tokens_mutation(TOY_BASE, data)
        read = lambda p: gl.codes.from_base_matrix(p, 3)  # noqa: E731
    else:
        content = _tokens_mutation(TOY_GF4_BASE, data)
        read = lambda p: gl.codes.from_base_matrix(p, q=4)  # noqa: E731
    _loads_or_format_error(read, tmp_path / "m.txt", content)


@PROPERTY
@given(content=st.one_of(st.binary(max_size=120), RANDOM_TEXT.map(str.encode)), q=st.sampled_from([2, 8]))
def test_base_matrix_parsers_on_random_files(content, q, tmp_path):
    read = (lambda p: gl.codes.from_base_matrix(p, 5)) if q == 2 else \
        (lambda p: gl.codes.from_base_matrix(p, q=q))
    _loads_or_format_error(read, tmp_path / "r.txt", content)


@PROPERTY
@given(data=st.data())
def test_random_matrices_round_trip(data, tmp_path):
    q = data.draw(st.sampled_from([2, 4, 16, 256]))
    m = data.draw(st.integers(1, 6))
    n = data.draw(st.integers(m + 1, 12))
    entries = st.integers(0, q - 1) if q > 2 else st.integers(0, 1)
    A = np.array(data.draw(st.lists(st.lists(entries, min_size=n, max_size=n), min_size=m, max_size=m)),
                 dtype=np.uint8)
    if q > 2:
        A[:, 0] = np.where(A[:, 0] == 0, 1, A[:, 0])    # the KN format has no empty rows
    elif not A.any():
        A[0, 0] = 1
    code = gl.codes.Code("random", sp.csr_matrix(A), n - gl.gflinalg.gf_rank(A, q), q=q)
    pad = data.draw(st.booleans())
    gl.codes.to_alist(code, tmp_path / "r.alist", pad=pad)
    back = gl.codes.from_alist(tmp_path / "r.alist")
    assert _same(back.H, A) and (back.k, back.q) == (code.k, q)
