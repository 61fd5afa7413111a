// GF(q) Min-Max decoding (q = 4 .. 256), flooding and block-layered, all iterations of a
// frame in one thread block and one launch.
//
// Papers:
//  * 003 (Min-Max on GPU): Algorithm 1 (flooding: T = Lch + sum_m R_mn, Q = T - R,
//    normalized so min_a Q(a) = 0) and Algorithm 2 (forward-backward check update),
//    section IV: forward/backward metrics in shared memory, several threads per check,
//    GF arithmetic by tables in shared memory, coalesced messages;
//  * 000 (block-layered modified Min-Max, MMMA): Algorithm 1 (layers = the q-1 rows of a
//    base-matrix row, Q = L - R_old, L = Q + R_new), the forward and the backward
//    recursions computed at once, and the merger of eq. 8-10 done on the already
//    multiplied metrics, so it needs no GF multiplication.
//
// Check update of a row with neighbours n_0..n_{d-1}, coefficients h_i (CSR order):
//    Qh_i(a) = Q_i(a / h_i)          (scattered into shared memory as Qh_i(h_i a) = Q_i(a))
//    F_0 = Qh_0,       F_s = F_{s-1} (*) Qh_s          s = 1..d-2     (forward half)
//    B_{d-1} = Qh_{d-1}, B_t = B_{t+1} (*) Qh_t        t = d-2..1     (backward half)
//    M_0 = B_1, M_{d-1} = F_{d-2}, M_i = F_{i-1} (*) B_{i+1}
//    R_i(a) = M_i(h_i a);   layered: L_i(a) = Qh_i(h_i a) + R_i(a)  (= Q_i(a) + R_i(a))
// with the Min-Max convolution  (x (*) y)(c) = min_{a + b = c} max(x(a), y(b)).
// min and max are exact, and every addition and subtraction is the one of
// gpuldpc.decoders.reference_nb in the same order, so the decisions equal the
// reference's bit for bit.
//
// Threads: a *worker* of 2P threads per check row (P = min(q/4, 32)); the first P
// threads run the forward recursion, the other P the backward one (one instruction stream:
// the operands are selected per half, not branched on), then each half does half of the
// merges in the same number of steps.  A thread owns 4 consecutive outputs c = x0..x0+3
// of a convolution (two such quads for q = 256): for y0 = 0, 4, .., q-4 one 16-byte
// broadcast load of x(y0..y0+3) and one 16-byte load of y((x0 ^ y0) .. +3) serve 16 max
// and 8 three-input min, since (x0 + c) ^ (y0 + j) = (x0 ^ y0) + (c ^ j) for c, j < 4
// (integer min/max on the non-negative floats' bit patterns, see minmax_conv).  Workers of
// 64 threads (q >= 128) synchronize with named barriers 1..15, smaller ones with
// __syncwarp.
//
// The trellis Min-Max rule (nb_tmm_q<Q>, algorithm "tmm"; Lacruz, Garcia-Herrero, Declercq,
// Valls, "Simplified trellis min-max decoder architecture for nonbinary LDPC codes", IEEE
// TVLSI 23(9) 2015, §II-B the delta-domain trellis and its extra column of at most two
// deviations, §III the check node from the first and second minimum of each trellis row)
// replaces the two recursions and the merges by, in the multiplied domain:
//    z_i = argmin_x Qh_i(x) (smallest x), beta = sum_i z_i, dQ_i(eta) = Qh_i(eta + z_i)
//    m1, p, m2, p2 (eta): first and second minimum of dQ_.(eta) over the columns, and where
//    E(eta) = min(m1(eta), min_{eta'+eta''=eta, eta'<eta'', p(eta') != p(eta'')} max(m1(eta'), m1(eta'')))
//             with its path {c1, c2};  A_x(eta): the same from every row's best value off column x
//    dR_i(eta) = i == c1 ? A_c1 : i == c2 ? A_c2 : E (eta != 0), dR_i(0) = 0
//    R_i(a) = alpha * dR_i(h_i a + beta + z_i);   layered: L_i(a) = Q_i(a) + R_i(a)
// (python/gpuldpc/decoders/reference_tmm.py, steps 1-7: the same comparisons and the one
// product, so the decisions equal the reference's bit for bit).  A worker's threads: z_i
// with the normalization (a half per column), then one thread per row eta for the minima,
// E and A, then the emit of the Min-Max path (a half per column, a quad per thread).  Cost per
// row: O(d q) + 3 (q-1)(q-2)/2 pair comparisons against Min-Max's 3 (d-2) q^2.
// The same kernel template: check_row<Q, kTrellis> switches the rule at compile time.
//
// Messages per frame: posteriors L (layered) or T (flooding) [n][q], channel Lch [n][q]
// (flooding), check-to-variable R [E][q] (edge = CSR index).  The q values of one
// message are contiguous and read by a worker's threads as float4: coalesced.  R is not
// read in the first iteration (it is 0 there), so nothing needs zeroing.
#include "nb_common.cuh"

