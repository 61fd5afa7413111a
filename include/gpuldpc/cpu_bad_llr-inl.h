// The bad-LLR rule (cpu_bad_llr.hpp) in the CPU decoders' channel loads, once
// per Highway target: include after "hwy/highway.h" in a file compiled through
// foreach_target.h (lib/cpu_binary_decoder.cpp, lib/cpu_nb_decoder.cpp).
//
// A load converts a frame's LLRs block by block (a few KiB, in L1 while it is
// converted); LoadableLlrs tests the block with vector compares first, so clean
// input costs a few vector operations per block and the conversion loop stays
// as it was; a block holding NaN, +-inf or a value beyond +-2^64 is copied with
// the rule applied.

// Include guard (still compiled once per target), Highway's pattern.
#if defined(GPULDPC_CPU_BAD_LLR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GPULDPC_CPU_BAD_LLR_INL_H_
#undef GPULDPC_CPU_BAD_LLR_INL_H_
#else
#define GPULDPC_CPU_BAD_LLR_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gpuldpc/cpu_bad_llr.hpp"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace gpuldpc {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The LLRs x[0..count) ready to convert: x itself when every |x| < 2^64; else
// scratch[0..count) (count <= its size) holding them with the rule applied,
// and *bad = 1 when one of them was NaN or +-inf.
HWY_INLINE const float* LoadableLlrs(const float* HWY_RESTRICT x, size_t count,
                                     float* HWY_RESTRICT scratch, uint8_t* HWY_RESTRICT bad) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const size_t lanes = hn::Lanes(df);
  const auto exponent = hn::Set(di, 0x7f800000);
  const auto below = hn::Set(di, static_cast<int32_t>(kBeyondExponent) - 1);
  auto special = hn::Zero(di);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    const auto e = hn::And(hn::BitCast(di, hn::LoadU(df, x + i)), exponent);  // >= 0
    special = hn::Or(special, hn::VecFromMask(di, hn::Gt(e, below)));
  }
  bool found = !hn::AllFalse(di, hn::MaskFromVec(special));
  for (; i < count && !found; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, sizeof bits);
    found = (bits & 0x7f800000u) >= kBeyondExponent;
  }
  if (HWY_LIKELY(!found)) return x;
  bool flagged = false;
  for (size_t j = 0; j < count; ++j) {
    scratch[j] = x[j];
    flagged |= ApplyBadLlrRule(scratch[j]);
  }
  if (flagged) *bad = 1;
  return scratch;
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace gpuldpc
HWY_AFTER_NAMESPACE();

#endif  // include guard
