// Min-sum check-node arithmetic shared by the CPU binary decoders, once per
// Highway target: include after "hwy/highway.h" in a file compiled through
// foreach_target.h (lib/cpu_binary_decoder.cpp: frames in the SIMD lanes;
// lib/cpu_intra_decoder.cpp: the rows of a QC layer in the lanes).  Equations and
// the fixed-point rules: include/gpuldpc/cpu_binary_decoder.hpp; two-min
// check-node update: paper 004.

// Include guard (still compiled once per target), Highway's pattern.
#if defined(GPULDPC_CPU_MIN_SUM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GPULDPC_CPU_MIN_SUM_INL_H_
#undef GPULDPC_CPU_MIN_SUM_INL_H_
#else
#define GPULDPC_CPU_MIN_SUM_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "gpuldpc/cpu_binary_decoder.hpp"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace gpuldpc {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Largest message magnitude: +-(2^(b-1) - 1) for integers (symmetric, so
// Abs and Neg are exact), "infinity" for float32.
template <typename T>
constexpr T MaxMagnitude() {
  if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::max();
  }
}

// A channel LLR x (after the bad-LLR rule) as a posterior: float32 x * sign (+0.0
// for -0.0, so the sign bit means "< 0"); fixed point round(x * scale * sign)
// saturated to +-(2^(b-1) - 1).
template <typename T>
HWY_INLINE T ChannelMessage(float x, float scale, float sign) {
  if constexpr (std::is_floating_point_v<T>) {
    return x * sign + 0.0f;
  } else {
    constexpr float kMax = static_cast<float>(MaxMagnitude<T>());
    return static_cast<T>(std::nearbyint(std::clamp(x * scale * sign, -kMax, kMax)));
  }
}

// A posterior as soft output: in the input's sign, de-scaled to float32 in fixed point.
template <typename T>
HWY_INLINE float SoftOutput(T v, const BinaryConfig& cfg) {
  if constexpr (std::is_floating_point_v<T>) {
    return v * cfg.llr_sign;
  } else {
    return static_cast<float>(v) * cfg.llr_sign / cfg.llr_scale;
  }
}

// Saturating a - b and a + b (plain for float32).
template <class D, class V>
HWY_INLINE V SubSat(D d, V a, V b) {
  if constexpr (std::is_floating_point_v<hn::TFromD<D>>) {
    return a - b;
  } else {
    return hn::Max(hn::SaturatedSub(a, b), hn::Set(d, -MaxMagnitude<hn::TFromD<D>>()));
  }
}

template <class D, class V>
HWY_INLINE V AddSat(D d, V a, V b) {
  if constexpr (std::is_floating_point_v<hn::TFromD<D>>) {
    return a + b;
  } else {
    return hn::Max(hn::SaturatedAdd(a, b), hn::Set(d, -MaxMagnitude<hn::TFromD<D>>()));
  }
}

// round(m * A / 2^(b-1)) for integer magnitudes 0 <= m <= 2^(b-1) - 1: each
// b-bit lane is widened in place (even and odd lanes of the 2b-bit view), so
// the product cannot overflow.
template <class D, class V>
HWY_INLINE V ScaleFixed(D d, V m, uint32_t a) {
  using T = hn::TFromD<D>;
  using TW = hwy::MakeWide<hwy::MakeUnsigned<T>>;
  constexpr int kBits = 8 * sizeof(T);
  constexpr int kFrac = kBits - 1;
#if HWY_TARGET == HWY_SCALAR
  const TW x = static_cast<TW>(hn::GetLane(m));
  return hn::Set(d, static_cast<T>((x * a + (TW{1} << (kFrac - 1))) >> kFrac));
#else
  const hn::Repartition<TW, D> dw;
  const auto w = hn::BitCast(dw, m);
  const auto low_mask = hn::Set(dw, static_cast<TW>((TW{1} << kBits) - 1));
  const auto factor = hn::Set(dw, static_cast<TW>(a));
  const auto half = hn::Set(dw, static_cast<TW>(TW{1} << (kFrac - 1)));
  const auto lo = hn::ShiftRight<kFrac>(hn::And(w, low_mask) * factor + half);
  const auto hi = hn::ShiftRight<kFrac>(hn::ShiftRight<kBits>(w) * factor + half);
  return hn::BitCast(d, hn::Or(lo, hn::ShiftLeft<kBits>(hi)));
#endif
}