namespace {

constexpr int kMaxThreads = 512;

template <int Q>
struct Shape {
    static constexpr int P = (Q / 4 < 32) ? Q / 4 : 32;   // threads per half
    static constexpr int G = Q / (4 * P);                  // output quads per thread
    static constexpr int W = 2 * P;                        // threads per worker
};

// Integer view of a message value.  Every vector the convolutions see is a normalized Q
// (Q' - min Q' >= +0, never -0: x - x = +0) or a min/max of such values, so all are
// non-negative floats (+inf included), whose bit patterns order as int32 exactly as the
// floats do; min and max return one of their operands, so the integer results are the
// float results bit for bit.  sm_90 has a three-input integer min (VIMNMX3, DPX).
__device__ __forceinline__ int imax(int a, int b) { return max(a, b); }
__device__ __forceinline__ int imin3(int a, int b, int c) { return __vimin3_s32(a, b, c); }

// out = x (*) y over the thread's quads; x, y, out: q non-negative floats in shared memory.
// Per output and pair of inputs: two max and one three-input min (1.5 instead of 2).
template <int Q>
__device__ __forceinline__ void minmax_conv(const float* __restrict__ x, const float* __restrict__ y,
                                            float* __restrict__ out, int lt)
{
    constexpr int P = Shape<Q>::P, G = Shape<Q>::G;
    int acc[G][4];
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[g][c] = __float_as_int(nb::inf());
#pragma unroll(Q <= 32 ? Q / 4 : 8)
    for (int y0 = 0; y0 < Q; y0 += 4) {
        const int4 xv = *reinterpret_cast<const int4*>(x + y0);
        const int xa[4] = {xv.x, xv.y, xv.z, xv.w};
#pragma unroll
        for (int g = 0; g < G; ++g) {
            const int4 yv = *reinterpret_cast<const int4*>(y + ((4 * (lt + g * P)) ^ y0));
            const int yb[4] = {yv.x, yv.y, yv.z, yv.w};
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                acc[g][c] = imin3(acc[g][c], imax(xa[0], yb[c]), imax(xa[1], yb[c ^ 1]));
                acc[g][c] = imin3(acc[g][c], imax(xa[2], yb[c ^ 2]), imax(xa[3], yb[c ^ 3]));
            }
        }
    }
#pragma unroll
    for (int g = 0; g < G; ++g) {
        *reinterpret_cast<int4*>(out + 4 * (lt + g * P)) =
            make_int4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
    }
}

template <int Q>
struct Worker {
    static constexpr int P = Shape<Q>::P, W = Shape<Q>::W;
    int id, half, lt;
    unsigned half_mask, worker_mask;

