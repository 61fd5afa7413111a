// Rate recovery on the GPU: received LLRs of a shaped code (punctured, shortened, repeated
// bits; 5G NR rate matching, TS 38.212 5.4.2 inverted) -> the LLRs of the code the decoder
// runs on, one thread per (frame, decoded position).
//
// The same values, bit for bit, as the host recovery gpuldpc.codes.shaping.Shaping.recover
// (add=False) with the arithmetic of gpuldpc.codes.shaping.LlrFormat:
//   src[p] >= 0      the first received copy of position p: in[f, src[p]] as it is
//   src[p] == -1     punctured: 0
//   src[p] == -2     shortened (known zero): `certain` (float32 2^64, float16 65504, int8 127)
//   rep_start[p] .. rep_start[p+1]-1  (rep_start null: no repeats) indices into rep_index of
//   the further copies of p in order of transmission, each added to the running value with
//   the format's saturating sum:
//     float32  plain float32 sum (round to nearest, no contraction)
//     float16  both widened to float32, summed (round to nearest), clamped to +-65504 when
//              finite, rounded to float16 (NaN and +-inf pass through)
//     int8     summed in int, clamped to +-127 (never wrapped)
// Tables: gpuldpc.cuda.shaping.RecoveryTables.  Input rows of e values, output rows of n.

#include <cuda_fp16.h>

namespace {

constexpr int kShortened = -2;   // src[p] == -1: punctured (LLR 0)

struct F32 {
    using T = float;
    static __device__ float from(float c) { return c; }
    static __device__ float zero() { return 0.0f; }
    static __device__ float add(float a, float b) { return __fadd_rn(a, b); }
};

struct F16 {
    using T = __half;
    static __device__ __half from(float c) { return __float2half_rn(c); }
    static __device__ __half zero() { return __float2half_rn(0.0f); }
    static __device__ __half add(__half a, __half b)
    {
        float t = __fadd_rn(__half2float(a), __half2float(b));
        if (isfinite(t)) t = fminf(fmaxf(t, -65504.0f), 65504.0f);
        return __float2half_rn(t);
    }
};

struct I8 {
    using T = signed char;
    static __device__ signed char from(float c) { return (signed char)c; }
    static __device__ signed char zero() { return 0; }
    static __device__ signed char add(signed char a, signed char b)
    {
        return (signed char)min(max((int)a + (int)b, -127), 127);
    }
};

template <class F>
__device__ void recover(const typename F::T* __restrict__ in, int e, typename F::T* __restrict__ out, int n,
                        const int* __restrict__ src, const int* __restrict__ rep_start,
                        const int* __restrict__ rep_index, int frames, float certain)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n) return;
    const int s = src[p];
    const int r0 = rep_start ? rep_start[p] : 0;
    const int r1 = rep_start ? rep_start[p + 1] : 0;
    for (int f = blockIdx.y; f < frames; f += gridDim.y) {
        const typename F::T* x = in + (size_t)f * e;
        typename F::T v;
        if (s >= 0) {
            v = x[s];
            for (int r = r0; r < r1; ++r) v = F::add(v, x[rep_index[r]]);
        } else {
            v = s == kShortened ? F::from(certain) : F::zero();
        }
        out[(size_t)f * n + p] = v;
    }
}

}  // namespace

#define GPULDPC_RECOVER(NAME, F)                                                                        \
    extern "C" __global__ void __launch_bounds__(256) NAME(                                           \
        const F::T* __restrict__ in, int e, F::T* __restrict__ out, int n, const int* __restrict__ src, \
        const int* __restrict__ rep_start, const int* __restrict__ rep_index, int frames, float certain) \
    {                                                                                                   \
        recover<F>(in, e, out, n, src, rep_start, rep_index, frames, certain);                         \
    }

GPULDPC_RECOVER(shaping_recover_f32, F32)
GPULDPC_RECOVER(shaping_recover_f16, F16)
GPULDPC_RECOVER(shaping_recover_i8, I8)
