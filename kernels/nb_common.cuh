// Shared pieces of the GF(q) decoders (nb_minmax.cu, nb_fftspa.cu, nb_llr.cu).
//
// * GF(2^m) arithmetic by log/exp tables in shared memory (the field of gpuldpc.gf:
//   element integers in the polynomial basis, addition = XOR, exp has 2(q-1) entries so
//   log a + log b needs no reduction);
// * the channel prologue: bit LLRs of the binary image (BPSK) or symbol LLRs ->
//   Min-Max symbol LLRs  L_n(a) = sum_{j: a_j != s_j} |l_{n,j}|  (gpuldpc.channel,
//   accumulated in float32 in increasing j, bit j of a = (a >> j) & 1, s_j = [l_{n,j} < 0]),
//   each loaded LLR (a bit LLR before the conversion, or a symbol LLR) through the rule for
//   non-finite values of llr_load.cuh;
// * hard decisions, the GF(q) syndrome  s_m = sum_n h_{m,n} x_n  over each check row, and
//   the per-frame exit (symbols, iterations, valid: bit 0 syndrome satisfied, bit 1
//   llr::kBadLlrFlag) of gpuldpc.decoders.reference:
//   with early stop a frame ends after the first iteration whose decisions satisfy every
//   check; otherwise after max_iterations, reporting its syndrome flag.
//
// Code tables (python/gpuldpc/cuda/nb_layout.py): the edges are the nonzeros of H in CSR
// order; row_ptr [m+1], edge_col [E], edge_h [E] (GF element); vn_ptr [n+1], vn_edge [E]
// (each variable's edges in increasing check row).
#pragma once

#include <cfloat>

#include "llr_load.cuh"

namespace nb {

__device__ __forceinline__ float inf() { return __int_as_float(0x7f800000); }

struct Tables {
    unsigned char* exp;    // [2(q-1)]
    short* log;            // [q]
};

// Shared-memory bytes of the field tables, 16-byte aligned.
__host__ __device__ constexpr int table_bytes(int q) { return ((2 * (q - 1) + 2 * q) + 15) & ~15; }

__device__ inline Tables load_tables(unsigned char* smem, const unsigned char* gexp, const short* glog,
                                     int q)
{
    Tables t;
    t.log = reinterpret_cast<short*>(smem);
    t.exp = smem + 2 * q;
    for (int i = threadIdx.x; i < 2 * (q - 1); i += blockDim.x) t.exp[i] = gexp[i];
    for (int i = threadIdx.x; i < q; i += blockDim.x) t.log[i] = glog[i];
    return t;
}

// h * a for a GF element h != 0 given by its logarithm.
__device__ __forceinline__ int gf_mul_log(const Tables& t, int log_h, int a)
{
    return a == 0 ? 0 : t.exp[log_h + t.log[a]];
}

// Min-Max symbol LLR of element a from the m bit LLRs of one symbol (gpuldpc.channel), each
// bit LLR as load(l[j]) gives it (nb_llr.cu: as it is; the decoders: channel_llr's rule).
template <class Load>
__device__ __forceinline__ float bits_to_symbol_llr(const float* __restrict__ l, int m, int a, Load load)
{
    float acc = 0.0f;
    for (int j = 0; j < m; ++j) {
        const float x = load(l[j]);
        if ((x < 0.0f) != (((a >> j) & 1) != 0)) acc += fabsf(x);
    }
    return acc;
}

// L[v][a] of one frame from its input: bit LLRs [n*m] (in_bits) or symbol LLRs [n][q], each
// loaded LLR through the rule for non-finite values (llr_load.cuh: bad = 1 when one was not finite).
__device__ __forceinline__ float channel_llr(const float* __restrict__ in, int in_bits, int m, int q,
                                             int v, int a, unsigned& bad)
{
    const auto load = [&bad](float x) { return llr::rule(x, bad); };
    return in_bits ? bits_to_symbol_llr(in + (size_t)v * m, m, a, load) : load(in[(size_t)v * q + a]);
}

// Syndrome of the decisions sym[n] (shared): 1 when some check is unsatisfied (block-wide).
__device__ inline int syndrome_fails(const Tables& t, const unsigned char* sym,
                                     const int* __restrict__ row_ptr, const int* __restrict__ edge_col,
                                     const unsigned char* __restrict__ edge_h, int m)
{
    int bad = 0;
    for (int row = threadIdx.x; row < m && !bad; row += blockDim.x) {
        int s = 0;
        for (int e = row_ptr[row]; e < row_ptr[row + 1]; ++e) {
            s ^= gf_mul_log(t, t.log[edge_h[e]], sym[edge_col[e]]);
        }
        bad = s != 0;
    }
    return __syncthreads_or(bad);
}

// After iteration `it`: true when the frame is finished (then symbols, iterations and
// valid are written; `flags`: llr::kBadLlrFlag or 0, or-ed into valid).  sym[n] must hold the
// decisions (synchronized).
__device__ inline bool finish_frame(const Tables& t, const unsigned char* sym, int it, int max_iter,
                                    int early_stop, const int* __restrict__ row_ptr,
                                    const int* __restrict__ edge_col,
                                    const unsigned char* __restrict__ edge_h, int n, int m,
                                    unsigned char* __restrict__ symbols, int* __restrict__ iterations,
                                    unsigned char* __restrict__ valid, unsigned char flags)
{
    const int bad = syndrome_fails(t, sym, row_ptr, edge_col, edge_h, m);
    if (bad && it < max_iter) return false;
    for (int v = threadIdx.x; v < n; v += blockDim.x) symbols[v] = sym[v];
    if (threadIdx.x == 0) {
        *iterations = (early_stop && !bad) ? it : max_iter;
        *valid = (bad ? 0 : 1) | flags;
    }
    return true;
}

}  // namespace nb