    __device__ Worker()
    {
        id = threadIdx.x / W;
        const int t = threadIdx.x % W;
        half = t / P;
        lt = t % P;
        const int lane = threadIdx.x % 32;
        half_mask = P >= 32 ? 0xffffffffu : ((1u << P) - 1u) << (lane & ~(P - 1));
        worker_mask = W >= 32 ? 0xffffffffu : ((1u << W) - 1u) << (lane & ~(W - 1));
    }
    __device__ __forceinline__ void sync_half() const { __syncwarp(half_mask); }
    __device__ __forceinline__ void sync_worker() const
    {
        if constexpr (W > 32) {
            asm volatile("bar.sync %0, %1;" ::"r"(1 + id), "r"(W) : "memory");
        } else {
            __syncwarp(worker_mask);
        }
    }
    __device__ __forceinline__ float min_half(float v) const
    {
#pragma unroll
        for (int o = 1; o < P; o <<= 1) v = fminf(v, __shfl_xor_sync(half_mask, v, o));
        return v;
    }
    __device__ __forceinline__ int min_half(int v) const
    {
#pragma unroll
        for (int o = 1; o < P; o <<= 1) v = min(v, __shfl_xor_sync(half_mask, v, o));
        return v;
    }
};

// Steps 4/5 of the trellis rule for row eta over the rows' minima (shared memory): the least
// of one deviation and the pairs eta' + eta'' = eta (eta' < eta'', distinct columns), the
// columns of the pair taken; kAvoid: every row's best value off column x (m2 at p2 where p = x).
template <int Q, bool kAvoid>
__device__ __forceinline__ void two_deviations(const float* __restrict__ m1, const int* __restrict__ p,
                                               const float* __restrict__ m2, const int* __restrict__ p2,
                                               int eta, int x, float& best, int& c1, int& c2)
{
    const auto off = [&](int e, float& v, int& col) {
        v = m1[e];
        col = p[e];
        if (kAvoid && col == x) {
            v = m2[e];
            col = p2[e];
        }
    };
    off(eta, best, c1);
    c2 = c1;
    for (int e1 = 1; e1 < Q; ++e1) {
        const int e2 = eta ^ e1;
        if (e1 >= e2) continue;
        float v1, v2;
        int k1, k2;
        off(e1, v1, k1);
        off(e2, v2, k2);
        const float cand = fmaxf(v1, v2);
        if (cand < best && k1 != k2) {
            best = cand;
            c1 = k1;
            c2 = k2;
        }
    }
}

