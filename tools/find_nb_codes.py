#!/usr/bin/env python3
"""Search the GF(q) code matrices that gpuldpc.codes.nb reads from nb_data/ (run once; deterministic).

Writes into python/gpuldpc/codes/nb_data/:

* ``gf4_192_96_base_exponents.txt``, ``gf8_224_112_base_exponents.txt`` --
  (3,6)-regular arrays of alpha-multiplied CPMs (z = q-1 = 3, 7) on a
  32x64 / 16x32 base.  Support: progressive edge growth (deterministic ties).
  Exponents: coordinate descent from all zeros, each entry in turn set to the
  smallest value that minimizes the number of base 4-cycles, then 6-cycles,
  whose alternating exponent sum s1-s2+s3-... is 0 mod z (exactly those lift to cycles of H of the same
  length); sweeps until none is left or no gain.  Finally the block columns
  are rotated so that the last n-k columns of H are independent (information
  in positions 0..k-1).
* ``dv2_384_support_z32.txt`` -- an 8x12 array of 32x32 circulants, two per
  column (a cubic multigraph on the 8 block rows lifted by z = 32): random
  (seeded) candidates until the Tanner graph has girth 24.
* ``gf<q>_384_128_coefficients.txt`` (q = 32, 64, 128, 256) -- random nonzero
  edge coefficients (seeded), redrawn until no 24-cycle of the Tanner graph
  satisfies prod_t h(c_t, v_{t-1}) / h(c_t, v_t) = 1, the condition for the
  cycle to carry a codeword of symbol weight 12.

Prints n, k, rank and girth of each result.  Usage (a few minutes; ``--cpm-only``
stops after the two alpha-CPM arrays)::

    PYTHONPATH=python python3 tools/find_nb_codes.py [--cpm-only]
"""
from __future__ import annotations

import sys

import numpy as np

from gpuldpc.codes.nb import DATA_DIR, DV2_384_Z, cpm_code, disperse, tanner_girth
from gpuldpc.codes.qc import qc_expand
from gpuldpc.gflinalg import GFqEncoder, gf_rank

SEED = 20240601
DV2_TRIALS = 20000


# ---- (3,6) alpha-CPM arrays ------------------------------------------------
def peg_support(mb: int, nb: int, dv: int = 3, dc: int = 6) -> list[list[int]]:
    """Rows of each base column by progressive edge growth (Hu, Eleftheriou, Arnold).

    Each new edge of column j goes to a check of degree < dc at the largest
    distance from j in the graph built so far (unreached first), ties to the
    lowest degree, then the lowest index: deterministic.
    """
    check_cols: list[list[int]] = [[] for _ in range(mb)]
    cols: list[list[int]] = []
    for j in range(nb):
        rows: list[int] = []
        for _ in range(dv):
            dist = {}
            frontier = list(rows)
            for r in rows:
                dist[r] = 0
            d = 0
            while frontier:
                d += 1
                nxt = []
                for r in frontier:
                    for c in check_cols[r]:
                        for r2 in (cols[c] if c < j else rows):
                            if r2 not in dist:
                                dist[r2] = d
                                nxt.append(r2)
                frontier = nxt
            free = [r for r in range(mb) if len(check_cols[r]) < dc and r not in rows]
            r = min(free, key=lambda r: (-dist.get(r, mb + 1), len(check_cols[r]), r))
            rows.append(r)
            check_cols[r].append(j)
        cols.append(sorted(rows))
    return cols


def base_cycles(cols: list[list[int]], length: int) -> np.ndarray:
    """Every cycle with ``length`` entries (length/2 rows and columns) of the base graph, once.

    Returned as int64 [ncycles, length, 2] (row, column) entries e_1..e_length
    in walk order r1 c1 r2 c2 ...; the exponent sum of a cycle is
    s(e_1) - s(e_2) + s(e_3) - ... and the cycle lifts to cycles of H of the
    same length exactly when that sum is 0 mod z.
    """
    mb = max(max(c) for c in cols) + 1
    cols_of = [[j for j, c in enumerate(cols) if r in c] for r in range(mb)]
    half = length // 2
    seen, out = set(), []

    def walk(r, path_rows, path_cols, entries):
        for c in cols_of[r]:
            if c in path_cols:
                continue
            for r2 in cols[c]:
                if r2 == r:
                    continue
                e = entries + [(r, c), (r2, c)]
                if len(path_rows) == half:
                    if r2 == path_rows[0]:
                        key = frozenset(e)
                        if key not in seen:
                            seen.add(key)
                            out.append(e)
                elif r2 > path_rows[0] and r2 not in path_rows:
                    walk(r2, path_rows + [r2], path_cols + [c], e)

    for r0 in range(mb):
        walk(r0, [r0], [], [])
    return np.array(out, dtype=np.int64).reshape(-1, length, 2)


