// GF(q) Min-Max decoder with inter-frame SIMD (one frame per float32 lane):
// forward-backward check update (paper 003, Algorithm 2) with the modified
// Min-Max merger of paper 000 §2.3; equations in
// include/gpuldpc/cpu_nb_decoder.hpp, contract in
// python/gpuldpc/decoders/reference_nb.py.
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

  for (size_t i = 0; i < dc; ++i) {  // Q' = L - R_old, Q = Q' - min_a Q'
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
  const auto emit = [&](size_t i, const float* m) {  // R_i(a) = M_i(h_i a)
    float* ri = r + i * vec;
    Permute(d, m, mul + i * q, q, ri);
    if constexpr (kLayered) {
      float* l = post + cols[i] * vec;
      const float* qi = qbuf + i * vec;
      for (size_t a = 0; a < q; ++a) {
        hn::Store(hn::Load(d, qi + a * N) + hn::Load(d, ri + a * N), d, l + a * N);
      }
    }
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

// symbols[v][f] = argmin_a post[v][a] lane by lane (smallest a on ties).
void Decide(D d, const float* HWY_RESTRICT post, size_t n, size_t q, uint8_t* HWY_RESTRICT symbols) {
  const size_t N = hn::Lanes(d);
  const hn::RebindToSigned<D> di;
  HWY_ALIGN int32_t idx[hn::MaxLanes(di)];
  for (size_t v = 0; v < n; ++v) {
    const float* l = post + v * q * N;
    auto best = hn::Load(d, l);
    auto arg = hn::Zero(di);
    for (size_t a = 1; a < q; ++a) {
      const auto x = hn::Load(d, l + a * N);
      const auto less = hn::Lt(x, best);
      best = hn::IfThenElse(less, x, best);
      arg = hn::IfThenElse(hn::RebindMask(di, less), hn::Set(di, static_cast<int32_t>(a)), arg);
    }
    hn::Store(arg, di, idx);
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

  std::vector<uint8_t> done(frames, 0);
  size_t remaining = frames;
  for (int it = 1; it <= cfg.max_iterations; ++it) {
    for (int row = 0; row < rows.m; ++row) {
      const uint32_t begin = rows.row_ptr[row];
      const size_t dc = rows.row_ptr[row + 1] - begin;
      if (dc == 0) continue;
      if (flooding) {
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
}  // namespace

NbWorkspace::NbWorkspace(const NbCheckRows& code)
    : posterior(AllocateMessages(static_cast<size_t>(code.rows.n) * code.q)),
      channel(AllocateMessages(static_cast<size_t>(code.rows.n) * code.q)),
      messages(AllocateMessages(code.rows.col.size() * code.q)),
      extrinsic(AllocateMessages(static_cast<size_t>(code.rows.max_row_weight) * code.q)),
      backward(AllocateMessages(static_cast<size_t>(code.rows.max_row_weight) * code.q)),
      work(AllocateMessages(4 * static_cast<size_t>(code.q))),
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