// The trellis rule's steps 2-7 for one row (z_i in zs, Qh_i in qh, normalized): the minima of
// each trellis row, E and A_c1, A_c2 (one thread a row eta), then R (and L when layered).
// Shared memory after Qh: m1, m2, E, A_c1, A_c2, then p, p2, c1, c2 ([Q] each).
template <int Q>
__device__ void trellis_rule(const Worker<Q>& wk, const nb::Tables& tab, const int2* __restrict__ meta,
                             const int* __restrict__ zs, float* __restrict__ qh, int d, int rb,
                             float* __restrict__ post, float* __restrict__ r, bool layered, float alpha)
{
    constexpr int P = Shape<Q>::P, G = Shape<Q>::G, W = Shape<Q>::W;
    float* m1 = qh + d * Q;
    float* m2 = m1 + Q;
    float* extra = m2 + Q;
    float* avoid1 = extra + Q;
    float* avoid2 = avoid1 + Q;
    int* p = reinterpret_cast<int*>(avoid2 + Q);
    int* p2 = p + Q;
    int* c1 = p2 + Q;
    int* c2 = c1 + Q;
    const int t = wk.half * P + wk.lt;
    for (int eta = 1 + t; eta < Q; eta += W) {      // steps 2-3, columns in order (ties: smallest)
        float a1 = nb::inf(), a2 = nb::inf();
        int b1 = 0, b2 = 0;
        for (int i = 0; i < d; ++i) {
            const float v = qh[i * Q + (eta ^ zs[i])];
            if (v < a1) {
                a2 = a1; b2 = b1; a1 = v; b1 = i;
            } else if (v < a2) {
                a2 = v; b2 = i;
            }
        }
        m1[eta] = a1; p[eta] = b1; m2[eta] = a2; p2[eta] = b2;
    }
    wk.sync_worker();
    for (int eta = 1 + t; eta < Q; eta += W) {      // steps 4-5
        float e, a1, a2;
        int x1, x2, u1, u2;
        two_deviations<Q, false>(m1, p, m2, p2, eta, -1, e, x1, x2);
        two_deviations<Q, true>(m1, p, m2, p2, eta, x1, a1, u1, u2);
        two_deviations<Q, true>(m1, p, m2, p2, eta, x2, a2, u1, u2);
        extra[eta] = e; avoid1[eta] = a1; avoid2[eta] = a2; c1[eta] = x1; c2[eta] = x2;
    }
    wk.sync_worker();
    int beta = 0;
    for (int i = 0; i < d; ++i) beta ^= zs[i];
    for (int i = wk.half; i < d; i += 2) {          // steps 6-7
        const int e = rb + i, v = meta[i].x, log_h = meta[i].y, s = beta ^ zs[i];
        const float* qi = qh + i * Q;
#pragma unroll
        for (int g = 0; g < G; ++g) {
            const int a0 = 4 * (wk.lt + g * P);
            float rn[4], ln[4];
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const int k2 = nb::gf_mul_log(tab, log_h, a0 + c);
                const int eta = k2 ^ s;
                const float dr = eta == 0 ? 0.f : c1[eta] == i ? avoid1[eta] : c2[eta] == i ? avoid2[eta] : extra[eta];
                rn[c] = __fmul_rn(dr, alpha);
                ln[c] = qi[k2] + rn[c];
            }
            *reinterpret_cast<float4*>(r + (size_t)e * Q + a0) = make_float4(rn[0], rn[1], rn[2], rn[3]);
            if (layered) {
                *reinterpret_cast<float4*>(post + (size_t)v * Q + a0) = make_float4(ln[0], ln[1], ln[2], ln[3]);
            }
        }
    }
}