def balanced_count(E: np.ndarray, cycles: np.ndarray, z: int) -> int:
    """How many of ``cycles`` (see :func:`base_cycles`) have exponent sum 0 mod z."""
    if cycles.size == 0:
        return 0
    sign = np.where(np.arange(cycles.shape[1]) % 2 == 0, 1, -1)
    return int((((E[cycles[..., 0], cycles[..., 1]] * sign).sum(axis=1)) % z == 0).sum())


def search_cpm_36(q: int, mb: int) -> np.ndarray:
    """Exponents on a PEG support that leave as few 4- then 6-cycles in H as the descent finds."""
    z = q - 1
    cols = peg_support(mb, 2 * mb)
    E = np.full((mb, 2 * mb), -1, dtype=np.int64)
    for j, rows in enumerate(cols):
        E[rows, j] = 0
    c4, c6 = base_cycles(cols, 4), base_cycles(cols, 6)
    print(f"  GF({q}): PEG base with {len(c4)} 4-cycles, {len(c6)} 6-cycles")

    def score():
        return 10_000 * balanced_count(E, c4, z) + balanced_count(E, c6, z)

    entries = [tuple(e) for e in np.argwhere(E >= 0)]
    best = score()
    for sweep in range(50):
        for r, c in entries:
            scores = []
            for v in range(z):
                E[r, c] = v
                scores.append(score())
            E[r, c] = int(np.argmin(scores))
        now = score()
        print(f"  GF({q}) sweep {sweep}: balanced base cycles: {now // 10_000} of length 4, "
              f"{now % 10_000} of length 6")
        if now == 0 or now >= best:
            break
        best = now
    return E


def systematic_rotation(E: np.ndarray, q: int) -> np.ndarray:
    """E, block columns rotated left by the smallest t that makes H's last n-k columns independent."""
    H = disperse(E, q)
    k = H.shape[1] - gf_rank(H, q)
    for t in range(E.shape[1]):
        Et = np.roll(E, -t, axis=1)
        if np.array_equal(GFqEncoder(cpm_code("search", Et, q, k)).info_positions, np.arange(k)):
            print(f"  GF({q}): block columns rotated left by {t}: information at 0..{k - 1}")
            return Et
    raise SystemExit(f"GF({q}): no rotation puts the information first")


# ---- (2,3) support, 384 columns ---------------------------------------------
def search_dv2_support(rng: np.random.Generator) -> np.ndarray:
    z = DV2_384_Z
    mb = 256 // z
    nb = 3 * mb // 2
    best = 0
    for trial in range(DV2_TRIALS):
        while True:
            pairs = rng.permutation(np.repeat(np.arange(mb), 3)).reshape(nb, 2)
            if (pairs[:, 0] != pairs[:, 1]).all():
                break
        shift = rng.integers(0, z, nb)
        base = np.full((mb, nb), -1, dtype=np.int64)
        base[pairs[:, 0], np.arange(nb)] = 0
        base[pairs[:, 1], np.arange(nb)] = shift
        g = tanner_girth(qc_expand(base, z), z)
        if g is not None and g > best:
            best = g
            print(f"  (2,3) support: trial {trial}: girth {g}")
            if g >= 24:
                return base
    raise SystemExit(f"no girth-24 (2,3) support in {DV2_TRIALS} trials")


