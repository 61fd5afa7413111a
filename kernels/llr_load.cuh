// Non-finite channel LLRs: the one rule every decoding kernel applies where it loads them
// (kernels/qc_decode.cuh, qc_resident.cu, nb_minmax.cu, nb_fftspa.cu, nb_frame.cu), the same
// rule as the C++ load of the cpu backend and gpuldpc.bad_llr.sanitized (the reference):
//   NaN -> +0 (an erasure), +inf -> +kLlrSaturation, -inf -> -kLlrSaturation,
// applied to each float32 LLR as the kernel sees it (float16 input: value * scale; GF(q) bit
// LLRs: each bit LLR, before the bit -> symbol conversion), and the frame is flagged: bit 1
// (kBadLlrFlag) of its byte in valid_out, beside bit 0, "syndrome satisfied".  int8 input is
// always finite.  Finite LLRs pass through unchanged, so finite input decodes bit for bit as
// before.
#pragma once

namespace llr {

// 2^64, exact in float32 (gpuldpc.bad_llr.LLR_SATURATION): far from float32 overflow even
// after the decoders' sums of a column's messages.
constexpr float kLlrSaturation = 18446744073709551616.0f;

// valid_out bit of a frame whose LLRs held NaN or +-inf (bit 0: syndrome satisfied)
constexpr unsigned char kBadLlrFlag = 2;

// NaN or +-inf: the exponent bits all ones.
__device__ __forceinline__ bool nonfinite(float x)
{
    return (__float_as_uint(x) & 0x7f800000u) == 0x7f800000u;
}

// The rule on one loaded LLR; `bad` is set to 1 when x is not finite (left as it is otherwise).
__device__ __forceinline__ float rule(float x, unsigned& bad)
{
    if (nonfinite(x)) {
        bad = 1u;
        x = x != x ? 0.0f : copysignf(kLlrSaturation, x);
    }
    return x;
}

// The rule on four loaded LLRs: one test for the four (the usual case), the rule where it fails.
__device__ __forceinline__ float4 rule4(float4 v, unsigned& bad)
{
    if (nonfinite(v.x) | nonfinite(v.y) | nonfinite(v.z) | nonfinite(v.w))
        v = make_float4(rule(v.x, bad), rule(v.y, bad), rule(v.z, bad), rule(v.w, bad));
    return v;
}

}  // namespace llr
