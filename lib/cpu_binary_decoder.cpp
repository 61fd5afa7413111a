// Binary LDPC decoders with inter-frame SIMD (one frame per vector lane),
// compiled for SSE4, AVX2 and AVX-512 and dispatched at run time by Google
// Highway.  Equations: include/gpuldpc/cpu_binary_decoder.hpp; the float32
// min-sum contract: python/gpuldpc/decoders/reference_binary.py.  Layered
// min-sum: paper 004 (two-min check-node update), row by row in layer order.
#include "gpuldpc/cpu_binary_decoder.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/cpu_binary_decoder.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/aligned_allocator.h"
#include "hwy/contrib/math/math-inl.h"
#include "gpuldpc/cpu_bad_llr-inl.h"
#include "gpuldpc/cpu_min_sum-inl.h"

HWY_BEFORE_NAMESPACE();
namespace gpuldpc {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Posterior accessor of MinSumRow (cpu_min_sum-inl.h) for frames in the lanes:
// edge e's vector is variable cols[e]'s, one frame per lane.
template <typename T>
struct FramePosteriors {
  T* post;
  const uint32_t* cols;
  template <class D>
  HWY_INLINE hn::Vec<D> Load(D d, size_t e) const {
    return hn::Load(d, post + cols[e] * hn::Lanes(d));
  }
  template <class D>
  HWY_INLINE void Store(D d, size_t e, hn::Vec<D> v) const {
    hn::Store(v, d, post + cols[e] * hn::Lanes(d));
  }
};

// phi(x) = -ln tanh(x/2) = log1p(2 e^-x / (1 - e^-x)), for x clamped to
// [2 e^-30, inf) so that phi <= 30 (the reference's SPA_MAX_LLR).
template <class D, class V>
HWY_INLINE V Phi(D d, V x) {
  const auto xc = hn::Max(x, hn::Set(d, 1.8715e-13f));
  const auto neg = hn::Neg(xc);
  const auto t = hn::Exp(d, neg);
  const auto one_minus_t = hn::Neg(hn::Expm1(d, neg));
  return hn::Min(hn::Log1p(d, hn::Set(d, 2.0f) * t / one_minus_t), hn::Set(d, 30.0f));
}

// One check row of sum-product (float32): R = sign * phi(sum_excl phi(|Q|)).  The sum over
// the other edges is a prefix plus a suffix sum (all terms >= 0), not the row's total less the
// edge's own term: where one edge's phi dominates the total, the difference cancels (a total
// of 0.5 + 1e-9 is 0.5 in float32, and R came out as the clamp 30 instead of 21.4).
// phi_buf: 2 dc vectors (the edges' phi, then each edge's suffix sum).
template <bool kLayered, class D>
HWY_INLINE void SpaRow(D d, const uint32_t* HWY_RESTRICT cols, size_t dc, float* HWY_RESTRICT post,
                       float* HWY_RESTRICT r, float* HWY_RESTRICT q_buf, float* HWY_RESTRICT phi_buf) {
  const size_t N = hn::Lanes(d);
  float* HWY_RESTRICT suffix = phi_buf + dc * N;
  auto parity = hn::Zero(d);
  for (size_t e = 0; e < dc; ++e) {
    const auto q = hn::Load(d, post + cols[e] * N) - hn::Load(d, r + e * N);
    hn::Store(q, d, q_buf + e * N);
    hn::Store(Phi(d, hn::Abs(q)), d, phi_buf + e * N);
    parity = hn::Xor(parity, q);
  }
  auto after = hn::Zero(d);
  for (size_t e = dc; e-- > 0;) {
    hn::Store(after, d, suffix + e * N);
    after = after + hn::Load(d, phi_buf + e * N);
  }
  auto before = hn::Zero(d);
  for (size_t e = 0; e < dc; ++e) {
    const auto q = hn::Load(d, q_buf + e * N);
    const auto mag = Phi(d, before + hn::Load(d, suffix + e * N));
    before = before + hn::Load(d, phi_buf + e * N);
    const auto rn = hn::IfNegativeThenElse(hn::Xor(parity, q), hn::Neg(mag), mag);
    hn::Store(rn, d, r + e * N);
    if constexpr (kLayered) hn::Store(q + rn, d, post + cols[e] * N);
  }
}

// Bit f set: lane f's hard decisions (sign of post) violate some check.
template <class D, typename T = hn::TFromD<D>>
uint64_t UnsatisfiedLanes(D d, const CheckRows& rows, const T* HWY_RESTRICT post) {
  const size_t N = hn::Lanes(d);
  const hn::RebindToSigned<D> di;
  auto any = hn::Zero(di);
  for (int row = 0; row < rows.m; ++row) {
    auto x = hn::Zero(di);
    for (uint32_t e = rows.row_ptr[row]; e < rows.row_ptr[row + 1]; ++e) {
      x = hn::Xor(x, hn::BitCast(di, hn::Load(d, post + rows.col[e] * N)));
    }
    any = hn::Or(any, x);
  }
  uint8_t packed[8] = {0};
  hn::StoreMaskBits(di, hn::Lt(any, hn::Zero(di)), packed);
  uint64_t out = 0;
  std::memcpy(&out, packed, sizeof(out));
  return out;
}

// llr[frames][n] (float32) -> post[n][N] in the message type, with the
// bad-LLR rule applied on the way (LoadableLlrs, cpu_bad_llr-inl.h):
// bad_llr[f] = 1 when frame f held NaN or +-inf.  Padding lanes get +1 (the
// all-zero codeword, satisfied after the first iteration).
// `sign` (+1 or -1, BinaryConfig::llr_sign) multiplies every LLR after the rule (exact).
template <class D, typename T = hn::TFromD<D>>
void LoadChannel(D d, const float* HWY_RESTRICT llr, size_t frames, size_t n, float scale, float sign,
                 T* HWY_RESTRICT post, uint8_t* HWY_RESTRICT bad_llr) {
  const size_t N = hn::Lanes(d);
  constexpr size_t kBlock = 64;  // variables per pass: N lines of the output stay in L1
  float clean[kBlock];
  std::fill(bad_llr, bad_llr + frames, uint8_t{0});
  for (size_t v0 = 0; v0 < n; v0 += kBlock) {
    const size_t v1 = std::min(n, v0 + kBlock);
    for (size_t f = 0; f < N; ++f) {
      T* out = post + f;
      if (f >= frames) {
        for (size_t v = v0; v < v1; ++v) out[v * N] = static_cast<T>(1);
        continue;
      }
      const float* HWY_RESTRICT in = LoadableLlrs(llr + f * n + v0, v1 - v0, clean, bad_llr + f);
      for (size_t v = v0; v < v1; ++v) out[v * N] = ChannelMessage<T>(in[v - v0], scale, sign);
    }
  }
}

// Hard decisions of lane f: bit 1 iff post < 0.
template <class D, typename T = hn::TFromD<D>>
void StoreLaneBits(D d, const T* HWY_RESTRICT post, size_t n, size_t f, uint8_t* HWY_RESTRICT bits) {
  const size_t N = hn::Lanes(d);
  for (size_t v = 0; v < n; ++v) bits[v] = post[v * N + f] < 0 ? 1 : 0;
}

// Soft output of lane f (soft[v], v < n): the posterior in the input's sign, de-scaled to
// float32 in fixed point (cpu_binary_decoder.hpp).
template <class D, typename T = hn::TFromD<D>>
void StoreLaneSoft(D d, const T* HWY_RESTRICT post, size_t n, size_t f, const BinaryConfig& cfg,
                   float* HWY_RESTRICT soft) {
  const size_t N = hn::Lanes(d);
  for (size_t v = 0; v < n; ++v) soft[v] = SoftOutput(post[v * N + f], cfg);
}

template <class D, typename T = hn::TFromD<D>>
void StoreAllBits(D d, const T* HWY_RESTRICT post, size_t n, size_t frames, uint64_t skip,
                  uint8_t* HWY_RESTRICT bits) {
  const size_t N = hn::Lanes(d);
  constexpr size_t kBlock = 64;
  uint64_t masks[kBlock];
  for (size_t v0 = 0; v0 < n; v0 += kBlock) {
    const size_t v1 = std::min(n, v0 + kBlock);
    for (size_t v = v0; v < v1; ++v) {
      uint8_t packed[8] = {0};
      hn::StoreMaskBits(d, hn::Lt(hn::Load(d, post + v * N), hn::Zero(d)), packed);
      std::memcpy(&masks[v - v0], packed, sizeof(uint64_t));
    }
    for (size_t f = 0; f < frames; ++f) {
      if ((skip >> f) & 1) continue;
      uint8_t* out = bits + f * n;
      for (size_t v = v0; v < v1; ++v) out[v] = static_cast<uint8_t>((masks[v - v0] >> f) & 1);
    }
  }
}

template <typename T>
void DecodeChunkT(const CheckRows& rows, const BinaryConfig& cfg, const float* llr, size_t frames,
                  uint8_t* bits, int32_t* iterations, uint8_t* valid, uint8_t* bad_llr, float* soft,
                  BinaryWorkspace& ws) {
  using D = hn::ScalableTag<T>;
  const D d;
  const size_t N = hn::Lanes(d);
  const size_t n = static_cast<size_t>(rows.n);
  const size_t edges = rows.col.size();
  T* post = reinterpret_cast<T*>(ws.posterior.get());
  T* channel = reinterpret_cast<T*>(ws.channel.get());
  T* msg = reinterpret_cast<T*>(ws.messages.get());
  T* q_buf = reinterpret_cast<T*>(ws.extrinsic.get());
  const bool flooding = cfg.schedule == Schedule::kFlooding;

  LoadChannel(d, llr, frames, n, cfg.llr_scale, cfg.llr_sign, post, bad_llr);
  if (flooding) std::memcpy(channel, post, n * N * sizeof(T));
  std::memset(msg, 0, edges * N * sizeof(T));
  const MagnitudeRule<D> rule(d, cfg);

  const uint64_t all = frames == 64 ? ~uint64_t{0} : ((uint64_t{1} << frames) - 1);
  uint64_t done = 0;
  for (size_t f = 0; f < frames; ++f) iterations[f] = cfg.max_iterations;

  for (int it = 1; it <= cfg.max_iterations; ++it) {
    for (int row = 0; row < rows.m; ++row) {
      const uint32_t begin = rows.row_ptr[row];
      const size_t dc = rows.row_ptr[row + 1] - begin;
      const uint32_t* cols = rows.col.data() + begin;
      T* r = msg + begin * N;
      if constexpr (std::is_floating_point_v<T>) {
        if (cfg.rule == BinaryRule::kSpa) {
          float* phi_buf = reinterpret_cast<float*>(ws.scratch.get());
          if (flooding) {
            SpaRow<false>(d, cols, dc, post, r, q_buf, phi_buf);
          } else {
            SpaRow<true>(d, cols, dc, post, r, q_buf, phi_buf);
          }
          continue;
        }
      }
      if (flooding) {
        MinSumRow<false>(d, dc, FramePosteriors<T>{post, cols}, r, N, q_buf, rule);
      } else {
        MinSumRow<true>(d, dc, FramePosteriors<T>{post, cols}, r, N, q_buf, rule);
      }
    }
    if (flooding) {  // T = Lch + R_1 + R_2 + ... in increasing check-row order
      std::memcpy(post, channel, n * N * sizeof(T));
      for (size_t e = 0; e < edges; ++e) {
        T* p = post + rows.col[e] * N;
        hn::Store(AddSat(d, hn::Load(d, p), hn::Load(d, msg + e * N)), d, p);
      }
    }
    if (!cfg.early_stop) continue;
    const uint64_t ok = ~UnsatisfiedLanes(d, rows, post) & all;
    const uint64_t fresh = ok & ~done;
    for (size_t f = 0; f < frames; ++f) {
      if (!((fresh >> f) & 1)) continue;
      StoreLaneBits(d, post, n, f, bits + f * n);
      if (soft != nullptr) StoreLaneSoft(d, post, n, f, cfg, soft + f * n);
      iterations[f] = it;
      valid[f] = 1;
    }
    done |= fresh;
    if (done == all) return;
  }
  StoreAllBits(d, post, n, frames, done, bits);
  const uint64_t bad = UnsatisfiedLanes(d, rows, post);
  for (size_t f = 0; f < frames; ++f) {
    if ((done >> f) & 1) continue;
    valid[f] = ((bad >> f) & 1) ? 0 : 1;
    if (soft != nullptr) StoreLaneSoft(d, post, n, f, cfg, soft + f * n);
  }
}

void DecodeChunk(const CheckRows& rows, const BinaryConfig& cfg, const float* llr, size_t frames,
                 uint8_t* bits, int32_t* iterations, uint8_t* valid, uint8_t* bad_llr, float* soft,
                 BinaryWorkspace& ws) {
  switch (cfg.precision) {
    case Precision::kFloat32:
      return DecodeChunkT<float>(rows, cfg, llr, frames, bits, iterations, valid, bad_llr, soft, ws);
    case Precision::kInt16:
      return DecodeChunkT<int16_t>(rows, cfg, llr, frames, bits, iterations, valid, bad_llr, soft, ws);
    case Precision::kInt8:
      return DecodeChunkT<int8_t>(rows, cfg, llr, frames, bits, iterations, valid, bad_llr, soft, ws);
  }
}

size_t Lanes(Precision precision) {
  switch (precision) {
    case Precision::kFloat32:
      return hn::Lanes(hn::ScalableTag<float>());
    case Precision::kInt16:
      return hn::Lanes(hn::ScalableTag<int16_t>());
    case Precision::kInt8:
      return hn::Lanes(hn::ScalableTag<int8_t>());
  }
  return 0;
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace gpuldpc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gpuldpc {
namespace cpu {

HWY_EXPORT(DecodeChunk);
HWY_EXPORT(Lanes);
HWY_EXPORT(TargetName);

namespace {
constexpr size_t kMaxVectorBytes = 64;  // AVX-512; every target's vectors fit

hwy::AlignedFreeUniquePtr<uint8_t[]> AllocateVectors(size_t count) {
  const size_t bytes = std::max<size_t>(count, 1) * kMaxVectorBytes;
  auto p = hwy::AllocateAligned<uint8_t>(bytes);
  if (!p) throw std::bad_alloc();
  std::memset(p.get(), 0, bytes);
  return p;
}
}  // namespace

BinaryWorkspace::BinaryWorkspace(const CheckRows& rows)
    : posterior(AllocateVectors(rows.n)),
      channel(AllocateVectors(rows.n)),
      messages(AllocateVectors(rows.col.size())),
      extrinsic(AllocateVectors(rows.max_row_weight)),
      scratch(AllocateVectors(2 * rows.max_row_weight)) {}   // SpaRow: phi and suffix sums

size_t BinaryLanes(Precision precision) { return HWY_DYNAMIC_DISPATCH(Lanes)(precision); }

const char* SimdTargetName() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

void DecodeBinaryChunk(const CheckRows& rows, const BinaryConfig& config, const float* llr,
                       size_t frames, uint8_t* bits, int32_t* iterations, uint8_t* valid,
                       uint8_t* bad_llr, float* soft, BinaryWorkspace& ws) {
  HWY_DYNAMIC_DISPATCH(DecodeChunk)(rows, config, llr, frames, bits, iterations, valid, bad_llr, soft, ws);
}

}  // namespace cpu
}  // namespace gpuldpc
#endif  // HWY_ONCE
