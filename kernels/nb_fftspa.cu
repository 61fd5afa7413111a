// GF(q) sum-product decoding in the probability domain with the fast Walsh-Hadamard
// transform (FFT-SPA), q = 4 .. 256, flooding, all iterations of a frame in one thread
// block and one launch.
//
// Paper 002 (FFT-SPA on GPU), section III:
//   variable node   Q_{mn}(a) = Pch_n(a) prod_{m' != m} R_{m'n}(a),  normalized to sum 1;
//   permutation     Qh_{mn}(h a) = Q_{mn}(a)            (h = h_{mn}, GF(q) product);
//   check node      F = WHT(Qh),  G_{mn} = prod_{n' != n} F_{mn'}  (pointwise),
//                   Rh_{mn} = WHT(G_{mn}) / (q G_{mn}(0))
//                   (normalized in the Fourier domain: sum_b Rh(b) = G(0) / G(0) = 1);
//   de-permutation  R_{mn}(a) = Rh_{mn}(h a);
//   decision        x_n = argmax_a Pch_n(a) prod_m R_{mn}(a)  (summed as logarithms).
// WHT: y(k) = sum_b (-1)^{popcount(b & k)} x(b), its own inverse up to the factor q.
// Rounding can leave Rh slightly negative; it is clamped at 0.  A variable-node product
// that underflows to 0 for every a (possible in float32 at high SNR) is replaced by Pch_n.
//
// Threads: a *group* of T = min(q, 32) lanes per vector; lane l holds the R = q/T elements
// a = l R .. l R + R - 1 in registers.  The WHT runs its log2 R first stages inside the
// registers and the last log2 T stages with __shfl_xor_sync; the Fourier-domain products
// of one check are lane-private (element k of every edge sits in the same lane), so they
// go through shared memory without synchronization.  Permutations go through shared
// memory, so every global access is contiguous (q floats per message, as float4 where R
// allows).  A group handles one check row at a time, and one variable at a time for the
// decisions.
// Multiplication by h is GF(2)-linear in the polynomial basis: h a = XOR of c_j = h x^j
// over the set bits j of a, so a lane's targets h a are XORs of c_0 .. c_{m-1} (integer
// instructions, no table look-up).  Vectors in shared memory are stored with chunk k (V =
// min(R, 4) elements) of lane l at slot k T + l, so a lane's accesses to its own elements
// are conflict-free V-wide accesses.
// Messages per frame: Pch [n][q] (channel probabilities), R [2][E][q] (edge = CSR index,
// probability domain; iteration t reads copy t mod 2 and writes the other, so every Q of
// an iteration comes from the R of the previous one: flooding).  Q is recomputed from Pch
// and R where a check needs it (no variable-node pass over memory); R is not read in the
// first iteration (uniform there).  edge_other [E][dvmax-1]: the other edges of each
// edge's column, -1 padded.
// Input: bit LLRs of the binary image or Min-Max symbol LLRs (nb_common.cuh), turned into
// Pch_n(a) = exp(-(L_n(a) - min L_n)) / sum.
#include "nb_common.cuh"

namespace {

constexpr int kMaxThreads = 512;

template <int Q>
struct Group {
    static constexpr int T = Q < 32 ? Q : 32;   // lanes per vector
    static constexpr int R = Q / T;             // elements per lane
    static constexpr int V = R < 4 ? R : 4;     // elements per shared-memory access
    int id, lane;
    unsigned mask;

