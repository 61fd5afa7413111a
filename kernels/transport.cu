// Transport kernels: the stages around a decoding kernel that change what crosses PCIe
// (issue 16 items 2 and 4; python/gpuldpc/cuda/stages.py queues them on the slot's stream,
// before and after the decoding kernel).
//
// unpack_int4: packed int4 LLRs (python/gpuldpc/int4.py) -> the int8 rows the int8 decoding
//   kernels read.  Row f of the input has w = ceil(n/2) bytes; byte j holds position 2j in its
//   low nibble and 2j+1 in its high nibble (odd n: the last high nibble is padding), each a
//   two's complement 4-bit value; the output row f has n int8 values, the nibble -8 written
//   as -7 (the symmetric range of gpuldpc.int4.unpack_int4).  One thread a group of 4 input
//   bytes: with n % 8 == 0 and a 4-byte aligned input (every standard code; rows of a
//   pinned, registered or pooled array) one 4-byte load and one 8-byte store, the nibbles
//   interleaved by two byte permutes and sign-extended by per-byte SIMD ops; else byte by byte.
//
// soft_to_half: float32 soft output -> IEEE binary16 (python/gpuldpc/soft.py to_float16):
//   each value clamped to +-65504 (the largest finite binary16; NaN passes) and rounded to
//   nearest even, as NumPy's float32 -> float16 conversion of the clamped value.  4 values a thread.
//
// packed_run: DecodeResult.info of packed decisions whose information bits start inside a byte
//   (CCSDS C2: bit 18; python/gpuldpc/packed_bits.py info_of).  Row f of the input holds w bytes
//   of decisions in numpy.packbits order; its bits start .. start + count - 1 are packed again from
//   bit 0 of output row f (ceil(count/8) bytes): with s = start / 8, r = start % 8,
//   out[i] = (in[s + i] << r) | (in[s + i + 1] >> (8 - r)), the byte past the row read as 0 and the
//   low bits of the last byte past the run cleared.  A byte a thread.

#include <cuda_fp16.h>

#include "llr_load.cuh"

namespace {

// Four bytes 0..15 -> four int8 values (llr::nibble on each byte).
__device__ __forceinline__ unsigned nibbles4(unsigned v)
{
    return __vmaxs4(__vsub4(v ^ 0x08080808u, 0x08080808u), 0xf9f9f9f9u);
}

__device__ __forceinline__ float clamp_half(float x)
{
    return x > 65504.0f ? 65504.0f : (x < -65504.0f ? -65504.0f : x);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(256) unpack_int4(const unsigned char* __restrict__ in,
                                                              signed char* __restrict__ out, int n, int frames)
{
    const int w = (n + 1) / 2;
    const int groups = (w + 3) / 4;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)frames * groups) return;
    const int f = (int)(i / groups);
    const int j0 = 4 * (int)(i - (long long)f * groups);
    const unsigned char* row = in + (size_t)f * w;
    signed char* dst = out + (size_t)f * n;
    if ((n & 7) == 0 && (reinterpret_cast<size_t>(in) & 3) == 0) {
        const unsigned v = *reinterpret_cast<const unsigned*>(row + j0);
        const unsigned lo = v & 0x0f0f0f0fu, hi = (v >> 4) & 0x0f0f0f0fu;
        // positions 0..7 of the group: lo.b0 hi.b0 lo.b1 hi.b1 | lo.b2 hi.b2 lo.b3 hi.b3
        *reinterpret_cast<uint2*>(dst + 2 * j0) =
            make_uint2(nibbles4(__byte_perm(lo, hi, 0x5140)), nibbles4(__byte_perm(lo, hi, 0x7362)));
        return;
    }
    for (int j = j0; j < min(j0 + 4, w); ++j) {
        const unsigned b = row[j];
        dst[2 * j] = (signed char)llr::nibble(b & 15u);
        if (2 * j + 1 < n) dst[2 * j + 1] = (signed char)llr::nibble(b >> 4);
    }
}

extern "C" __global__ void __launch_bounds__(256) soft_to_half(const float* __restrict__ in,
                                                               __half* __restrict__ out, long long count)
{
    const long long i = 4 * ((long long)blockIdx.x * blockDim.x + threadIdx.x);
    if (i + 4 <= count) {
        const float4 v = *reinterpret_cast<const float4*>(in + i);
        const __half2 a = __floats2half2_rn(clamp_half(v.x), clamp_half(v.y));
        const __half2 b = __floats2half2_rn(clamp_half(v.z), clamp_half(v.w));
        *reinterpret_cast<uint2*>(out + i) =
            make_uint2(*reinterpret_cast<const unsigned*>(&a), *reinterpret_cast<const unsigned*>(&b));
        return;
    }
    for (long long k = i; k < count; ++k) out[k] = __float2half_rn(clamp_half(in[k]));
}

extern "C" __global__ void __launch_bounds__(256) packed_run(const unsigned char* __restrict__ in,
                                                             unsigned char* __restrict__ out, int w, int start,
                                                             int count, int frames)
{
    const int ow = (count + 7) / 8;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)frames * ow) return;
    const int f = (int)(i / ow);
    const int j = (int)(i - (long long)f * ow) + start / 8;
    const int r = start % 8;
    const unsigned char* row = in + (size_t)f * w;
    unsigned v = (unsigned)row[j] << r;
    if (j + 1 < w) v |= (unsigned)row[j + 1] >> (8 - r);
    if (j == start / 8 + ow - 1 && count % 8) v &= 0xffu << (8 - count % 8);
    out[i] = (unsigned char)v;
}
