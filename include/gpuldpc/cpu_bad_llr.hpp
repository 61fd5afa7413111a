// The bad-LLR rule as the CPU decoders apply it while they load the channel
// LLRs into their SIMD lanes (python/gpuldpc/bad_llr.py, the rule every
// backend follows):
//   NaN  -> +0 (an erasure),
//   +inf -> +kLlrSaturation, -inf -> -kLlrSaturation,
// and the frame is flagged; finite |x| > kLlrSaturation -> +-kLlrSaturation
// (not flagged).  Fixed-point loads then scale and clip the
// saturated value like any large LLR.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "hwy/base.h"

namespace gpuldpc {
namespace cpu {

// |LLR| an infinity becomes: 2^64, exactly gpuldpc.bad_llr.LLR_SATURATION and
// the CUDA kernels' kLlrSaturation (exported as gpuldpc._core.llr_saturation).
inline constexpr float kLlrSaturation = 18446744073709551616.0f;

// Exponent field of 2^64 (64 + 127 = 191): values whose field is at least this
// (|x| >= 2^64, +-inf, NaN) take the rule.
inline constexpr uint32_t kBeyondExponent = 191u << 23;

// Applies the rule to x in place; true when x was NaN or +-inf (exponent bits
// all ones).  A finite |x| beyond kLlrSaturation is clamped to it (not
// flagged: finite), so no decoder's sums overflow.  The usual case costs a
// mask and a compare with a branch that is never taken on clean input.
inline bool ApplyBadLlrRule(float& x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if (HWY_LIKELY((bits & 0x7f800000u) < kBeyondExponent)) return false;
  const bool nonfinite = (bits & 0x7f800000u) == 0x7f800000u;
  x = nonfinite && (bits & 0x007fffffu) != 0 ? 0.0f : std::copysign(kLlrSaturation, x);
  return nonfinite;
}

}  // namespace cpu
}  // namespace gpuldpc