// The Min-Max rule for one row (Qh_i in qh, normalized): the two recursions, the merges and
// R (and L when layered).  Shared memory after Qh: F_1..F_{d-2}, B_1..B_{d-2}, two merge buffers.
template <int Q>
__device__ void minmax_rule(const Worker<Q>& wk, const nb::Tables& tab, const int2* __restrict__ meta,
                            float* __restrict__ qh, int d, int rb, float* __restrict__ post,
                            float* __restrict__ r, bool layered)
{
    constexpr int P = Shape<Q>::P, G = Shape<Q>::G;
    float* fw = qh + d * Q;                  // F_1 .. F_{d-2}
    float* bw = fw + (d - 2) * Q;            // B_1 .. B_{d-2}
    float* mbuf = bw + (d - 2) * Q;          // one merge output per half
    auto F = [&](int s) { return s == 0 ? qh : fw + (s - 1) * Q; };
    auto B = [&](int t) { return t == d - 1 ? qh + (d - 1) * Q : bw + (t - 1) * Q; };
    // Forward (half 0) and backward (half 1) at once.  The halves of a warp run one
    // instruction stream: operands are selected, not branched on.
    for (int s = 1; s <= d - 2; ++s) {
        const bool fwd = wk.half == 0;
        const int t = fwd ? s : d - 1 - s;   // F_s = F_{s-1} (*) Qh_s,  B_t = B_{t+1} (*) Qh_t
        minmax_conv<Q>(fwd ? F(s - 1) : B(t + 1), qh + t * Q, fwd ? F(s) : B(t), wk.lt);
        wk.sync_half();
    }
    wk.sync_worker();
    // Merges M_i = F_{i-1} (*) B_{i+1}, i = 1 .. d-2: half 0 takes i = 1 .. steps, half 1
    // i = steps+1 .. 2 steps (for odd d one convolution past d-2 runs unused, so that both
    // halves stay converged); a last step without convolution emits M_0 = B_1 (half 0) and
    // M_{d-1} = F_{d-2} (half 1).  3(d-2) convolutions per row in all.
    const int steps = (d - 1) / 2;
    float* mine = mbuf + wk.half * Q;
    for (int k = 0; k <= steps; ++k) {
        const bool copy = k == steps;       // the same for both halves: no divergence
        const int i = copy ? wk.half * (d - 1) : 1 + k + wk.half * steps;
        if (!copy) {
            const int ic = min(i, d - 2);
            minmax_conv<Q>(F(ic - 1), B(ic + 1), mine, wk.lt);
            wk.sync_half();
        }
        const float* m = !copy ? mine : wk.half == 0 ? B(1) : F(d - 2);
        if (copy || i <= d - 2) {
            const int e = rb + i;
            const int v = meta[i].x;
            const int log_h = meta[i].y;
            const float* qi = qh + i * Q;
#pragma unroll
            for (int g = 0; g < G; ++g) {
                const int a0 = 4 * (wk.lt + g * P);
                float rn[4], ln[4];
#pragma unroll
                for (int c = 0; c < 4; ++c) {
                    const int k2 = nb::gf_mul_log(tab, log_h, a0 + c);
                    rn[c] = m[k2];
                    ln[c] = qi[k2] + rn[c];
                }
                *reinterpret_cast<float4*>(r + (size_t)e * Q + a0) = make_float4(rn[0], rn[1], rn[2], rn[3]);
                if (layered) {
                    *reinterpret_cast<float4*>(post + (size_t)v * Q + a0) =
                        make_float4(ln[0], ln[1], ln[2], ln[3]);
                }
            }
        }
        wk.sync_half();
    }
}

