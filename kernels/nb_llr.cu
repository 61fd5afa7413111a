// Bit LLRs of the binary image (BPSK, L = ln P(0)/P(1)) -> Min-Max symbol LLRs of GF(q).
//
// Papers 000 and 003 (symbol LLRs L_n(a) = ln P(x_n = s_n) / P(x_n = a) >= 0) with the
// bit mapping of gpuldpc.channel (bit j of element a = (a >> j) & 1, LSB first):
//     L_n(a) = sum_{j: a_j != s_j} |l_{n,j}|,   s_j = [l_{n,j} < 0],
// accumulated in float32 in increasing j, so the result equals
// gpuldpc.channel.bit_llr_to_symbol_llr bit for bit.  The decoders of nb_minmax.cu and
// nb_fftspa.cu do the same conversion in their prologue (there with the rule for non-finite
// LLRs of llr_load.cuh; here NaN and +-inf pass through as in gpuldpc.channel); this kernel
// serves callers that want the symbol LLRs themselves.
//
// Input bits [symbols][m] float32, output [symbols][q] float32; one thread per (symbol, a).
#include "nb_common.cuh"

extern "C" __global__ void nb_bits_to_symbol_llr(const float* __restrict__ bits, float* __restrict__ out,
                                                 long long symbols, int m)
{
    const int q = 1 << m;
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= symbols * q) return;
    const long long s = k >> m;
    out[k] = nb::bits_to_symbol_llr(bits + s * m, m, (int)(k & (q - 1)), [](float x) { return x; });
}
