// Non-finite channel LLRs: the one rule every decoding kernel applies where it loads them
// (kernels/qc_decode.cuh, qc_resident.cu, nb_minmax.cu, nb_fftspa.cu, nb_frame.cu), the same
// rule as the C++ load of the cpu backend and gpuldpc.bad_llr.sanitized (the reference):
//   NaN -> +0 (an erasure), +inf -> +kLlrSaturation, -inf -> -kLlrSaturation,
//   finite |x| > kLlrSaturation -> +-kLlrSaturation (not flagged),
// applied to each float32 LLR as the kernel sees it (float16 input: value * scale; GF(q) bit
// LLRs: each bit LLR, before the bit -> symbol conversion), and the frame is flagged: bit 1
// (kBadLlrFlag) of its byte in valid_out, beside bit 0, "syndrome satisfied".  int8 input is
// always finite.  Finite LLRs beyond +-kLlrSaturation (1e30, 3e38: a demapper's noise
// estimate near zero) are clamped to it, unflagged, so no decoder's sums overflow float32;
// every other finite LLR passes through unchanged.
#pragma once

namespace llr {

// 2^64, exact in float32 (gpuldpc.bad_llr.LLR_SATURATION): far from float32 overflow even
// after the decoders' sums of a column's messages.
constexpr float kLlrSaturation = 18446744073709551616.0f;

// valid_out bit of a frame whose LLRs held NaN or +-inf (bit 0: syndrome satisfied)
constexpr unsigned char kBadLlrFlag = 2;

// A packed int4 LLR (python/gpuldpc/int4.py): v in 0..15 holding a 4-bit two's complement value,
// as an int in -7..7 (-8 read as -7, the symmetric range of gpuldpc.int4.unpack_int4).  Always
// finite.  kernels/transport.cu unpack_int4 and the binary16 kernels' int4 load (qc_decode.cuh).
__device__ __forceinline__ int nibble(unsigned v)
{
    return max((int)(v ^ 8u) - 8, -7);
}

// |x| >= 2^64, +-inf or NaN: the exponent field at least that of 2^64 (64 + 127 = 191).
__device__ __forceinline__ bool beyond(float x)
{
    return (__float_as_uint(x) & 0x7f800000u) >= (191u << 23);
}

// The rule on one loaded LLR; `bad` is set to 1 when x is not finite (left as it is otherwise).
__device__ __forceinline__ float rule(float x, unsigned& bad)
{
    if (beyond(x)) {
        if ((__float_as_uint(x) & 0x7f800000u) == 0x7f800000u) bad = 1u;   // NaN or +-inf
        x = x != x ? 0.0f : copysignf(kLlrSaturation, x);
    }
    return x;
}

// The rule on four loaded LLRs: one test for the four (the usual case), the rule where it fails.
__device__ __forceinline__ float4 rule4(float4 v, unsigned& bad)
{
    if (beyond(v.x) | beyond(v.y) | beyond(v.z) | beyond(v.w))
        v = make_float4(rule(v.x, bad), rule(v.y, bad), rule(v.z, bad), rule(v.w, bad));
    return v;
}

}  // namespace llr
