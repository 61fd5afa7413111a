// GF(q) Min-Max decoder with inter-frame SIMD (one frame per float32 lane):
// forward-backward check update (paper 003, Algorithm 2) with the modified
// Min-Max merger of paper 000 §2.3, or the trellis Min-Max check node (Lacruz
// et al., IEEE TVLSI 2015, §II-B, §III), also with step 5's pairs from first
// minima ("tmm1"); equations in
// include/gpuldpc/cpu_nb_decoder.hpp, contract in
// python/gpuldpc/decoders/reference_nb.py and reference_tmm.py.
#include "gpuldpc/cpu_nb_decoder.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/cpu_nb_decoder.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "gpuldpc/cpu_bad_llr-inl.h"

HWY_BEFORE_NAMESPACE();
namespace gpuldpc {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;

// out(x) = min_y max(a(y), b(x + y)) over GF(q) (addition = XOR); a, b, out
// are [q][N].  Four outputs per pass share each load of a(y).
HWY_NOINLINE void MinMaxConvolve(D d, const float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                                 size_t q, float* HWY_RESTRICT out) {
  const size_t N = hn::Lanes(d);
  const auto inf = hn::Set(d, std::numeric_limits<float>::infinity());
  size_t x = 0;
  for (; x + 4 <= q; x += 4) {
    auto acc0 = inf, acc1 = inf, acc2 = inf, acc3 = inf;
    for (size_t y = 0; y < q; ++y) {
      const auto ay = hn::Load(d, a + y * N);
      acc0 = hn::Min(acc0, hn::Max(ay, hn::Load(d, b + ((x + 0) ^ y) * N)));
      acc1 = hn::Min(acc1, hn::Max(ay, hn::Load(d, b + ((x + 1) ^ y) * N)));
      acc2 = hn::Min(acc2, hn::Max(ay, hn::Load(d, b + ((x + 2) ^ y) * N)));
      acc3 = hn::Min(acc3, hn::Max(ay, hn::Load(d, b + ((x + 3) ^ y) * N)));
    }
    hn::Store(acc0, d, out + (x + 0) * N);
    hn::Store(acc1, d, out + (x + 1) * N);
    hn::Store(acc2, d, out + (x + 2) * N);
    hn::Store(acc3, d, out + (x + 3) * N);
  }
  for (; x < q; ++x) {
    auto acc = inf;
    for (size_t y = 0; y < q; ++y) {
      acc = hn::Min(acc, hn::Max(hn::Load(d, a + y * N), hn::Load(d, b + (x ^ y) * N)));
    }
    hn::Store(acc, d, out + x * N);
  }
}

// dst(a) = src(index[a]) for [q][N] vectors (moving a message in or out of
// the multiplied domain).
HWY_INLINE void Permute(D d, const float* HWY_RESTRICT src, const uint16_t* HWY_RESTRICT index,
                        size_t q, float* HWY_RESTRICT dst) {
  const size_t N = hn::Lanes(d);
  for (size_t a = 0; a < q; ++a) hn::Store(hn::Load(d, src + index[a] * N), d, dst + a * N);
}

// Lane by lane argmin_a v[a] of a [q][N] vector (smallest a on ties).
hn::Vec<hn::RebindToSigned<D>> ArgMin(D d, const float* HWY_RESTRICT v, size_t q) {
  const size_t N = hn::Lanes(d);
  const hn::RebindToSigned<D> di;
  auto best = hn::Load(d, v);
  auto arg = hn::Zero(di);
  for (size_t a = 1; a < q; ++a) {
    const auto x = hn::Load(d, v + a * N);
    const auto less = hn::Lt(x, best);
    best = hn::IfThenElse(less, x, best);
    arg = hn::IfThenElse(hn::RebindMask(di, less), hn::Set(di, static_cast<int32_t>(a)), arg);
  }
  return arg;
}

// The dc edges of a row: Q'_i = L - R_old, Q_i = Q'_i - min_a Q'_i into qbuf.
void RowExtrinsic(D d, const uint32_t* cols, size_t dc, size_t q, const float* HWY_RESTRICT post,
                  const float* HWY_RESTRICT r, float* HWY_RESTRICT qbuf) {
  const size_t N = hn::Lanes(d);
  const size_t vec = q * N;
  for (size_t i = 0; i < dc; ++i) {
    const float* l = post + cols[i] * vec;
    float* qi = qbuf + i * vec;
    auto mn = hn::Set(d, std::numeric_limits<float>::infinity());
    for (size_t a = 0; a < q; ++a) {
      const auto x = hn::Load(d, l + a * N) - hn::Load(d, r + i * vec + a * N);
      hn::Store(x, d, qi + a * N);
      mn = hn::Min(mn, x);
    }
    for (size_t a = 0; a < q; ++a) hn::Store(hn::Load(d, qi + a * N) - mn, d, qi + a * N);
  }
}

// Layered schedule: L = Q_i + R_i for one edge.
void EdgePosterior(D d, const float* HWY_RESTRICT qi, const float* HWY_RESTRICT ri, size_t q,
                   float* HWY_RESTRICT l) {
  const size_t N = hn::Lanes(d);
  for (size_t a = 0; a < q; ++a) hn::Store(hn::Load(d, qi + a * N) + hn::Load(d, ri + a * N), d, l + a * N);
}

// One check row: Q (normalized extrinsic), B_{d-1..1}, then F and the merger
// left to right; R_i(a) = M_i(h_i a), and for the layered schedule L = Q + R.
template <bool kLayered>
void MinMaxRow(D d, const NbCheckRows& code, uint32_t begin, size_t dc, float* HWY_RESTRICT post,
               NbWorkspace& ws) {
  const size_t N = hn::Lanes(d);
  const size_t q = static_cast<size_t>(code.q);
  const size_t vec = q * N;  // floats per message
  const uint32_t* cols = code.rows.col.data() + begin;
  float* r = ws.messages.get() + begin * vec;
  float* qbuf = ws.extrinsic.get();
  float* back = ws.backward.get();
  float* qh = ws.work.get();
  float* fwd = qh + vec;
  float* fwd_next = fwd + vec;
  float* merged = fwd_next + vec;
  const uint16_t* div = code.div.data() + begin * q;
  const uint16_t* mul = code.mul.data() + begin * q;

  RowExtrinsic(d, cols, dc, q, post, r, qbuf);
  const auto emit = [&](size_t i, const float* m) {  // R_i(a) = M_i(h_i a)
    Permute(d, m, mul + i * q, q, r + i * vec);
    if constexpr (kLayered) EdgePosterior(d, qbuf + i * vec, r + i * vec, q, post + cols[i] * vec);
  };
  Permute(d, qbuf + (dc - 1) * vec, div + (dc - 1) * q, q, back + (dc - 1) * vec);
  for (size_t i = dc - 2; i >= 1; --i) {
    Permute(d, qbuf + i * vec, div + i * q, q, qh);
    MinMaxConvolve(d, back + (i + 1) * vec, qh, q, back + i * vec);
  }
  emit(0, back + vec);
  Permute(d, qbuf, div, q, fwd);
  for (size_t i = 1; i + 1 < dc; ++i) {
    MinMaxConvolve(d, fwd, back + (i + 1) * vec, q, merged);
    emit(i, merged);
    Permute(d, qbuf + i * vec, div + i * q, q, qh);
    MinMaxConvolve(d, fwd, qh, q, fwd_next);
    std::swap(fwd, fwd_next);
  }
  emit(dc - 1, fwd);
}

// The trellis rows of one check (reference_tmm.py steps 3-5), [q][N] each:
// first and second minimum and their columns ("tmm1": p2 is not kept).
struct TrellisRows {
  const float* m1;
  const int32_t* p;
  const float* m2;
  const int32_t* p2;
};

// Steps 4/5 for row eta: the least of one deviation and the pairs
// eta' + eta'' = eta (eta' < eta'', distinct columns), with the columns of the
// pair taken (c1, c2).  kAvoid: the rows' best values off column x (per lane):
// m2 at p2 where p = x, else m1 at p (A_x of step 5).
template <bool kAvoid>
void TwoDeviations(D d, const TrellisRows& t, size_t q, size_t eta, hn::Vec<hn::RebindToSigned<D>> x,
                   hn::Vec<D>& best, hn::Vec<hn::RebindToSigned<D>>& c1,
                   hn::Vec<hn::RebindToSigned<D>>& c2) {
  const hn::RebindToSigned<D> di;
  const size_t N = hn::Lanes(d);
  const auto off = [&](size_t e, hn::Vec<D>& v, hn::Vec<decltype(di)>& col) {
    v = hn::Load(d, t.m1 + e * N);
    col = hn::Load(di, t.p + e * N);
    if constexpr (kAvoid) {
      const auto on = hn::Eq(col, x);
      v = hn::IfThenElse(hn::RebindMask(d, on), hn::Load(d, t.m2 + e * N), v);
      col = hn::IfThenElse(on, hn::Load(di, t.p2 + e * N), col);
    }
  };
  off(eta, best, c1);
  c2 = c1;
  hn::Vec<D> v1, v2;
  hn::Vec<decltype(di)> col1, col2;
  for (size_t e1 = 1; e1 < q; ++e1) {
    const size_t e2 = eta ^ e1;
    if (e1 >= e2) continue;
    off(e1, v1, col1);
    off(e2, v2, col2);
    const auto cand = hn::Max(v1, v2);
    const auto take = hn::And(hn::Lt(cand, best), hn::RebindMask(d, hn::Ne(col1, col2)));
    best = hn::IfThenElse(take, cand, best);
    c1 = hn::IfThenElse(hn::RebindMask(di, take), col1, c1);
    c2 = hn::IfThenElse(hn::RebindMask(di, take), col2, c2);
  }
}

// Steps 4-5 of "tmm1" (reference_tmm.py, "Pairs from first minima") for row
// eta in one pass over the pairs (nb_minmax.cu first_minima_pairs): every
// step-5 pair is one of step 4's (m1 at p, distinct columns), so
// A_x = min(the row's own best value off x, P_x), P_x the least pair without
// column x, and P_x of the final path's columns follows the pairs online.  With
// B the least pair so far (the first of the least, columns {b1, b2}) and P_b1,
// P_b2, a pair {x, y} of value v < B takes P_x = B where x is neither b1 nor b2
// (B is the least of the older pairs), else P_b1 or P_b2, and becomes B; any
// other pair lowers P_b1 (P_b2) where it avoids b1 (b2).  E = B with path
// {b1, b2} where B < m1(eta) (the row's one deviation comes first in the
// reference's order), else m1 with path {p, p} and A_p = min(m2, P_p).  The
// values are minima over the reference's candidate sets, so bit for bit its.
// Only values of A are kept (step 6 reads A, not its path), so p2 is not read.
void FirstMinimaPairs(D d, const TrellisRows& t, size_t q, size_t eta, hn::Vec<D>& e,
                      hn::Vec<hn::RebindToSigned<D>>& c1, hn::Vec<hn::RebindToSigned<D>>& c2, hn::Vec<D>& a1,
                      hn::Vec<D>& a2) {
  const hn::RebindToSigned<D> di;
  const size_t N = hn::Lanes(d);
  const auto inf = hn::Set(d, std::numeric_limits<float>::infinity());
  auto best = inf, p1 = inf, p2 = inf;  // B, P_b1, P_b2
  auto b1 = hn::Set(di, -1), b2 = b1;
  const auto without = [&](hn::Vec<decltype(di)> col) {  // P_col where col is b1 or b2, else B
    return hn::IfThenElse(hn::RebindMask(d, hn::Eq(col, b1)), p1,
                          hn::IfThenElse(hn::RebindMask(d, hn::Eq(col, b2)), p2, best));
  };
  for (size_t e1 = 1; e1 < q; ++e1) {
    const size_t e2 = eta ^ e1;
    if (e1 >= e2) continue;
    const auto col1 = hn::Load(di, t.p + e1 * N);
    const auto col2 = hn::Load(di, t.p + e2 * N);
    const auto cand = hn::IfThenElse(hn::RebindMask(d, hn::Ne(col1, col2)),
                                     hn::Max(hn::Load(d, t.m1 + e1 * N), hn::Load(d, t.m1 + e2 * N)), inf);
    const auto better = hn::Lt(cand, best);
    const auto on1 = hn::RebindMask(d, hn::Or(hn::Eq(col1, b1), hn::Eq(col2, b1)));
    const auto on2 = hn::RebindMask(d, hn::Or(hn::Eq(col1, b2), hn::Eq(col2, b2)));
    const auto next1 = hn::IfThenElse(better, without(col1), hn::IfThenElse(on1, p1, hn::Min(p1, cand)));
    const auto next2 = hn::IfThenElse(better, without(col2), hn::IfThenElse(on2, p2, hn::Min(p2, cand)));
    p1 = next1;
    p2 = next2;
    b1 = hn::IfThenElse(hn::RebindMask(di, better), col1, b1);
    b2 = hn::IfThenElse(hn::RebindMask(di, better), col2, b2);
    best = hn::Min(best, cand);
  }
  const auto own = hn::Load(di, t.p + eta * N);
  const auto m1 = hn::Load(d, t.m1 + eta * N);
  const auto m2 = hn::Load(d, t.m2 + eta * N);
  const auto pair = hn::Lt(best, m1);
  const auto ipair = hn::RebindMask(di, pair);
  const auto without_p = without(own);
  e = hn::IfThenElse(pair, best, m1);
  c1 = hn::IfThenElse(ipair, b1, own);
  c2 = hn::IfThenElse(ipair, b2, own);
  a1 = hn::Min(hn::IfThenElse(hn::RebindMask(d, hn::Eq(own, c1)), m2, m1), hn::IfThenElse(pair, p1, without_p));
  a2 = hn::Min(hn::IfThenElse(hn::RebindMask(d, hn::Eq(own, c2)), m2, m1), hn::IfThenElse(pair, p2, without_p));
}

// One check row by the trellis Min-Max rule (reference_tmm.py steps 1-7, the
// equations in cpu_nb_decoder.hpp), every lane its own frame: the hard
// decisions z_i differ from lane to lane, so the moves into and out of the
// delta domain are gathers; the trellis rows eta are the same for every lane.
// kFirstMinimaPairs ("tmm1"): steps 4-5 by FirstMinimaPairs, and steps 1-3 do
// not track p2 (nothing reads it).
template <bool kLayered, bool kFirstMinimaPairs>
void TrellisRow(D d, const NbCheckRows& code, float alpha, uint32_t begin, size_t dc,
                float* HWY_RESTRICT post, NbWorkspace& ws) {
  const hn::RebindToSigned<D> di;
  const size_t N = hn::Lanes(d);
  const size_t q = static_cast<size_t>(code.q);
  const size_t vec = q * N;
  const uint32_t* cols = code.rows.col.data() + begin;
  float* r = ws.messages.get() + begin * vec;
  float* qbuf = ws.extrinsic.get();
  float* qh = ws.work.get();
  float* m1 = qh + vec;
  float* m2 = m1 + vec;
  float* extra = m2 + vec;
  float* avoid1 = extra + vec;
  float* avoid2 = avoid1 + vec;
  float* out = ws.backward.get();
  int32_t* z = ws.trellis.get();  // [dc][N]
  int32_t* p = z + dc * N;        // [q][N] each: p, p2, c1, c2
  int32_t* p2 = p + vec;
  int32_t* path1 = p2 + vec;
  int32_t* path2 = path1 + vec;
  const uint16_t* div = code.div.data() + begin * q;
  const uint16_t* mul = code.mul.data() + begin * q;
  const int shift = static_cast<int>(hwy::FloorLog2(N));
  const auto lane = hn::Iota(di, 0);
  // element (x + s) of a [q][N] message, lane by lane: index ((x ^ s) << log2 N) + lane
  const auto at = [&](int32_t x, decltype(lane) s) {
    return hn::Add(hn::ShiftLeftSame(hn::Xor(hn::Set(di, x), s), shift), lane);
  };
  const auto inf = hn::Set(d, std::numeric_limits<float>::infinity());

  RowExtrinsic(d, cols, dc, q, post, r, qbuf);
  for (size_t eta = 1; eta < q; ++eta) {
    hn::Store(inf, d, m1 + eta * N);
    hn::Store(inf, d, m2 + eta * N);
    hn::Store(hn::Zero(di), di, p + eta * N);
    if constexpr (!kFirstMinimaPairs) hn::Store(hn::Zero(di), di, p2 + eta * N);
  }
  auto beta = hn::Zero(di);
  for (size_t i = 0; i < dc; ++i) {  // steps 1-3: z_i, beta; m1, p, m2, p2 (tmm1: not p2) over the columns
    Permute(d, qbuf + i * vec, div + i * q, q, qh);
    const auto zi = ArgMin(d, qh, q);
    hn::Store(zi, di, z + i * N);
    beta = hn::Xor(beta, zi);
    const auto col = hn::Set(di, static_cast<int32_t>(i));
    for (size_t eta = 1; eta < q; ++eta) {
      const auto v = hn::GatherIndex(d, qh, at(static_cast<int32_t>(eta), zi));  // dQ_i(eta)
      const auto a1 = hn::Load(d, m1 + eta * N);
      const auto a2 = hn::Load(d, m2 + eta * N);
      const auto b1 = hn::Load(di, p + eta * N);
      const auto first = hn::Lt(v, a1);
      const auto second = hn::AndNot(first, hn::Lt(v, a2));
      const auto ifirst = hn::RebindMask(di, first);
      hn::Store(hn::IfThenElse(first, a1, hn::IfThenElse(second, v, a2)), d, m2 + eta * N);
      if constexpr (!kFirstMinimaPairs) {
        hn::Store(hn::IfThenElse(ifirst, b1, hn::IfThenElse(hn::RebindMask(di, second), col,
                                                              hn::Load(di, p2 + eta * N))),
                  di, p2 + eta * N);
      }
      hn::Store(hn::IfThenElse(first, v, a1), d, m1 + eta * N);
      hn::Store(hn::IfThenElse(ifirst, col, b1), di, p + eta * N);
    }
  }
  const TrellisRows rows{m1, p, m2, p2};
  for (size_t eta = 1; eta < q; ++eta) {  // steps 4-5: E and its path, A_c1, A_c2
    auto e = inf, a1 = inf, a2 = inf;
    auto c1 = hn::Zero(di), c2 = c1, unused1 = c1, unused2 = c1;
    if constexpr (kFirstMinimaPairs) {
      FirstMinimaPairs(d, rows, q, eta, e, c1, c2, a1, a2);
    } else {
      TwoDeviations<false>(d, rows, q, eta, c1, e, c1, c2);
      TwoDeviations<true>(d, rows, q, eta, c1, a1, unused1, unused2);
      TwoDeviations<true>(d, rows, q, eta, c2, a2, unused1, unused2);
    }
    hn::Store(e, d, extra + eta * N);
    hn::Store(a1, d, avoid1 + eta * N);
    hn::Store(a2, d, avoid2 + eta * N);
    hn::Store(c1, di, path1 + eta * N);
    hn::Store(c2, di, path2 + eta * N);
  }
  const auto scale = hn::Set(d, alpha);
  for (size_t i = 0; i < dc; ++i) {  // step 6 (dR_i), step 7: R_i(a) = alpha dR_i(h_i a + beta + z_i)
    const auto col = hn::Set(di, static_cast<int32_t>(i));
    hn::Store(hn::Zero(d), d, out);
    for (size_t eta = 1; eta < q; ++eta) {
      const auto on1 = hn::RebindMask(d, hn::Eq(hn::Load(di, path1 + eta * N), col));
      const auto on2 = hn::RebindMask(d, hn::Eq(hn::Load(di, path2 + eta * N), col));
      const auto v = hn::IfThenElse(on1, hn::Load(d, avoid1 + eta * N),
                                    hn::IfThenElse(on2, hn::Load(d, avoid2 + eta * N),
                                                   hn::Load(d, extra + eta * N)));
      hn::Store(hn::Mul(v, scale), d, out + eta * N);
    }
    const auto s = hn::Xor(beta, hn::Load(di, z + i * N));
    float* ri = r + i * vec;
    for (size_t a = 0; a < q; ++a) hn::Store(hn::GatherIndex(d, out, at(mul[i * q + a], s)), d, ri + a * N);
    if constexpr (kLayered) EdgePosterior(d, qbuf + i * vec, ri, q, post + cols[i] * vec);
  }
}

// symbols[v][f] = argmin_a post[v][a] lane by lane (smallest a on ties).
void Decide(D d, const float* HWY_RESTRICT post, size_t n, size_t q, uint8_t* HWY_RESTRICT symbols) {
  const size_t N = hn::Lanes(d);
  const hn::RebindToSigned<D> di;
  HWY_ALIGN int32_t idx[hn::MaxLanes(di)];
  for (size_t v = 0; v < n; ++v) {
    hn::Store(ArgMin(d, post + v * q * N, q), di, idx);
    for (size_t f = 0; f < N; ++f) symbols[v * N + f] = static_cast<uint8_t>(idx[f]);
  }
}

// Lane f's syndrome over GF(q) is zero.
bool Satisfied(const NbCheckRows& code, const uint8_t* symbols, size_t N, size_t f) {
  const auto& rows = code.rows;
  const size_t q = static_cast<size_t>(code.q);
  for (int row = 0; row < rows.m; ++row) {
    unsigned s = 0;
    for (uint32_t e = rows.row_ptr[row]; e < rows.row_ptr[row + 1]; ++e) {
      s ^= code.mul[e * q + symbols[rows.col[e] * N + f]];
    }
    if (s != 0) return false;
  }
  return true;
}

// llr[frames][n][q] -> post[n][q][N], with the bad-LLR rule applied on the
// way (LoadableLlrs, cpu_bad_llr-inl.h): bad_llr[f] = 1 when frame f held NaN
// or +-inf.  Padding lanes get the zero word (cost 0 for element 0, 1 for the
// others).
void LoadChannel(const float* HWY_RESTRICT llr, size_t frames, size_t n, size_t q, size_t N,
                 float* HWY_RESTRICT post, uint8_t* HWY_RESTRICT bad_llr) {
  constexpr size_t kBlock = 1024;  // LLRs per test: kBlock / q whole symbols (q <= 256)
  const size_t vec = q * N;
  const size_t block_symbols = kBlock / q;
  float clean[kBlock];
  for (size_t f = 0; f < N; ++f) {
    if (f >= frames) {
      for (size_t v = 0; v < n; ++v) {
        for (size_t a = 0; a < q; ++a) post[v * vec + a * N + f] = a == 0 ? 0.0f : 1.0f;
      }
      continue;
    }
    bad_llr[f] = 0;
    for (size_t v0 = 0; v0 < n; v0 += block_symbols) {
      const size_t v1 = std::min(n, v0 + block_symbols);
      const float* HWY_RESTRICT in = LoadableLlrs(llr + (f * n + v0) * q, (v1 - v0) * q, clean, bad_llr + f);
      for (size_t v = v0; v < v1; ++v) {
        for (size_t a = 0; a < q; ++a) post[v * vec + a * N + f] = in[(v - v0) * q + a];
      }
    }
  }
}

void DecodeChunk(const NbCheckRows& code, const NbConfig& cfg, const float* llr, size_t frames,
                 uint8_t* symbols, int32_t* iterations, uint8_t* valid, uint8_t* bad_llr,
                 float* soft, NbWorkspace& ws) {
  const D d;
  const size_t N = hn::Lanes(d);
  const auto& rows = code.rows;
  const size_t n = static_cast<size_t>(rows.n);
  const size_t q = static_cast<size_t>(code.q);
  const size_t vec = q * N;
  const size_t edges = rows.col.size();
  const bool flooding = cfg.schedule == Schedule::kFlooding;
  float* post = ws.posterior.get();
  float* channel = ws.channel.get();
  float* msg = ws.messages.get();
  uint8_t* dec = ws.symbols.data();

  LoadChannel(llr, frames, n, q, N, post, bad_llr);
  if (flooding) std::memcpy(channel, post, n * vec * sizeof(float));
  std::memset(msg, 0, edges * vec * sizeof(float));
  for (size_t f = 0; f < frames; ++f) {
    iterations[f] = cfg.max_iterations;
    valid[f] = 0;
  }

  // the trellis rules: T-MM ("tmm") or its form with step 5's pairs from first minima ("tmm1")
  const bool first_minima = cfg.rule == CheckRule::kTrellisFirstMinimaPairs;
  const auto trellis_row = flooding ? (first_minima ? &TrellisRow<false, true> : &TrellisRow<false, false>)
                                    : (first_minima ? &TrellisRow<true, true> : &TrellisRow<true, false>);
  std::vector<uint8_t> done(frames, 0);
  size_t remaining = frames;
  for (int it = 1; it <= cfg.max_iterations; ++it) {
    for (int row = 0; row < rows.m; ++row) {
      const uint32_t begin = rows.row_ptr[row];
      const size_t dc = rows.row_ptr[row + 1] - begin;
      if (dc == 0) continue;
      if (cfg.rule != CheckRule::kMinMax) {
        trellis_row(d, code, cfg.alpha, begin, dc, post, ws);
      } else if (flooding) {
        MinMaxRow<false>(d, code, begin, dc, post, ws);
      } else {
        MinMaxRow<true>(d, code, begin, dc, post, ws);
      }
    }
    if (flooding) {  // T = Lch + R_1 + R_2 + ... in increasing check-row order
      std::memcpy(post, channel, n * vec * sizeof(float));
      for (size_t e = 0; e < edges; ++e) {
        float* t = post + rows.col[e] * vec;
        const float* re = msg + e * vec;
        for (size_t a = 0; a < q; ++a) hn::Store(hn::Load(d, t + a * N) + hn::Load(d, re + a * N), d, t + a * N);
      }
    }
    if (!cfg.early_stop && it < cfg.max_iterations) continue;
    Decide(d, post, n, q, dec);
    for (size_t f = 0; f < frames; ++f) {
      if (done[f]) continue;
      const bool ok = Satisfied(code, dec, N, f);
      if (!ok && cfg.early_stop && it < cfg.max_iterations) continue;
      for (size_t v = 0; v < n; ++v) symbols[f * n + v] = dec[v * N + f];
      for (size_t i = 0; soft != nullptr && i < n * q; ++i) soft[f * n * q + i] = post[i * N + f];
      valid[f] = ok ? 1 : 0;
      if (ok && cfg.early_stop) iterations[f] = it;
      done[f] = 1;
      --remaining;
    }
    if (remaining == 0) return;
  }
}

size_t Lanes() { return hn::Lanes(D()); }

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace gpuldpc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gpuldpc {
namespace cpu {

HWY_EXPORT(DecodeChunk);
HWY_EXPORT(Lanes);

namespace {
constexpr size_t kMaxFloatLanes = 16;  // AVX-512; every target's vectors fit

hwy::AlignedFreeUniquePtr<float[]> AllocateMessages(size_t count) {
  auto p = hwy::AllocateAligned<float>(std::max<size_t>(count, 1) * kMaxFloatLanes);
  if (!p) throw std::bad_alloc();
  return p;
}

hwy::AlignedFreeUniquePtr<int32_t[]> AllocateIndices(size_t count) {
  auto p = hwy::AllocateAligned<int32_t>(std::max<size_t>(count, 1) * kMaxFloatLanes);
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

NbWorkspace::NbWorkspace(const NbCheckRows& code)
    : posterior(AllocateMessages(static_cast<size_t>(code.rows.n) * code.q)),
      channel(AllocateMessages(static_cast<size_t>(code.rows.n) * code.q)),
      messages(AllocateMessages(code.rows.col.size() * code.q)),
      extrinsic(AllocateMessages(static_cast<size_t>(code.rows.max_row_weight) * code.q)),
      backward(AllocateMessages(static_cast<size_t>(code.rows.max_row_weight) * code.q)),
      work(AllocateMessages(6 * static_cast<size_t>(code.q))),
      trellis(AllocateIndices(static_cast<size_t>(code.rows.max_row_weight) + 4 * static_cast<size_t>(code.q))),
      symbols(static_cast<size_t>(code.rows.n) * kMaxFloatLanes) {}

size_t NbLanes() { return HWY_DYNAMIC_DISPATCH(Lanes)(); }

void DecodeNbChunk(const NbCheckRows& code, const NbConfig& config, const float* llr,
                   size_t frames, uint8_t* symbols, int32_t* iterations, uint8_t* valid,
                   uint8_t* bad_llr, float* soft, NbWorkspace& ws) {
  HWY_DYNAMIC_DISPATCH(DecodeChunk)(code, config, llr, frames, symbols, iterations, valid, bad_llr, soft, ws);
}

}  // namespace cpu
}  // namespace gpuldpc
#endif  // HWY_ONCE
