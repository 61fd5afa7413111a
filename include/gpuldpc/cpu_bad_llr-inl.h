// The bad-LLR rule (cpu_bad_llr.hpp) in the CPU decoders' channel loads, once
// per Highway target: include after "hwy/highway.h" in a file compiled through
// foreach_target.h (lib/cpu_binary_decoder.cpp, lib/cpu_nb_decoder.cpp).
//
// A load converts a frame's LLRs block by block (a few KiB, in L1 while it is
// converted); LoadableLlrs tests the block with vector compares first, so clean
// input costs a few vector operations per block and the conversion loop stays
// as it was; a block holding NaN or +-inf is copied with the rule applied.

// Include guard (still compiled once per target), Highway's pattern.
#if defined(GPULDPC_CPU_BAD_LLR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GPULDPC_CPU_BAD_LLR_INL_H_
#undef GPULDPC_CPU_BAD_LLR_INL_H_
#else
#define GPULDPC_CPU_BAD_LLR_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "gpuldpc/cpu_bad_llr.hpp"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace gpuldpc {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The LLRs x[0..count) ready to convert: x itself when all are finite; else
// scratch[0..count) (count <= its size) holding them with the rule applied,
// and *bad = 1.
HWY_INLINE const float* LoadableLlrs(const float* HWY_RESTRICT x, size_t count,
                                     float* HWY_RESTRICT scratch, uint8_t* HWY_RESTRICT bad) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const size_t lanes = hn::Lanes(df);
  const auto exponent = hn::Set(du, 0x7f800000u);  // all ones: NaN or +-inf
  auto special = hn::Zero(du);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    const auto e = hn::And(hn::BitCast(du, hn::LoadU(df, x + i)), exponent);
    special = hn::Or(special, hn::VecFromMask(du, hn::Eq(e, exponent)));
  }
  bool found = !hn::AllFalse(du, hn::MaskFromVec(special));
  for (; i < count; ++i) {
    float y = x[i];
    found |= ApplyBadLlrRule(y);
  }
  if (HWY_LIKELY(!found)) return x;
  for (size_t j = 0; j < count; ++j) {
    scratch[j] = x[j];
    ApplyBadLlrRule(scratch[j]);
  }
  *bad = 1;
  return scratch;
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace gpuldpc
HWY_AFTER_NAMESPACE();

#endif  // include guard