// mag (>= 0, sign bit clear) with the sign bit of `sign`: -mag where sign's is set.  float32:
// the bit copied (CopySignToAbs, one AVX-512 ternary-logic op), the same bits as -mag (Neg
// flips the sign bit); fixed point: a select of -mag (exact: the range is symmetric).
template <class D, class V>
HWY_INLINE V SignedMagnitude(D /* tag */, V mag, V sign) {
  if constexpr (std::is_floating_point_v<hn::TFromD<D>>) {
    return hn::CopySignToAbs(mag, sign);
  } else {
    return hn::IfNegativeThenElse(sign, hn::Neg(mag), mag);
  }
}

// The check-node magnitude rule applied to a row's min1 / min2.
template <class D>
struct MagnitudeRule {
  using T = hn::TFromD<D>;
  using V = hn::Vec<D>;
  BinaryRule rule;
  V alpha;           // float32 nms
  V beta;            // oms (float32 or quantized)
  uint32_t a_fixed;  // fixed-point nms: round(alpha * 2^(b-1))

  MagnitudeRule(D d, const BinaryConfig& c)
      : rule(c.rule), alpha(hn::Set(d, static_cast<T>(0))), beta(hn::Set(d, static_cast<T>(0))),
        a_fixed(0) {
    if constexpr (std::is_floating_point_v<T>) {
      alpha = hn::Set(d, c.alpha);
      beta = hn::Set(d, c.beta);
    } else {
      constexpr double kOne = static_cast<double>(MaxMagnitude<T>()) + 1.0;
      a_fixed = static_cast<uint32_t>(std::lround(static_cast<double>(c.alpha) * kOne));
      const double b = std::min(std::nearbyint(static_cast<double>(c.beta) * c.llr_scale),
                                static_cast<double>(MaxMagnitude<T>()));
      beta = hn::Set(d, static_cast<T>(b));
    }
  }

  HWY_INLINE V Apply(D d, V m) const {
    if (rule == BinaryRule::kOms) {
      if constexpr (std::is_floating_point_v<T>) {
        return hn::Max(m - beta, hn::Zero(d));
      } else {
        return hn::Max(hn::SaturatedSub(m, beta), hn::Zero(d));
      }
    }
    if constexpr (std::is_floating_point_v<T>) {
      return m * alpha;
    } else {
      return ScaleFixed(d, m, a_fixed);
    }
  }
};

// A row's Q vectors (one per edge): in registers when the row weight kDc is a
// compile-time constant (the loops then unroll), else in q_buf ([dc][N]).
template <size_t kDc, class D>
struct RowExtrinsics {
  using T = hn::TFromD<D>;
  hn::Vec<D> reg[kDc != 0 ? kDc : 1];
  T* HWY_RESTRICT buf;

  HWY_INLINE void Put(D d, size_t e, hn::Vec<D> q) {
    if constexpr (kDc != 0) {
      reg[e] = q;
    } else {
      hn::Store(q, d, buf + e * hn::Lanes(d));
    }
  }
  HWY_INLINE hn::Vec<D> Get(D d, size_t e) const {
    if constexpr (kDc != 0) {
      return reg[e];
    } else {
      return hn::Load(d, buf + e * hn::Lanes(d));
    }
  }
};

// The two smallest |Q| of a row and the xor of the signs of its Q (sign bit of parity).
template <class D>
struct TwoMins {
  hn::Vec<D> min1, min2, parity;

