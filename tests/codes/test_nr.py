"""5G NR LDPC codes (gpuldpc.codes.nr): tables, lifting, base-graph choice, encoder, rate matching.

Rate matching is checked two ways: against Sionna's ``LDPC5GEncoder`` output stored in
``data/nr_sionna_vectors.npz`` (written by tools/make_nr_sionna_vectors.py; both base
graphs, all eight lifting-size sets, rv 0..3, the bit interleaver), and against a
line-by-line transcription of TS 38.212 5.4.2.1's bit-selection loop (NULL filler bits,
N_cb, k0) below, which also covers what Sionna does not: LBRM and E past the buffer.
"""
from pathlib import Path

import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.codes import nr5g as nrmod
from gpuldpc.encode import CoreExtensionEncoder, core_extension_plan

DATA = Path(__file__).parent / "data"


def test_lifting_sizes_are_table_5_3_2_1():
    assert len(nrmod.LIFTING_SIZES) == 51 and nrmod.LIFTING_SIZES[0] == 2 and nrmod.LIFTING_SIZES[-1] == 384
    assert [len(s) for s in nrmod.LIFTING_SETS] == [8, 8, 7, 6, 6, 6, 5, 5]
    assert nrmod.LIFTING_SETS[6] == (13, 26, 52, 104, 208)
    assert nrmod.SET_INDEX[384] == 1 and nrmod.SET_INDEX[15] == 7 and nrmod.SET_INDEX[288] == 4


def test_base_graph_tables():
    for bg, (rows, cols), edges in ((1, (46, 68), 316), (2, (42, 52), 197)):
        base = nrmod.base_matrix(bg, 384)
        assert base.shape == (rows, cols) and (base >= 0).sum() == edges
    b1 = nrmod.base_matrix(1, 384)            # iLS = 1 column of Table 5.3.2-2
    assert b1[0, 0] == 307 and b1[0, 22] == 1 and b1[1, 22] == 0 and b1[45, 1] == 135 and b1[45, 67] == 0
    assert nrmod.base_matrix(1, 2)[0, 0] == 250 % 2
    b6 = nrmod.base_matrix(1, 208)            # iLS = 6: V(1, 22) = 105
    assert b6[1, 22] == 105 and b6[0, 22] == 0
    b2 = nrmod.base_matrix(2, 15)             # iLS = 7 column of Table 5.3.2-3, V(0, 0) = 145
    assert b2[0, 0] == 145 % 15
    # identity extension: column 26 + i (BG1) / 14 + i (BG2) holds row 4 + i only
    for bg, kb in ((1, 22), (2, 10)):
        base = nrmod.base_matrix(bg, 10)
        ext = base[4:, kb + 4:]
        assert (np.diag(ext) == 0).all() and (ext >= 0).sum() == ext.shape[0]


@pytest.mark.parametrize("bg", [1, 2])
def test_every_mother_code_encodes_to_codewords(bg):
    rng = np.random.default_rng(bg)
    for z in nrmod.LIFTING_SIZES:
        code = gl.codes.get(f"nr-bg{bg}-z{z}")
        assert code is nrmod.mother(bg, z) and code.standard == "nr" and code.z == z
        assert (code.n, code.k) == ((68 if bg == 1 else 52) * z, (22 if bg == 1 else 10) * z)
        assert isinstance(code.encoder, CoreExtensionEncoder)
        info = rng.integers(0, 2, (3, code.k)).astype(np.uint8)
        cw = code.encode(info)
        assert np.array_equal(cw[:, :code.k], info)
        assert not code.syndrome(cw).any(), code.name


def test_core_plan_matches_the_standards_structure():
    g, first, x, order = core_extension_plan(nrmod.base_matrix(1, 384))
    assert (g, first, x) == (4, 0, 0)                 # column 22 shifts (1, 0, 1): P^0 p_0
    g, first, x, order = core_extension_plan(nrmod.base_matrix(1, 208))
    assert (g, first, x) == (4, 0, 105)               # iLS 6: shifts (0, 105, 0)
    assert [j for _, j in order] == [1, 2, 3]
    # WiFi matrices fit the same rule (core = whole parity part), so the encoders agree there
    wifi = gl.codes.wifi(648, "1/2")
    info = np.random.default_rng(0).integers(0, 2, (4, wifi.k)).astype(np.uint8)
    assert np.array_equal(CoreExtensionEncoder(wifi.base, wifi.z).encode(info), wifi.encode(info))