def shortest_cycles_dv2(H) -> list[list[tuple[int, int, int]]]:
    """All shortest cycles of a dv=2 Tanner graph as lists of (check, var_in, var_out)."""
    H = H.tocsr()
    M, N = H.shape
    Hc = H.tocsc()
    var_checks = [Hc.indices[Hc.indptr[v]:Hc.indptr[v + 1]].tolist() for v in range(N)]
    check_vars = [H.indices[H.indptr[c]:H.indptr[c + 1]].tolist() for c in range(M)]
    L = tanner_girth(H) // 2  # checks on a shortest cycle
    cycles, seen = [], set()
    for start in range(M):
        stack = [(start, -1, [start], [])]
        while stack:
            c, v_in, path, vs = stack.pop()
            for v in check_vars[c]:
                if v == v_in:
                    continue
                a, b = var_checks[v]
                nxt = b if a == c else a
                if len(path) == L:
                    if nxt == start:
                        key = frozenset(vs + [v])
                        if key not in seen:
                            seen.add(key)
                            cyc_vars = vs + [v]
                            cycles.append([(path[t], cyc_vars[t - 1], cyc_vars[t])
                                           for t in range(L)])
                    continue
                if nxt > start and nxt not in path:
                    stack.append((nxt, v, path + [nxt], vs + [v]))
    return cycles


def choose_coefficients(H, q: int, cycles, rng: np.random.Generator) -> np.ndarray:
    """Edge exponents [M, 3] (CSR order) with no balanced shortest cycle."""
    H = H.tocsr()
    M = H.shape[0]
    pos = {(c, v): t for c in range(M)
           for t, v in enumerate(H.indices[H.indptr[c]:H.indptr[c + 1]])}
    idx = np.array([[(pos[c, vi], pos[c, vo]) for c, vi, vo in cyc] for cyc in cycles])  # [ncyc, L, 2]
    exps = rng.integers(0, q - 1, (M, 3))
    for rnd in range(1000):
        flat = exps.ravel()
        rows = np.array([[c for c, _, _ in cyc] for cyc in cycles])
        e_in = flat[rows * 3 + idx[..., 0]]
        e_out = flat[rows * 3 + idx[..., 1]]
        bad = np.flatnonzero((e_in - e_out).sum(axis=1) % (q - 1) == 0)
        print(f"  GF({q}) round {rnd}: {bad.size} balanced shortest cycles of {len(cycles)}")
        if bad.size == 0:
            return exps
        for b in bad:
            c, vi, _ = cycles[b][rng.integers(len(cycles[b]))]
            exps[c, pos[c, vi]] = rng.integers(0, q - 1)
    raise SystemExit(f"GF({q}): balanced cycles remain")


def write_matrix(name: str, M: np.ndarray, header: str) -> None:
    path = DATA_DIR / name
    lines = [f"# {line}" for line in header.strip().splitlines()]
    lines += [" ".join(str(int(x)) for x in row) for row in M]
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}")


def main() -> int:
    rng = np.random.default_rng(SEED)
    tool = "tools/find_nb_codes.py"
    for q, mb in ((4, 32), (8, 16)):
        E = systematic_rotation(search_cpm_36(q, mb), q)
        H = disperse(E, q)
        n, r = H.shape[1], gf_rank(H, q)
        print(f"GF({q}) ({n},{n - r}) rank {r} girth {tanner_girth(H, q - 1)}")
        write_matrix(f"gf{q}_{n}_{n - r}_base_exponents.txt", E,
                     f"gf{q}-{n}-{n - r}: (3,6)-regular array of alpha-multiplied CPMs A(alpha^s), "
                     f"z = {q - 1}, -1 = zero block.\nFound by {tool} (difference-set support, "
                     f"exponents by coordinate descent on balanced base 6-cycles).")
    if "--cpm-only" in sys.argv:
        return 0
    base = search_dv2_support(rng)
    write_matrix("dv2_384_support_z32.txt", base,
                 f"Support of the (2,3)-regular (384,128) codes: 8x12 circulant shifts, "
                 f"z = {DV2_384_Z},\n"
                 f"-1 = zero block, row r of a block has its 1 in column (r+s) mod z.\n"
                 f"Found by {tool} (seed {SEED}); Tanner girth 24.")
    S = qc_expand(base, DV2_384_Z)
    cycles = shortest_cycles_dv2(S)
    print(f"(2,3) support: {len(cycles)} shortest cycles")
    for q in (32, 64, 128, 256):
        exps = choose_coefficients(S, q, cycles, rng)
        write_matrix(f"gf{q}_384_128_coefficients.txt", exps,
                     f"gf{q}-384-128: exponents e of the entries alpha^e of H, "
                     f"one line per check,\n"
                     f"in column order of the support dv2_384_support_z32.txt.\n"
                     f"Found by {tool} (seed {SEED}): no balanced cycle of length 24.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