    __device__ Group()
    {
        id = threadIdx.x / T;
        lane = threadIdx.x % T;
        mask = T >= 32 ? 0xffffffffu : ((1u << T) - 1u) << ((threadIdx.x % 32) & ~(T - 1));
    }
    __device__ __forceinline__ int element(int r) const { return lane * R + r; }
    // Shared-memory slot of element b of a vector: chunk k of lane l at V (k T + l).  Only
    // R = 8 differs from b: bits [1:0] stay, [7:3] move to [6:2], bit 2 to 7 -- a permutation
    // of the bits of b, so slot(x ^ y) = slot(x) ^ slot(y).
    static __device__ __forceinline__ unsigned slot(unsigned b)
    {
        if constexpr (R == 8) return (b & 3u) | ((b >> 1) & 0x7cu) | ((b & 4u) << 5);
        else return b;
    }
    __device__ __forceinline__ int own_slot(int k) const { return (k * T + lane) * V; }
    __device__ __forceinline__ void sync() const { __syncwarp(mask); }
    __device__ __forceinline__ float sum(float v) const
    {
#pragma unroll
        for (int o = 1; o < T; o <<= 1) v += __shfl_xor_sync(mask, v, o);
        return v;
    }
    __device__ __forceinline__ float min(float v) const
    {
#pragma unroll
        for (int o = 1; o < T; o <<= 1) v = fminf(v, __shfl_xor_sync(mask, v, o));
        return v;
    }
    // Unnormalized WHT of the group's vector, in place.
    __device__ __forceinline__ void wht(float (&x)[R]) const
    {
#pragma unroll
        for (int h = 1; h < R; h <<= 1)
#pragma unroll
            for (int r = 0; r < R; ++r)
                if (!(r & h)) {
                    const float u = x[r], v = x[r | h];
                    x[r] = u + v;
                    x[r | h] = u - v;
                }
#pragma unroll
        for (int o = 1; o < T; o <<= 1) {
            const float sign = (lane & o) ? -1.0f : 1.0f;     // upper: other - x, lower: x + other
#pragma unroll
            for (int r = 0; r < R; ++r) x[r] = fmaf(x[r], sign, __shfl_xor_sync(mask, x[r], o));
        }
    }
    // The lane's own elements from / to a vector in shared memory (slot layout).
    __device__ __forceinline__ void load_own(const float* p, float (&x)[R]) const
    {
#pragma unroll
        for (int k = 0; k < R / V; ++k) {
            if constexpr (V == 4) {
                const float4 v = *reinterpret_cast<const float4*>(p + own_slot(k));
                x[4 * k] = v.x; x[4 * k + 1] = v.y; x[4 * k + 2] = v.z; x[4 * k + 3] = v.w;
            } else if constexpr (V == 2) {
                const float2 v = *reinterpret_cast<const float2*>(p + own_slot(k));
                x[2 * k] = v.x; x[2 * k + 1] = v.y;
            } else {
                x[k] = p[own_slot(k)];
            }
        }
    }
    __device__ __forceinline__ void store_own(float* p, const float (&x)[R]) const
    {
#pragma unroll
        for (int k = 0; k < R / V; ++k) {
            if constexpr (V == 4) {
                *reinterpret_cast<float4*>(p + own_slot(k)) = make_float4(x[4 * k], x[4 * k + 1], x[4 * k + 2],
                                                                         x[4 * k + 3]);
            } else if constexpr (V == 2) {
                *reinterpret_cast<float2*>(p + own_slot(k)) = make_float2(x[2 * k], x[2 * k + 1]);
            } else {
                p[own_slot(k)] = x[k];
            }
        }
    }
    // b[r] = slot(h element(r)), h != 0 a GF(q) element, xm = x^m reduced (the field
    // polynomial's low terms).  h a = XOR of c_j = h x^j over the set bits j of a (c_0 = h,
    // c_{j+1} = c_j x): the lane's bits give base (j >= log2 R), the register's the rest;
    // slot is applied to each c_j (it commutes with XOR).
    __device__ __forceinline__ void mul_targets(int h, int xm, unsigned (&b)[R]) const
    {
        constexpr int LR = R == 1 ? 0 : R == 2 ? 1 : R == 4 ? 2 : 3;
        constexpr int LQ = LR + (T == 4 ? 2 : T == 8 ? 3 : T == 16 ? 4 : 5);
        unsigned low[LR + 1];
        unsigned c = h, base = 0;
#pragma unroll
        for (int j = 0; j < LQ; ++j) {
            if (j < LR) low[j] = slot(c);
            else base ^= slot(c) & (0u - ((lane >> (j - LR)) & 1u));
            c = ((c << 1) & (Q - 1)) ^ ((c >> (LQ - 1)) ? xm : 0u);
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            unsigned t = base;
#pragma unroll
            for (int j = 0; j < LR; ++j)
                if ((r >> j) & 1) t ^= low[j];
            b[r] = t;
        }
    }
};

// x[r] = p[r] for the lane's R contiguous floats (one 8- or 16-byte access per 4 floats).
template <int R>
__device__ __forceinline__ void load_run(const float* p, float (&x)[R])
{
    if constexpr (R % 4 == 0) {
#pragma unroll
        for (int k = 0; k < R / 4; ++k) {
            const float4 v = reinterpret_cast<const float4*>(p)[k];
            x[4 * k] = v.x; x[4 * k + 1] = v.y; x[4 * k + 2] = v.z; x[4 * k + 3] = v.w;
        }
    } else if constexpr (R == 2) {
        const float2 v = *reinterpret_cast<const float2*>(p);
        x[0] = v.x; x[1] = v.y;
    } else {
        x[0] = p[0];
    }
}

template <int R>
__device__ __forceinline__ void store_run(float* p, const float (&x)[R])
{
    if constexpr (R % 4 == 0) {
#pragma unroll
        for (int k = 0; k < R / 4; ++k) {
            reinterpret_cast<float4*>(p)[k] = make_float4(x[4 * k], x[4 * k + 1], x[4 * k + 2], x[4 * k + 3]);
        }
    } else if constexpr (R == 2) {
        *reinterpret_cast<float2*>(p) = make_float2(x[0], x[1]);
    } else {
        p[0] = x[0];
    }
}

// One check row: Q of its edges (variable-node products), WHT, products, inverse WHT, R.
// Shared memory of a group: meta [d][1 + dvmax] (column, h, the dvmax-1 other edges of the
// column, -1 padded; rounded to 4 words), F [d][q] (each edge's Qh, then its transform) and a
// permutation buffer [q], all vectors in the slot layout of Group.  An edge's Q goes from
// its loads through the normalization to its permuted slots in registers (a staging copy
// of the d products in shared memory before: GF(64) 7 % slower, GF(256) 2 %).  R is read from rin (previous iteration) and
// written to rout.  xm: x^m reduced (Group::mul_targets).
template <int Q>
__device__ void check_row(const Group<Q>& g, int xm, int* __restrict__ meta, float* __restrict__ fst,
                          int d, int rb, int dvm1, const int* __restrict__ edge_col,
                          const unsigned char* __restrict__ edge_h, const int* __restrict__ edge_other,
                          const float* __restrict__ pch, const float* __restrict__ rin, float* __restrict__ rout,
                          bool first)
{
    constexpr int R = Group<Q>::R, T = Group<Q>::T;
    const int width = 2 + dvm1;
    float* scratch = fst + d * Q;
    g.sync();                                 // the previous row is done with the shared buffers
    for (int k = g.lane; k < d * width; k += T) {
        const int i = k / width, j = k - i * width;
        const int e = rb + i;
        meta[k] = j == 0 ? edge_col[e] : j == 1 ? edge_h[e] : edge_other[(size_t)e * dvm1 + j - 2];
    }
    g.sync();
    for (int i = 0; i < d; ++i) {             // Pch_v prod_{other edges} R; normalize, permute: Qh(h a) = Q(a)
        const int* mi = meta + i * width;
        float x[R];
        load_run<R>(pch + (size_t)mi[0] * Q + g.element(0), x);
        if (!first) {
            for (int j = 0; j < dvm1; ++j) {
                const int e2 = mi[2 + j];
                if (e2 < 0) break;
                float y[R];
                load_run<R>(rin + (size_t)e2 * Q + g.element(0), y);
#pragma unroll
                for (int r = 0; r < R; ++r) x[r] *= y[r];
            }
        }
        if (!first) {
            float s = 0.0f;
#pragma unroll
            for (int r = 0; r < R; ++r) s += x[r];
            s = g.sum(s);
            if (s > 0.0f && s < nb::inf()) {
                const float inv = 1.0f / s;
#pragma unroll
                for (int r = 0; r < R; ++r) x[r] *= inv;
            } else {
                load_run<R>(pch + (size_t)mi[0] * Q + g.element(0), x);
            }
        }
        unsigned b[R];
        g.mul_targets(mi[1], xm, b);
#pragma unroll
        for (int r = 0; r < R; ++r) fst[i * Q + b[r]] = x[r];
    }
    g.sync();
    for (int i = 0; i < d; ++i) {             // F_i = WHT(Qh_i), kept in the lane's own slots
        float x[R];
        g.load_own(fst + i * Q, x);
        g.wht(x);
        g.store_own(fst + i * Q, x);
    }
    for (int i = 0; i < d; ++i) {
        float y[R];
#pragma unroll
        for (int r = 0; r < R; ++r) y[r] = 1.0f;
        for (int j = 0; j < d; ++j) {
            if (j == i) continue;
            float f[R];
            g.load_own(fst + j * Q, f);
#pragma unroll
            for (int r = 0; r < R; ++r) y[r] *= f[r];
        }
        const float g0 = __shfl_sync(g.mask, y[0], 0, T);
        g.wht(y);
        const bool ok = g0 > 0.0f && g0 < nb::inf();
        const float scale = ok ? 1.0f / ((float)Q * g0) : 0.0f;
#pragma unroll
        for (int r = 0; r < R; ++r) y[r] = ok ? fmaxf(y[r] * scale, 0.0f) : 1.0f / Q;
        g.sync();                             // the previous edge's readers of scratch
        g.store_own(scratch, y);
        g.sync();
        unsigned b[R];
        g.mul_targets(meta[i * width + 1], xm, b);
#pragma unroll
        for (int r = 0; r < R; ++r) y[r] = scratch[b[r]];
        store_run<R>(rout + (size_t)(rb + i) * Q + g.element(0), y);
    }
}

// sym[v] = argmax_a log Pch_v(a) + sum_m log R_mv(a) (smallest a on ties), a group per variable.
template <int Q>
__device__ void decide(const Group<Q>& g, int groups, const float* __restrict__ pch,
                       const float* __restrict__ rmsg, const int* __restrict__ vn_ptr,
                       const int* __restrict__ vn_edge, unsigned char* sym, int n)
{
    constexpr int R = Group<Q>::R;
    for (int v = g.id; v < n; v += groups) {
        float lp[R], x[R];
        load_run<R>(pch + (size_t)v * Q + g.element(0), x);
#pragma unroll
        for (int r = 0; r < R; ++r) lp[r] = logf(fmaxf(x[r], FLT_MIN));
        for (int k = vn_ptr[v]; k < vn_ptr[v + 1]; ++k) {
            load_run<R>(rmsg + (size_t)vn_edge[k] * Q + g.element(0), x);
#pragma unroll
            for (int r = 0; r < R; ++r) lp[r] += logf(fmaxf(x[r], FLT_MIN));
        }
        float best = lp[0];
        int arg = g.element(0);
#pragma unroll
        for (int r = 1; r < R; ++r)
            if (lp[r] > best) { best = lp[r]; arg = g.element(r); }
#pragma unroll
        for (int o = 1; o < Group<Q>::T; o <<= 1) {
            const float ob = __shfl_xor_sync(g.mask, best, o);
            const int oa = __shfl_xor_sync(g.mask, arg, o);
            if (ob > best || (ob == best && oa < arg)) { best = ob; arg = oa; }
        }
        if (g.lane == 0) sym[v] = (unsigned char)arg;
    }
}

template <int Q>
__device__ void fftspa_decode(const float* __restrict__ in, int in_bits, float* __restrict__ pch,
                              float* __restrict__ rmsg, unsigned char* __restrict__ symbols,
                              int* __restrict__ iterations, unsigned char* __restrict__ valid,
                              const unsigned char* __restrict__ gexp, const short* __restrict__ glog,
                              const int* __restrict__ row_ptr, const int* __restrict__ edge_col,
                              const unsigned char* __restrict__ edge_h, const int* __restrict__ edge_other,
                              const int* __restrict__ vn_ptr, const int* __restrict__ vn_edge, int n, int m,
                              int E, int dmax, int dvmax, int max_iter, int early_stop)
{
    constexpr int R = Group<Q>::R;
    extern __shared__ float4 smem4[];
    unsigned char* smem = reinterpret_cast<unsigned char*>(smem4);
    const nb::Tables tab = nb::load_tables(smem, gexp, glog, Q);
    unsigned char* sym = smem + nb::table_bytes(Q);
    float* work = reinterpret_cast<float*>(sym + ((n + 15) & ~15));

    const size_t frame = blockIdx.x;
    int bits_per_symbol = 0;
    while ((1 << bits_per_symbol) < Q) ++bits_per_symbol;
    in += frame * (size_t)n * (in_bits ? bits_per_symbol : Q);
    pch += frame * (size_t)n * Q;
    rmsg += frame * (size_t)2 * E * Q;       // two copies: R of the previous and of this iteration
    symbols += frame * (size_t)n;
    const Group<Q> g;
    const int groups = blockDim.x / Group<Q>::T;
    __syncthreads();                          // field tables

    unsigned bad = 0u;                        // this thread loaded a non-finite LLR
    for (int v = g.id; v < n; v += groups) {  // Pch_v(a) = exp(-(L - min L)) / sum
        float x[R];
#pragma unroll
        for (int r = 0; r < R; ++r) x[r] = nb::channel_llr(in, in_bits, bits_per_symbol, Q, v, g.element(r), bad);
        float mn = x[0];
#pragma unroll
        for (int r = 1; r < R; ++r) mn = fminf(mn, x[r]);
        mn = g.min(mn);
        float s = 0.0f;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            x[r] = expf(mn - x[r]);
            s += x[r];
        }
        const float inv = 1.0f / g.sum(s);
#pragma unroll
        for (int r = 0; r < R; ++r) x[r] *= inv;
        store_run<R>(pch + (size_t)v * Q + g.element(0), x);
    }
    const unsigned char flags = __syncthreads_or(bad) ? llr::kBadLlrFlag : 0;