// One check row: Q, the two recursions, the merges and R (and L when layered); kTrellis:
// Q and z, then trellis_rule.
//
// Shared memory of a worker: meta[dmax rounded up to even] (column, log h of each edge of the
// row), (kTrellis: zs[dmax rounded up to 4], the hard decisions z_i), then
// Qh_0..Qh_{d-1}, F_1..F_{d-2}, B_1..B_{d-2} and one merge buffer per half (kTrellis: after
// Qh the trellis rule's 5 float and 4 int rows, or d q floats if more); the area after Qh
// first stages Q' = L - R_old, so that the loads of every edge are issued before any
// reduction waits on them.
template <int Q, bool kTrellis>
__device__ void check_row(const Worker<Q>& wk, const nb::Tables& tab, int2* __restrict__ meta,
                          int* __restrict__ zs, float* __restrict__ vec, int d, int rb,
                          const int* __restrict__ edge_col, const unsigned char* __restrict__ edge_h,
                          float* __restrict__ post, float* __restrict__ r, bool first, bool layered,
                          float alpha)
{
    constexpr int P = Shape<Q>::P, G = Shape<Q>::G, W = Shape<Q>::W;
    float* qh = vec;                         // Qh_0 .. Qh_{d-1}
    float* stage = qh + d * Q;               // Q' of every edge (Min-Max: (2d - 2) q >= d q floats)

    for (int i = wk.half * P + wk.lt; i < d; i += W) {
        meta[i] = make_int2(edge_col[rb + i], tab.log[edge_h[rb + i]]);
    }
    wk.sync_worker();
#pragma unroll 4
    for (int i = wk.half; i < d; i += 2) {   // Q' = L - R_old (loads of all edges in flight)
        const int v = meta[i].x;
#pragma unroll
        for (int g = 0; g < G; ++g) {
            const int a0 = 4 * (wk.lt + g * P);
            const float4 l = *reinterpret_cast<const float4*>(post + (size_t)v * Q + a0);
            const float4 ro = first ? make_float4(0.f, 0.f, 0.f, 0.f)
                                    : *reinterpret_cast<const float4*>(r + (size_t)(rb + i) * Q + a0);
            *reinterpret_cast<float4*>(stage + i * Q + a0) =
                make_float4(l.x - ro.x, l.y - ro.y, l.z - ro.z, l.w - ro.w);
        }
    }
    for (int i = wk.half; i < d; i += 2) {   // Q = Q' - min Q', scattered to Qh_i(h a) = Q(a)
        const int log_h = meta[i].y;
        float x[G][4];
        float mn = nb::inf();
#pragma unroll
        for (int g = 0; g < G; ++g) {
            const float4 y = *reinterpret_cast<const float4*>(stage + i * Q + 4 * (wk.lt + g * P));
            x[g][0] = y.x; x[g][1] = y.y; x[g][2] = y.z; x[g][3] = y.w;
#pragma unroll
            for (int c = 0; c < 4; ++c) mn = fminf(mn, x[g][c]);
        }
        mn = wk.min_half(mn);
        float* dst = qh + i * Q;
        int z = Q;                           // kTrellis: the smallest x with Qh_i(x) = 0
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const int k2 = nb::gf_mul_log(tab, log_h, 4 * (wk.lt + g * P) + c);
                const float y = x[g][c] - mn;
                dst[k2] = y;
                if (kTrellis && y == 0.f) z = min(z, k2);
            }
        if constexpr (kTrellis) {
            z = wk.min_half(z);
            if (wk.lt == 0) zs[i] = z;
        }
    }
    wk.sync_worker();
    if constexpr (kTrellis) {
        trellis_rule<Q>(wk, tab, meta, zs, qh, d, rb, post, r, layered, alpha);
    } else {
        minmax_rule<Q>(wk, tab, meta, qh, d, rb, post, r, layered);
    }
    wk.sync_worker();                        // the next row overwrites Qh
}

// Flooding posterior T = Lch + R_1 + R_2 + ... (each variable's edges in increasing row).
template <int Q>
__device__ void variable_sums(const float* __restrict__ chan, const float* __restrict__ r,
                              float* __restrict__ post, const int* __restrict__ vn_ptr,
                              const int* __restrict__ vn_edge, int n)
{
    constexpr int QV = Q / 4;
#pragma unroll 2
    for (int k = threadIdx.x; k < n * QV; k += blockDim.x) {
        const int v = k / QV, a0 = 4 * (k % QV);
        float4 t = *reinterpret_cast<const float4*>(chan + (size_t)v * Q + a0);
        const int j0 = vn_ptr[v], j1 = vn_ptr[v + 1];
        int j = j0;
        for (; j + 3 <= j1; j += 3) {        // three loads in flight (column weight 3 is common)
            const float4 x0 = *reinterpret_cast<const float4*>(r + (size_t)vn_edge[j] * Q + a0);
            const float4 x1 = *reinterpret_cast<const float4*>(r + (size_t)vn_edge[j + 1] * Q + a0);
            const float4 x2 = *reinterpret_cast<const float4*>(r + (size_t)vn_edge[j + 2] * Q + a0);
            t.x += x0.x; t.y += x0.y; t.z += x0.z; t.w += x0.w;
            t.x += x1.x; t.y += x1.y; t.z += x1.z; t.w += x1.w;
            t.x += x2.x; t.y += x2.y; t.z += x2.z; t.w += x2.w;
        }
        for (; j < j1; ++j) {
            const float4 x = *reinterpret_cast<const float4*>(r + (size_t)vn_edge[j] * Q + a0);
            t.x += x.x; t.y += x.y; t.z += x.z; t.w += x.w;
        }
        *reinterpret_cast<float4*>(post + (size_t)v * Q + a0) = t;
    }
}