  explicit TwoMins(D d) : min1(hn::Set(d, MaxMagnitude<hn::TFromD<D>>())), min2(min1), parity(hn::Zero(d)) {}
  HWY_INLINE void Add(hn::Vec<D> q) {
    const auto a = hn::Abs(q);
    min2 = hn::Min(min2, hn::Max(min1, a));
    min1 = hn::Min(min1, a);
    parity = hn::Xor(parity, q);
  }
};

// For lambdas passed to WithRowWeight: inlined, so that the row's accessor and
// pointers stay in registers (a call would make them memory that every mask store
// may alias).
#if defined(__GNUC__) || defined(__clang__)
#define HWY_INLINE_LAMBDA __attribute__((always_inline))
#else
#define HWY_INLINE_LAMBDA
#endif

// f(body) with std::integral_constant<size_t, dc> when 1 <= dc <= kMax, else with
// the constant 0 (row weight known only at run time).
template <size_t kMax, class F>
HWY_INLINE void WithRowWeight(size_t dc, const F& body) {
  if constexpr (kMax == 0) {
    body(std::integral_constant<size_t, 0>());
  } else if (dc == kMax) {
    body(std::integral_constant<size_t, kMax>());
  } else {
    WithRowWeight<kMax - 1>(dc, body);
  }
}

// One check row of min-sum, for `N` rows at once (one per lane).  Q = post - R_old
// (kept in RowExtrinsics), the two smallest |Q| and the sign parity; then R_new per
// edge (min2 for the edge holding min1: when min1 occurs twice min2 == min1, so the
// rule is exact), and, for the layered schedule, post = Q + R_new.  In fixed point
// the layered schedule keeps R = post - Q, the part of R_new that survived the
// saturation of post: storing R_new itself would later subtract more than was
// added and flip the signs of saturated posteriors.
//
// `post` is the posterior accessor: post.Load(d, e) gives the vector of edge e's
// posteriors (one per lane) and post.Store(d, e, v) writes it back; the inter-frame
// decoder's lanes are frames (FramePosteriors, lib/cpu_binary_decoder.cpp), the
// intra-frame decoder's are the rows of one QC layer (lib/cpu_intra_decoder.cpp).
// R_old of edge e is at r + e * r_stride.  kDc != 0: the row weight as a constant
// (dc == kDc; WithRowWeight), so Q stays in registers and q_buf is not used.
template <bool kLayered, size_t kDc = 0, class D, class Posteriors, typename T = hn::TFromD<D>>
HWY_INLINE void MinSumRow(D d, size_t dc_runtime, const Posteriors& post, T* HWY_RESTRICT r, size_t r_stride,
                          T* HWY_RESTRICT q_buf, const MagnitudeRule<D>& rule) {
  const size_t dc = kDc != 0 ? kDc : dc_runtime;
  RowExtrinsics<kDc, D> qs{{}, q_buf};
  TwoMins<D> m(d);
  for (size_t e = 0; e < dc; ++e) {
    const auto q = SubSat(d, post.Load(d, e), hn::Load(d, r + e * r_stride));
    qs.Put(d, e, q);
    m.Add(q);
  }
  const auto s1 = rule.Apply(d, m.min1);
  const auto s2 = rule.Apply(d, m.min2);
  for (size_t e = 0; e < dc; ++e) {
    const auto q = qs.Get(d, e);
    const auto mag = hn::IfThenElse(hn::Eq(hn::Abs(q), m.min1), s2, s1);
    const auto rn = SignedMagnitude(d, mag, hn::Xor(m.parity, q));
    if constexpr (kLayered && !std::is_floating_point_v<T>) {
      // Store the increment that survived saturation, L_new - Q (|.| <= |R_new|),
      // so that the next Q = L - R of this row undoes exactly what was added.
      const auto l = AddSat(d, q, rn);
      post.Store(d, e, l);
      hn::Store(hn::Sub(l, q), d, r + e * r_stride);
    } else {
      hn::Store(rn, d, r + e * r_stride);
      if constexpr (kLayered) post.Store(d, e, q + rn);
    }
  }
}
}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace gpuldpc
HWY_AFTER_NAMESPACE();

#endif  // GPULDPC_CPU_MIN_SUM_INL_H_