    const int xm = tab.exp[tab.log[Q / 2] + tab.log[2]];   // x^m = x^(m-1) x, reduced
    const int meta_words = (dmax * (1 + dvmax) + 3) & ~3;
    int* meta = reinterpret_cast<int*>(work + (size_t)g.id * (meta_words + (dmax + 1) * Q));
    float* fst = reinterpret_cast<float*>(meta + meta_words);
    for (int it = 1; it <= max_iter; ++it) {
        const float* rin = rmsg + (size_t)(it & 1) * E * Q;
        float* rout = rmsg + (size_t)((it + 1) & 1) * E * Q;
        for (int row = g.id; row < m; row += groups) {
            const int rb = row_ptr[row];
            check_row<Q>(g, xm, meta, fst, row_ptr[row + 1] - rb, rb, dvmax - 1, edge_col, edge_h,
                         edge_other, pch, rin, rout, it == 1);
        }
        __syncthreads();
        if (early_stop || it == max_iter) {
            decide<Q>(g, groups, pch, rout, vn_ptr, vn_edge, sym, n);
            __syncthreads();
            if (nb::finish_frame(tab, sym, it, max_iter, early_stop, row_ptr, edge_col, edge_h, n, m,
                                 symbols, iterations + frame, valid + frame, flags)) {
                return;
            }
        }
    }
}

}  // namespace

#define NB_FFTSPA_KERNEL(Q)                                                                          \
    extern "C" __global__ void __launch_bounds__(kMaxThreads, 2) nb_fftspa_q##Q(                     \
        const float* in, int in_bits, float* pch, float* rmsg, unsigned char* symbols, int* iterations, \
        unsigned char* valid, const unsigned char* gexp, const short* glog, const int* row_ptr,      \
        const int* edge_col, const unsigned char* edge_h, const int* edge_other, const int* vn_ptr,  \
        const int* vn_edge, int n, int m, int E, int dmax, int dvmax, int max_iter, int early_stop)  \
    {                                                                                                \
        fftspa_decode<Q>(in, in_bits, pch, rmsg, symbols, iterations, valid, gexp, glog, row_ptr,    \
                         edge_col, edge_h, edge_other, vn_ptr, vn_edge, n, m, E, dmax, dvmax,        \
                         max_iter, early_stop);                                                      \
    }

NB_FFTSPA_KERNEL(4)
NB_FFTSPA_KERNEL(8)
NB_FFTSPA_KERNEL(16)
NB_FFTSPA_KERNEL(32)
NB_FFTSPA_KERNEL(64)
NB_FFTSPA_KERNEL(128)
NB_FFTSPA_KERNEL(256)