// sym[v] = argmin_a post[v][a], the smallest a on ties.
template <int Q>
__device__ void decide(const float* __restrict__ post, unsigned char* sym, int n)
{
    for (int v = threadIdx.x; v < n; v += blockDim.x) {
        const float4* p = reinterpret_cast<const float4*>(post + (size_t)v * Q);
        float best = nb::inf();
        int arg = 0;
#pragma unroll 4
        for (int k = 0; k < Q / 4; ++k) {
            const float4 x = p[k];
            if (x.x < best) { best = x.x; arg = 4 * k; }
            if (x.y < best) { best = x.y; arg = 4 * k + 1; }
            if (x.z < best) { best = x.z; arg = 4 * k + 2; }
            if (x.w < best) { best = x.w; arg = 4 * k + 3; }
        }
        sym[v] = (unsigned char)arg;
    }
}

// Soft output (gpuldpc.soft): the frame's posterior costs normalised, soft[v][a] = post[v][a] -
// min_b post[v][b] (one float32 subtraction, gpuldpc.soft.normalized_costs), 0 at the decision.
template <int Q>
__device__ void write_costs(const float* __restrict__ post, float* __restrict__ soft, int n)
{
    for (int v = threadIdx.x; v < n; v += blockDim.x) {
        const float4* p = reinterpret_cast<const float4*>(post + (size_t)v * Q);
        float4* s = reinterpret_cast<float4*>(soft + (size_t)v * Q);
        float low = nb::inf();
#pragma unroll 4
        for (int k = 0; k < Q / 4; ++k) {
            const float4 x = p[k];
            low = fminf(low, fminf(fminf(x.x, x.y), fminf(x.z, x.w)));
        }
#pragma unroll 4
        for (int k = 0; k < Q / 4; ++k) {
            const float4 x = p[k];
            s[k] = make_float4(x.x - low, x.y - low, x.z - low, x.w - low);
        }
    }
}

