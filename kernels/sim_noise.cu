// BPSK/AWGN decoder input of one simulation batch, generated on the GPU.
//
// The exact GPU twin of python/gpuldpc/sim/noise.py and python/gpuldpc/sim/frames.py
// (see their docstrings; tests/sim/test_noise.py pins the numbers):
//
//   * random words: Philox4x64-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers:
//     as easy as 1, 2, 3", SC 2011, section 4 and Random123's philox.h): word w of a batch
//     is lane w % 4 of Philox(counter = (w / 4 + 1, 0, 0, 0), key = (k0, k1)), which is
//     numpy.random.Philox(key=(k0, k1)).random_raw()[w];
//   * normals: Box-Muller on each word (lo = bits 0-31, hi = bits 32-63), float32:
//       u1 = float(lo) * 2^-32 + 2^-33,  theta = float(hi) * (2 pi 2^-32),
//       r = sqrt(-2 ln u1),  z[2w] = r cos(theta),  z[2w+1] = r sin(theta);
//   * bit t of frame f takes normal g = f * nbits + t (nbits = n * m), is sent as
//     x = 1 - 2 b (b from the codeword pool row (first_row + f) % pool) and received as
//       L = gain * (x + sigma * z)      (gpuldpc.channel: gain = 2 / sigma^2, float32);
//   * GF(2^m) codes: symbol LLRs L_n(a) = sum_{j : a_j != s_j} |l_{n,j}| (bits added in
//     increasing j, s_j = [l_{n,j} < 0]), gpuldpc.channel.bit_llr_to_symbol_llr.
//
// Products and sums use the _rn intrinsics so nvcc cannot contract them into FMAs (numpy
// rounds each operation); logf/sincosf are CUDA's accurate float functions (not
// -use_fast_math), so normals match the CPU's to a few ulp.

namespace {

constexpr unsigned long long kM0 = 0xD2E7470EE14C6C93ull;
constexpr unsigned long long kM1 = 0xCA5A826395121157ull;
constexpr unsigned long long kW0 = 0x9E3779B97F4A7C15ull;
constexpr unsigned long long kW1 = 0xBB67AE8584CAA73Bull;

// Philox4x64-10 of counter (c0, 0, 0, 0) under key (k0, k1): the four output words.
__device__ __forceinline__ void philox4x64_10(unsigned long long c0, unsigned long long k0,
                                              unsigned long long k1, unsigned long long out[4])
{
    unsigned long long c[4] = {c0, 0ull, 0ull, 0ull};
    #pragma unroll
    for (int r = 0; r < 10; ++r) {
        if (r) { k0 += kW0; k1 += kW1; }
        const unsigned long long hi0 = __umul64hi(kM0, c[0]), lo0 = kM0 * c[0];
        const unsigned long long hi1 = __umul64hi(kM1, c[2]), lo1 = kM1 * c[2];
        c[0] = hi1 ^ c[1] ^ k0;
        c[1] = lo1;
        c[2] = hi0 ^ c[3] ^ k1;
        c[3] = lo0;
    }
    #pragma unroll
    for (int i = 0; i < 4; ++i) out[i] = c[i];
}

// The two normals of one word (Box-Muller, header comment).
__device__ __forceinline__ void box_muller(unsigned long long w, float& z0, float& z1)
{
    const float u1 = __fadd_rn(__fmul_rn(__uint2float_rn((unsigned)(w & 0xFFFFFFFFull)), 2.3283064365386963e-10f),
                               1.1641532182693481e-10f);            // 2^-32, 2^-33
    const float theta = __fmul_rn(__uint2float_rn((unsigned)(w >> 32)), 1.4629181e-09f);  // 2 pi 2^-32
    const float r = sqrtf(__fmul_rn(-2.0f, logf(u1)));
    float s, c;
    sincosf(theta, &s, &c);
    z0 = __fmul_rn(r, c);
    z1 = __fmul_rn(r, s);
}

// Normal g of the batch (recomputes its Philox block: for the symbol kernel).
__device__ __forceinline__ float normal_at(unsigned long long g, unsigned long long k0, unsigned long long k1)
{
    const unsigned long long w = g >> 1;
    unsigned long long out[4];
    philox4x64_10((w >> 2) + 1ull, k0, k1, out);
    float z0, z1;
    box_muller(out[w & 3], z0, z1);
    return (g & 1) ? z1 : z0;
}

__device__ __forceinline__ float channel_llr(unsigned char bit, float z, float sigma, float gain)
{
    const float x = bit ? -1.0f : 1.0f;
    return __fmul_rn(gain, __fadd_rn(x, __fmul_rn(sigma, z)));
}

}  // namespace