@pytest.mark.parametrize("k, rate, bg, z", [
    (292, 0.9, 2, 40), (293, 0.7, 1, 14), (3824, 0.67, 2, 384), (3825, 0.5, 1, 176),
    (8448, 0.3, 1, 384), (1000, 0.25, 2, 104), (100, 0.5, 2, 18), (640, 0.5, 2, 72),
    (641, 0.5, 2, 72), (560, 0.5, 2, 72), (561, 0.5, 2, 64), (193, 0.5, 2, 26),
])
def test_base_graph_and_lifting_size_selection(k, rate, bg, z):
    """6.2.2: BG2 iff A <= 292, or A <= 3824 and R <= 0.67, or R <= 0.25; 5.3.2: Zc the least
    lifting size with K_b Zc >= K' (K_b = 22; BG2: 10/9/8/6 above 640/560/192/else)."""
    assert nrmod.select_base_graph(k, rate) == bg
    assert nrmod.lifting_size(k, bg) == z
    code = gl.codes.nr(k, int(np.ceil(k / rate)))
    assert (code.bg, code.z) == (bg, z)


def test_code_block_attributes():
    c = gl.codes.nr(8448, 12672)
    assert (c.bg, c.z, c.ils, c.k, c.n, c.filler, c.n_cb, c.k0) == (1, 384, 1, 8448, 12672, 0, 66 * 384, 0)
    assert c.mother is gl.codes.get("nr-bg1-z384") and c.name == "nr-bg1-z384-k8448-e12672-rv0"
    c = gl.codes.nr(1000, 3000, rv=2)                 # BG2 (R = 1/3), K_b = 10, Zc = 104
    assert (c.bg, c.z, c.filler, c.n_cb) == (2, 104, 40, 5200)
    assert c.k0 == (25 * 5200 // (50 * 104)) * 104 == 2600
    assert np.array_equal(c.info_positions, np.arange(1000))
    assert np.array_equal(c.shaping.shortened, np.arange(1000, 1040))
    assert np.array_equal(c.shaping.punctured[:208], np.arange(208))   # first 2 Zc never sent
    assert c.with_rv(3).k0 == (43 * 5200 // (50 * 104)) * 104 and c.with_rv(3).k == 1000


def _sionna_cases():
    data = np.load(DATA / "nr_sionna_vectors.npz")
    i = 0
    while f"case{i}" in data:
        k, n, qm, z, bg, *rvs = data[f"case{i}"].tolist()
        yield (k, n, qm, z, bg, rvs, np.unpackbits(data[f"info{i}"], axis=-1, count=k),
               np.unpackbits(data[f"out{i}"], axis=-1, count=n))
        i += 1


def test_rate_matched_output_equals_sionna():
    """Sionna 2.2.0 LDPC5GEncoder(k, n, num_bits_per_symbol)(info, rv=[...]) on 26 (k, n)
    pairs: both base graphs, all eight lifting-size sets, fillers, rv 0..3, Qm 2/4/6."""
    seen = set()
    cases = 0
    for k, n, qm, z, bg, rvs, info, out in _sionna_cases():
        for j, rv in enumerate(rvs):
            code = gl.codes.nr(k, n, rv=rv, qm=qm or None)
            assert (code.bg, code.z) == (bg, z), (k, n)
            assert np.array_equal(code.encode(info), out[:, j]), (k, n, rv, qm)
            cases += 1
        seen.add((bg, nrmod.SET_INDEX[z]))
    assert cases == 52
    assert seen == {(bg, s) for bg in (1, 2) for s in range(8)}


def _spec_bit_selection(k, e, rv, bg, z, n_cb):
    """TS 38.212 5.4.2.1 as written: d with <NULL> filler bits, k0 of Table 5.4.2.1-2, the
    while loop over (k0 + j) mod N_cb; returns the mother positions (d index + 2Zc)."""
    K = (22 if bg == 1 else 10) * z
    N = (66 if bg == 1 else 50) * z
    d = [None if k - 2 * z <= i < K - 2 * z else i for i in range(N)]   # None = <NULL>
    num = {1: (0, 17, 33, 56), 2: (0, 13, 25, 43)}[bg][rv]
    k0 = (num * n_cb // ((66 if bg == 1 else 50) * z)) * z
    out, kk, j = [], 0, 0
    while kk < e:
        if d[(k0 + j) % n_cb] is not None:
            out.append(d[(k0 + j) % n_cb] + 2 * z)
            kk += 1
        j += 1
    return np.array(out)


@pytest.mark.parametrize("k, e, rv, n_ref", [
    (8448, 12672, 1, None), (8448, 30000, 2, 20000), (3840, 25000, 3, None),   # E past N_cb: repeats
    (500, 700, 0, 1000), (500, 4000, 1, 1200), (300, 1500, 3, 500), (12, 200, 2, None),
    (2000, 2500, 3, 4000), (100, 300, 0, 150),
])
def test_bit_selection_follows_the_standards_loop(k, e, rv, n_ref):
    code = gl.codes.nr(k, e, rv=rv, n_ref=n_ref)
    N = (66 if code.bg == 1 else 50) * code.z
    assert code.n_cb == (N if n_ref is None else min(N, n_ref))
    want = _spec_bit_selection(k, e, rv, code.bg, code.z, code.n_cb)
    assert np.array_equal(code.shaping.transmitted, want)
    info = np.random.default_rng(k).integers(0, 2, (2, k)).astype(np.uint8)
    assert np.array_equal(code.encode(info), code.encode_mother(info)[:, want])


def test_lbrm_n_ref():
    assert nrmod.lbrm_n_ref(25344, 3) == 25344 * 3 // (2 * 3)
    code = gl.codes.nr(8448, 12672, rv=1, n_ref=nrmod.lbrm_n_ref(16000))   # 24000 < 66 * 384
    assert code.n_cb == 24000 and code.k0 == (17 * 24000 // (66 * 384)) * 384
    assert code.shaping.transmitted.max() < 2 * 384 + 24000


@pytest.mark.parametrize("kwargs, match", [
    (dict(k=8449, n_or_e=10000), r"k=8449 is outside 12\.\.8448"),
    (dict(k=11, n_or_e=100), r"k=11 is outside 12\.\.8448"),
    (dict(k=3841, n_or_e=6000, bg=2), r"k=3841 is outside 12\.\.3840 \(base graph 2"),
    (dict(k=5000, n_or_e=25000), r"k=5000 .* selects base graph 2 .* 12\.\.3840"),
    (dict(k=1000, n_or_e=1052), r"n_or_e=1052 is outside >= 1053"),
    (dict(k=1000, n_or_e=500), r"n_or_e=500 is outside >= 1053 .* code rates up to 0\.95"),
    (dict(k=1000, n_or_e=2000, rv=4), r"rv=4 is outside 0\.\.3"),
    (dict(k=1000, n_or_e=2000, rv=-1), r"rv=-1 is outside 0\.\.3"),
    (dict(k=1000, n_or_e=2000, bg=3), r"bg=3 is not a 5G NR base graph; use 1 or 2"),
    (dict(k=1000, n_or_e=2000, n_ref=100), r"n_ref=100 is outside >= 832"),
    (dict(k=1000, n_or_e=2001, qm=4), r"n_or_e=2001 must be a multiple of qm=4"),
    (dict(k=1000, n_or_e=2000, qm=0), r"qm=0 is outside 1\.\.10"),
])
def test_bad_parameters_name_the_parameter_and_range(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gl.codes.nr(**kwargs)


def test_bad_mother_parameters():
    with pytest.raises(ValueError, match=r"z=17 is not a lifting size .* 2, 3, 4"):
        nrmod.mother(1, 17)
    with pytest.raises(ValueError, match="bg=0"):
        nrmod.mother(0, 16)
    with pytest.raises(KeyError, match="nr-bg1-z384"):
        gl.codes.get("nr-bg1-z385")