template <int Q, bool kTrellis>
__device__ void minmax_decode(const float* __restrict__ in, int in_bits, float* __restrict__ post,
                              float* __restrict__ chan, float* __restrict__ r,
                              unsigned char* __restrict__ symbols, int* __restrict__ iterations,
                              unsigned char* __restrict__ valid, const unsigned char* __restrict__ gexp,
                              const short* __restrict__ glog, const int* __restrict__ row_ptr,
                              const int* __restrict__ edge_col, const unsigned char* __restrict__ edge_h,
                              const int* __restrict__ group_ptr, const int* __restrict__ group_rows,
                              int groups, const int* __restrict__ vn_ptr, const int* __restrict__ vn_edge,
                              int n, int m, int E, int dmax, int max_iter, int early_stop, int flooding,
                              float* __restrict__ soft, float alpha)
{
    extern __shared__ float4 smem4[];
    unsigned char* smem = reinterpret_cast<unsigned char*>(smem4);
    const nb::Tables tab = nb::load_tables(smem, gexp, glog, Q);
    unsigned char* sym = smem + nb::table_bytes(Q);
    float* work = reinterpret_cast<float*>(sym + ((n + 15) & ~15));

    const size_t frame = blockIdx.x;
    int bits_per_symbol = 0;
    while ((1 << bits_per_symbol) < Q) ++bits_per_symbol;
    in += frame * (size_t)n * (in_bits ? bits_per_symbol : Q);
    post += frame * (size_t)n * Q;
    r += frame * (size_t)E * Q;
    if (flooding) chan += frame * (size_t)n * Q;
    symbols += frame * (size_t)n;
    __syncthreads();                         // field tables
    unsigned bad = 0u;                       // this thread loaded a non-finite LLR
    for (int k = threadIdx.x; k < n * Q; k += blockDim.x) {
        const float l = nb::channel_llr(in, in_bits, bits_per_symbol, Q, k / Q, k % Q, bad);
        post[k] = l;
        if (flooding) chan[k] = l;
    }
    const unsigned char flags = __syncthreads_or(bad) ? llr::kBadLlrFlag : 0;

    const Worker<Q> wk;
    const int workers = blockDim.x / Worker<Q>::W;
    const int meta_slots = (dmax + 1) & ~1;  // keeps the vectors 16-byte aligned
    const int z_slots = kTrellis ? (dmax + 3) & ~3 : 0;
    const int vec_floats = kTrellis ? dmax * Q + max(dmax * Q, 9 * Q) : (3 * dmax - 2) * Q;
    int2* meta = reinterpret_cast<int2*>(work + (size_t)wk.id * (vec_floats + 2 * meta_slots + z_slots));
    int* zs = reinterpret_cast<int*>(meta + meta_slots);
    float* vec = reinterpret_cast<float*>(zs + z_slots);
    for (int it = 1; it <= max_iter; ++it) {
        for (int g = 0; g < groups; ++g) {
            if (wk.id < workers) {
                for (int k = group_ptr[g] + wk.id; k < group_ptr[g + 1]; k += workers) {
                    const int row = group_rows[k];
                    const int rb = row_ptr[row];
                    check_row<Q, kTrellis>(wk, tab, meta, zs, vec, row_ptr[row + 1] - rb, rb, edge_col,
                                           edge_h, post, r, it == 1, !flooding, alpha);
                }
            }
            __syncthreads();
        }
        if (flooding) {
            variable_sums<Q>(chan, r, post, vn_ptr, vn_edge, n);
            __syncthreads();
        }
        if (early_stop || it == max_iter) {
            decide<Q>(post, sym, n);
            __syncthreads();
            if (nb::finish_frame(tab, sym, it, max_iter, early_stop, row_ptr, edge_col, edge_h, n, m,
                                 symbols, iterations + frame, valid + frame, flags)) {
                if (soft) write_costs<Q>(post, soft + frame * (size_t)n * Q, n);
                return;
            }
        }
    }
}

}  // namespace

// nb_minmax_q<Q> (forward-backward Min-Max; alpha unused) and nb_tmm_q<Q> (trellis Min-Max):
// one parameter list, the rule picked at compile time.
#define NB_RULE_KERNEL(NAME, Q, TRELLIS)                                                            \
    extern "C" __global__ void __launch_bounds__(kMaxThreads, 2) NAME(                              \
        const float* in, int in_bits, float* post, float* chan, float* r, unsigned char* symbols,   \
        int* iterations, unsigned char* valid, const unsigned char* gexp, const short* glog,        \
        const int* row_ptr, const int* edge_col, const unsigned char* edge_h, const int* group_ptr, \
        const int* group_rows, int groups, const int* vn_ptr, const int* vn_edge, int n, int m,     \
        int E, int dmax, int max_iter, int early_stop, int flooding, float* soft, float alpha)      \
    {                                                                                               \
        minmax_decode<Q, TRELLIS>(in, in_bits, post, chan, r, symbols, iterations, valid, gexp,     \
                                  glog, row_ptr, edge_col, edge_h, group_ptr, group_rows, groups,   \
                                  vn_ptr, vn_edge, n, m, E, dmax, max_iter, early_stop, flooding,   \
                                  soft, alpha);                                                     \
    }
#define NB_MINMAX_KERNEL(Q)                        \
    NB_RULE_KERNEL(nb_minmax_q##Q, Q, false)       \
    NB_RULE_KERNEL(nb_tmm_q##Q, Q, true)

NB_MINMAX_KERNEL(4)
NB_MINMAX_KERNEL(8)
NB_MINMAX_KERNEL(16)
NB_MINMAX_KERNEL(32)
NB_MINMAX_KERNEL(64)
NB_MINMAX_KERNEL(128)
NB_MINMAX_KERNEL(256)