// Binary codes: llr[f * nbits + t], f < frames, t < nbits.  One thread per Philox block
// (4 words, 8 normals).  pool_bits: [pool, nbits] bytes 0/1.
extern "C" __global__ void sim_bit_llr(const unsigned char* __restrict__ pool_bits, int pool, int nbits,
                                       long long first_row, int frames, unsigned long long k0,
                                       unsigned long long k1, float sigma, float gain,
                                       float* __restrict__ llr)
{
    const unsigned long long total = (unsigned long long)frames * (unsigned long long)nbits;
    const unsigned long long block = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (block * 8ull >= total) return;
    unsigned long long words[4];
    philox4x64_10(block + 1ull, k0, k1, words);
    #pragma unroll
    for (int i = 0; i < 4; ++i) {
        float z[2];
        box_muller(words[i], z[0], z[1]);
        #pragma unroll
        for (int h = 0; h < 2; ++h) {
            const unsigned long long g = block * 8ull + 2ull * i + h;
            if (g < total) {
                const unsigned long long f = g / (unsigned)nbits;
                const unsigned t = (unsigned)(g - f * (unsigned)nbits);
                const unsigned long long row = (unsigned long long)(first_row + (long long)f) % (unsigned)pool;
                llr[g] = channel_llr(pool_bits[row * nbits + t], z[h], sigma, gain);
            }
        }
    }
}

// GF(2^m) codes: llr[(f * n + s) * q + a].  One thread per symbol (m <= 8 bits).
// pool_bits: [pool, n * m] bytes 0/1, the binary image (bit j of symbol s at s * m + j).
extern "C" __global__ void sim_symbol_llr(const unsigned char* __restrict__ pool_bits, int pool, int n,
                                          int m, long long first_row, int frames, unsigned long long k0,
                                          unsigned long long k1, float sigma, float gain,
                                          float* __restrict__ llr)
{
    const unsigned long long symbol = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (symbol >= (unsigned long long)frames * (unsigned)n) return;
    const unsigned long long f = symbol / (unsigned)n;
    const unsigned s = (unsigned)(symbol - f * (unsigned)n);
    const unsigned long long row = (unsigned long long)(first_row + (long long)f) % (unsigned)pool;
    const unsigned nbits = (unsigned)n * (unsigned)m;
    float mag[8];
    unsigned hard = 0;
    for (int j = 0; j < m; ++j) {
        const float l = channel_llr(pool_bits[row * nbits + s * m + j],
                                    normal_at(f * nbits + s * m + j, k0, k1), sigma, gain);
        mag[j] = fabsf(l);
        hard |= (l < 0.0f ? 1u : 0u) << j;
    }
    const int q = 1 << m;
    float* out = llr + symbol * (unsigned long long)q;
    for (int a = 0; a < q; ++a) {
        float sum = 0.0f;
        const unsigned differs = (unsigned)a ^ hard;
        for (int j = 0; j < m; ++j)
            sum = __fadd_rn(sum, ((differs >> j) & 1u) ? mag[j] : 0.0f);
        out[a] = sum;
    }
}
