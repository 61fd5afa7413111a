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
// product, so the decisions equal the reference's bit for bit).  A worker is TrellisParts parts
// of P threads (4 up to GF(32): a warp a row; 2 above): z_i with the normalization (a part per
// column), then K = ceil((q-1)/W) rows eta a thread (one at GF(32)), interleaved, for the
// minima (reading Qh_i through one exp look-up, Q_i being kept unpermuted), E and A (the trellis
// rows twice: an int2 {m1, p} a row for pass 1, an int4 a row for pass 2; the pairs eta' < eta''
// listed without the reference's skipped half: pair_low), then the emit of the Min-Max path (a part
// per column, a quad per thread, each output two word look-ups: its path, then its value).  Cost per
// row: O(d q) + (q-1)(q-2)/2 pair comparisons for E and as many for A_c1 and A_c2 together,
// against Min-Max's 3 (d-2) q^2.
// "tmm1" (nb_tmm1_q<Q>, reference_tmm.py "Pairs from first minima"): the same with A_x's pairs from
// first minima (a pair whose row has its first minimum at x is dropped; the one deviation keeps
// m2 at p2), so every step-5 pair is one of step 4's: E, A_c1 and A_c2 come from one pass over the
// int2 rows (first_minima_pairs), and a thread keeps the second minimum of its own rows only, in
// registers.
// The same kernel template: check_row<Q, Rule> switches the rule at compile time.
//
// Messages per frame: posteriors L (layered) or T (flooding) [n][q], channel Lch [n][q]
// (flooding), check-to-variable R [E][q] (edge = CSR index).  The q values of one
// message are contiguous and read by a worker's threads as float4: coalesced.  R is not
// read in the first iteration (it is 0 there), so nothing needs zeroing.
// R is read and written with the streaming cache hints (__ldcs / __stcs, evict first): a row's R
// comes back only an iteration later, after every resident frame has passed hundreds of MB
// through the 50 MB L2, so it would only push out the posteriors, which the next layer reads
// (H200, gf32-837-726 T-MM: +3 %, MMMA gf32-744-653 +2 %; docs/gpu_nb.md).
#include "nb_common.cuh"

namespace {

constexpr int kMaxThreads = 512;

template <int Q>
struct Shape {
    static constexpr int P = (Q / 4 < 32) ? Q / 4 : 32;   // threads per part of a worker
    static constexpr int G = Q / (4 * P);                  // output quads per thread
};
// A worker (one check row) is PARTS parts of P threads: the Min-Max rule's two halves (forward,
// backward), or the trellis rule's parts, each taking every PARTS-th edge of the row in the edge
// loops: 4 parts up to GF(32) (a warp a row, one row eta a thread in steps 2-5), 2 above.
template <int Q>
constexpr int TrellisParts = Q <= 32 ? 4 : 2;

// The check rule of a kernel: Min-Max (forward-backward), T-MM, T-MM whose step-5 pairs take first
// minima only ("tmm1").
enum class Rule { kMinMax, kTrellis, kFirstMinima };

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

template <int Q, int PARTS>
struct Worker {
    static constexpr int P = Shape<Q>::P, W = PARTS * P;
    static constexpr int G = Shape<Q>::G;
    int id, part, lt, t;                     // worker, part, lane in the part, thread in the worker
    unsigned part_mask, worker_mask;
    int log_a[G][4];                         // log of the thread's elements a = 4 (lt + g P) + c

    __device__ explicit Worker(const nb::Tables& tab)
    {
        id = threadIdx.x / W;
        t = threadIdx.x % W;
        part = t / P;
        lt = t % P;
        const int lane = threadIdx.x % 32;
        part_mask = P >= 32 ? 0xffffffffu : ((1u << P) - 1u) << (lane & ~(P - 1));
        worker_mask = W >= 32 ? 0xffffffffu : ((1u << W) - 1u) << (lane & ~(W - 1));
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
            for (int c = 0; c < 4; ++c) log_a[g][c] = tab.log[4 * (lt + g * P) + c];
    }
    // h a for the thread's element (g, c) and h given by its logarithm: one table look-up
    // (nb::gf_mul_log with log a already at hand).
    __device__ __forceinline__ int mul(const nb::Tables& tab, int log_h, int g, int c) const
    {
        return (g == 0 && c == 0 && lt == 0) ? 0 : tab.exp[log_h + log_a[g][c]];
    }
    __device__ __forceinline__ void sync_part() const { __syncwarp(part_mask); }
    __device__ __forceinline__ void sync_worker() const
    {
        if constexpr (W > 32) {
            asm volatile("bar.sync %0, %1;" ::"r"(1 + id), "r"(W) : "memory");
        } else {
            __syncwarp(worker_mask);
        }
    }
    __device__ __forceinline__ float min_part(float v) const
    {
#pragma unroll
        for (int o = 1; o < P; o <<= 1) v = fminf(v, __shfl_xor_sync(part_mask, v, o));
        return v;
    }
    __device__ __forceinline__ int min_part(int v) const
    {
#pragma unroll
        for (int o = 1; o < P; o <<= 1) v = min(v, __shfl_xor_sync(part_mask, v, o));
        return v;
    }
};

// Trellis rows (steps 2-3), stored twice: for steps 4-5's first pass (and "tmm1"'s one pass),
// which read each row's first minimum and its column, as an int2 a row {m1, p}: one 8-byte load
// (two planes of words took two loads: tmm1 gf32-837-726 -2.3 %, gf32-620-310 -6 %; T-MM -0.6 %;
// bench/results/h200-nb-tmm1-ab.txt); for T-MM's second pass, which reads all four, as an int4 a row
// {m1, m2, p | p2 << 16, 0}: one load instead of three (gf32-620-310, rows of 6 edges, where steps
// 4-5 weigh most: +2 %; docs/gpu_nb.md).  "tmm1" stores the int2 rows only.
struct TrellisHead {
    float m1;
    int p;
    __device__ __forceinline__ TrellisHead(const int2* __restrict__ heads, int eta)
    {
        const int2 h = heads[eta];
        m1 = __int_as_float(h.x);
        p = h.y;
    }
};

struct TrellisRow {
    float m1, m2;
    int p, p2;
    TrellisRow() = default;
    __device__ __forceinline__ TrellisRow(const int4* __restrict__ rows, int eta)
    {
        const int4 r = rows[eta];
        m1 = __int_as_float(r.x);
        m2 = __int_as_float(r.y);
        p = r.z & 0xffff;
        p2 = r.z >> 16;
    }
    // The row's best value off column x (m1 at p, or m2 at p2 where p = x), and its column.
    __device__ __forceinline__ void off_column(int x, float& v, int& col) const
    {
        v = p == x ? m2 : m1;
        col = p == x ? p2 : p;
    }
};

// eta' of the j-th pair eta' + eta'' = eta with eta' < eta'' (j = 1 .. Q/2-1): eta' and eta'' differ
// in the bits of eta, so eta' < eta'' exactly when eta' has a 0 at eta's highest bit; inserting
// that 0 into j lists those eta' >= 1 in increasing order, each pair once, none skipped (the
// reference's order: it visits eta' = 1 .. q-1 and drops eta' >= eta'').
__device__ __forceinline__ int pair_low(int eta, int j)
{
    const int low = (1 << (31 - __clz(eta))) - 1;
    return (j & low) | ((j & ~low) << 1);
}

// Steps 4-5 for K rows eta of one thread at once (independent chains): E with its path {c1, c2}
// (each candidate one int2 gather a row: m1 and its column; m2 is not used), then A_c1 and A_c2 in
// one pass (an int4 a row); candidates in the reference's order, a later one taken only when strictly
// smaller.  The first pass is first_minima_pair_loop's loop unrolled by 4; through that function
// (unroll 8) T-MM ran 1-3.5 % slower (bench/results/h200-nb-s27-ab.txt, v6).
template <int Q, int K>
__device__ __forceinline__ void two_deviations(const int2* __restrict__ heads, const int4* __restrict__ rows,
                                               const int (&eta)[K], float (&e)[K],
                                               int (&c1)[K], int (&c2)[K], float (&a1)[K], float (&a2)[K])
{
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const TrellisHead t(heads, eta[k]);
        e[k] = t.m1;
        c1[k] = c2[k] = t.p;
    }
#pragma unroll 4
    for (int j = 1; j < Q / 2; ++j) {
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int e1 = pair_low(eta[k], j);
            const TrellisHead x(heads, e1), y(heads, e1 ^ eta[k]);
            const float cand = fmaxf(x.m1, y.m1);
            if (cand < e[k] && x.p != y.p) {
                e[k] = cand;
                c1[k] = x.p;
                c2[k] = y.p;
            }
        }
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const TrellisRow t(rows, eta[k]);
        int col;
        t.off_column(c1[k], a1[k], col);
        t.off_column(c2[k], a2[k], col);
    }
#pragma unroll 4
    for (int j = 1; j < Q / 2; ++j) {
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int e1 = pair_low(eta[k], j);
            const TrellisRow x(rows, e1), y(rows, e1 ^ eta[k]);
            float u, w;
            int ku, kw;
            x.off_column(c1[k], u, ku);
            y.off_column(c1[k], w, kw);
            const float cand1 = fmaxf(u, w);
            if (cand1 < a1[k] && ku != kw) a1[k] = cand1;
            x.off_column(c2[k], u, ku);
            y.off_column(c2[k], w, kw);
            const float cand2 = fmaxf(u, w);
            if (cand2 < a2[k] && ku != kw) a2[k] = cand2;
        }
    }
}

// f(k, cand, p', p'') for each pair eta' + eta'' = eta[k], eta' < eta'' (pair_low's order), from the rows'
// first minima: cand = max(m1(eta'), m1(eta'')), +inf where p(eta') = p(eta'').  Unrolled by 8, not 4 as
// T-MM's pair loops (more loads in flight: tmm1 gf32-837-726 +0.8 %, gf64-1260-630 +3.9 %,
// bench/results/h200-nb-tmm1-ab.txt).
template <int Q, int K, class F>
__device__ __forceinline__ void first_minima_pair_loop(const int2* __restrict__ heads, const int (&eta)[K], F f)
{
#pragma unroll 8
    for (int j = 1; j < Q / 2; ++j) {
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int e1 = pair_low(eta[k], j);
            const TrellisHead x(heads, e1), y(heads, e1 ^ eta[k]);
            f(k, x.p != y.p ? fmaxf(x.m1, y.m1) : nb::inf(), x.p, y.p);
        }
    }
}

// Steps 4-5 of "tmm1" (reference_tmm.py, "Pairs from first minima") for K rows eta of one thread, whose
// own trellis row (m1, p, m2, p2) is in registers, in one pass over the pairs.  Every step-5 pair is
// one of step 4's, so A_x = min(the own row's best value off x, P_x), P_x the smallest pair without
// column x, and P_x of the final path's columns follows the pairs online: with B the best pair so far
// (the first of the smallest, columns {b1, b2}) and P_b1, P_b2, a new pair {x, y} of value v
//    v < B:   P_x <- B where x is not in {b1, b2}, else P_x (B is the smallest of the older pairs,
//             and the older pairs without x are those without b1 or b2 when x is one of them);
//             the same for y; B <- v, {b1, b2} <- {x, y};
//    else:    P_b1 <- min(P_b1, v) where b1 is not in {x, y}; the same for b2.
// E = B with its path where B < m1 (the row's one deviation comes first in the reference's order),
// else m1 with path {p, p} and A_p = min(m2, P_p).  The values are minima over the same candidate
// sets as the reference's two passes, so bit for bit the same.
template <int Q, int K>
__device__ __forceinline__ void first_minima_pairs(const int2* __restrict__ heads, const int (&eta)[K],
                                                   const TrellisRow (&own)[K], float (&e)[K], int (&c1)[K],
                                                   int (&c2)[K], float (&a1)[K], float (&a2)[K])
{
    float best[K], p1[K], p2[K];                     // B, P_b1, P_b2
    int b1[K], b2[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        best[k] = p1[k] = p2[k] = nb::inf();
        b1[k] = b2[k] = -1;
    }
    first_minima_pair_loop<Q, K>(heads, eta, [&](int k, float cand, int px, int py) {
        const bool better = cand < best[k];
        const float without_x = px == b1[k] ? p1[k] : px == b2[k] ? p2[k] : best[k];
        const float without_y = py == b1[k] ? p1[k] : py == b2[k] ? p2[k] : best[k];
        const float keep1 = px != b1[k] && py != b1[k] ? fminf(p1[k], cand) : p1[k];
        const float keep2 = px != b2[k] && py != b2[k] ? fminf(p2[k], cand) : p2[k];
        p1[k] = better ? without_x : keep1;
        p2[k] = better ? without_y : keep2;
        b1[k] = better ? px : b1[k];
        b2[k] = better ? py : b2[k];
        best[k] = better ? cand : best[k];
    });
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const TrellisRow& t = own[k];
        const bool pair = best[k] < t.m1;
        const float without_p = t.p == b1[k] ? p1[k] : t.p == b2[k] ? p2[k] : best[k];
        e[k] = pair ? best[k] : t.m1;
        c1[k] = pair ? b1[k] : t.p;
        c2[k] = pair ? b2[k] : t.p;
        int col;
        t.off_column(c1[k], a1[k], col);
        t.off_column(c2[k], a2[k], col);
        a1[k] = fminf(a1[k], pair ? p1[k] : without_p);
        a2[k] = fminf(a2[k], pair ? p2[k] : without_p);
    }
}

// The trellis rule's steps 2-7 for one row.  Q_i lies in qh as it is (not permuted: Q_i(a) at a), and
// zs[i] holds z_i << 16 | (z_i / h_i) << 8 | log h_i (check_row), so that Qh_i(x) = Q_i(x / h_i) and
//    Qh_i(eta ^ z_i) = Q_i(eta / h_i ^ z_i / h_i),   eta / h_i = exp[log eta - log h_i]
// (GF division is linear over GF(2)): one look-up of the exp table a thread and column in steps 2-3
// instead of the permuted stores of Qh, whose four rows a warp conflicted in the banks.  A worker
// thread takes K = ceil((Q-1)/W) rows eta (a thread without a K-th row computes row Q-1 again and
// stores nothing): their minima over the columns (steps 2-3, and beta on the way), then E, A_c1,
// A_c2 (steps 4-5), stored already scaled by alpha (the product of step 7 is the same for each
// value wherever it is used) with the path, so that step 6's choice is two shared loads (the path,
// then the value); then R (and L = Q_i(a) + R_i(a) when layered, the thread's own quad of Q_i), one
// element a thread and edge as Min-Max's.
// Shared memory after Q: the trellis rows (Q int2, TrellisHead, then for T-MM Q int4, TrellisRow),
// then the outputs as four planes of Q words: alpha E, alpha A_c1, alpha A_c2, and
// c1 | c2 << 16 (entry 0: 0 with no path, as dR_i(0) = 0).  Words, not an int4 a row: up to GF(32)
// a plane lies in distinct banks, so the emit's gathers (a permutation of the plane a part) never
// conflict, where the int4 rows took 23 % of the kernel's shared wavefronts, 9 % in conflicts
// (Nsight Compute, docs/gpu_nb.md).
template <int Q, int PARTS, bool kFirstMinima>
__device__ void trellis_rule(const Worker<Q, PARTS>& wk, const nb::Tables& tab, const int2* __restrict__ meta,
                             const int* __restrict__ zs, float* __restrict__ qh, int d, int rb,
                             float* __restrict__ post, float* __restrict__ r, bool layered, float alpha)
{
    constexpr int P = Shape<Q>::P, G = Shape<Q>::G, W = Worker<Q, PARTS>::W, K = (Q - 1 + W - 1) / W;
    int2* heads = reinterpret_cast<int2*>(qh + d * Q);              // m1, p (TrellisHead)
    int4* rows = reinterpret_cast<int4*>(heads + Q);                // m1, m2, cols, 0 (TrellisRow; T-MM)
    float* outs = kFirstMinima ? reinterpret_cast<float*>(rows)     // alpha E, alpha A_c1, alpha A_c2
                               : reinterpret_cast<float*>(rows + Q);
    unsigned* paths = reinterpret_cast<unsigned*>(outs + 3 * Q);    // c1 | c2 << 16
    const int t = wk.t;
    int eta[K], log_eta[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        eta[k] = min(1 + t + k * W, Q - 1);
        log_eta[k] = tab.log[eta[k]] + (Q - 1);
    }
    int beta = 0;
    TrellisRow own[K];                               // the thread's rows eta (tmm1 keeps them in registers)
    {                                                // steps 2-3, columns in order (ties: smallest)
        float a1[K], a2[K];
        int b1[K], b2[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
            a1[k] = a2[k] = nb::inf();
            b1[k] = b2[k] = 0;
        }
        const auto column = [&](int i, int zi) {
            const int log_h = zi & 0xff, w = (zi >> 8) & 0xff;
            beta ^= zi >> 16;
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const float v = qh[i * Q + (tab.exp[log_eta[k] - log_h] ^ w)];   // branch-free: a1 <= a2
                const bool first = v < a1[k], second = v < a2[k];
                b2[k] = first ? b1[k] : second ? i : b2[k];
                a2[k] = fminf(a2[k], fmaxf(a1[k], v));
                b1[k] = first ? i : b1[k];
                a1[k] = fminf(a1[k], v);
            }
        };
        int i = 0;
        for (; i + 4 <= d; i += 4) {                // the columns' words four at a time (zs: 16-byte slots)
            const int4 z4 = *reinterpret_cast<const int4*>(zs + i);
            column(i, z4.x);
            column(i + 1, z4.y);
            column(i + 2, z4.z);
            column(i + 3, z4.w);
        }
        for (; i < d; ++i) column(i, zs[i]);
#pragma unroll
        for (int k = 0; k < K; ++k) {
            own[k].m1 = a1[k];
            own[k].m2 = a2[k];
            own[k].p = b1[k];
            own[k].p2 = b2[k];
            if (1 + t + k * W < Q) {
                heads[eta[k]] = make_int2(__float_as_int(a1[k]), b1[k]);
                if constexpr (!kFirstMinima) {
                    rows[eta[k]] = make_int4(__float_as_int(a1[k]), __float_as_int(a2[k]), b1[k] | (b2[k] << 16), 0);
                }
            }
        }
    }
    wk.sync_worker();
    {                                                // steps 4-5
        float e[K], a1[K], a2[K];
        int c1[K], c2[K];
        if constexpr (kFirstMinima) {
            first_minima_pairs<Q, K>(heads, eta, own, e, c1, c2, a1, a2);
        } else {
            two_deviations<Q, K>(heads, rows, eta, e, c1, c2, a1, a2);
        }
#pragma unroll
        for (int k = 0; k < K; ++k) {
            if (1 + t + k * W < Q) {
                outs[eta[k]] = __fmul_rn(e[k], alpha);
                outs[Q + eta[k]] = __fmul_rn(a1[k], alpha);
                outs[2 * Q + eta[k]] = __fmul_rn(a2[k], alpha);
                paths[eta[k]] = c1[k] | (c2[k] << 16);
            }
        }
        if (t == 0) {
            outs[0] = outs[Q] = outs[2 * Q] = 0.f;
            paths[0] = 0xffffffffu;
        }
    }
    wk.sync_worker();
    for (int i = wk.part; i < d; i += PARTS) {      // steps 6-7
        const int e = rb + i, v = meta[i].x, log_h = meta[i].y, s = beta ^ (zs[i] >> 16);
#pragma unroll
        for (int g = 0; g < G; ++g) {
            const int a0 = 4 * (wk.lt + g * P);
            const float4 q4 = *reinterpret_cast<const float4*>(qh + i * Q + a0);
            const float qi[4] = {q4.x, q4.y, q4.z, q4.w};
            float rn[4], ln[4];
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const int x = wk.mul(tab, log_h, g, c) ^ s;
                const unsigned path = paths[x];
                rn[c] = outs[(path & 0xffffu) == (unsigned)i ? Q + x : (path >> 16) == (unsigned)i ? 2 * Q + x : x];
                ln[c] = qi[c] + rn[c];
            }
            __stcs(reinterpret_cast<float4*>(r + (size_t)e * Q + a0), make_float4(rn[0], rn[1], rn[2], rn[3]));
            if (layered) {
                *reinterpret_cast<float4*>(post + (size_t)v * Q + a0) = make_float4(ln[0], ln[1], ln[2], ln[3]);
            }
        }
    }
}

// The Min-Max rule for one row (Qh_i in qh, normalized): the two recursions, the merges and
// R (and L when layered).  Shared memory after Qh: F_1..F_{d-2}, B_1..B_{d-2}, two merge buffers.
template <int Q>
__device__ void minmax_rule(const Worker<Q, 2>& wk, const nb::Tables& tab, const int2* __restrict__ meta,
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
        const bool fwd = wk.part == 0;
        const int t = fwd ? s : d - 1 - s;   // F_s = F_{s-1} (*) Qh_s,  B_t = B_{t+1} (*) Qh_t
        minmax_conv<Q>(fwd ? F(s - 1) : B(t + 1), qh + t * Q, fwd ? F(s) : B(t), wk.lt);
        wk.sync_part();
    }
    wk.sync_worker();
    // Merges M_i = F_{i-1} (*) B_{i+1}, i = 1 .. d-2: half 0 takes i = 1 .. steps, half 1
    // i = steps+1 .. 2 steps (for odd d one convolution past d-2 runs unused, so that both
    // halves stay converged); a last step without convolution emits M_0 = B_1 (half 0) and
    // M_{d-1} = F_{d-2} (half 1).  3(d-2) convolutions per row in all.
    const int steps = (d - 1) / 2;
    float* mine = mbuf + wk.part * Q;
    for (int k = 0; k <= steps; ++k) {
        const bool copy = k == steps;       // the same for both halves: no divergence
        const int i = copy ? wk.part * (d - 1) : 1 + k + wk.part * steps;
        if (!copy) {
            const int ic = min(i, d - 2);
            minmax_conv<Q>(F(ic - 1), B(ic + 1), mine, wk.lt);
            wk.sync_part();
        }
        const float* m = !copy ? mine : wk.part == 0 ? B(1) : F(d - 2);
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
                    const int k2 = wk.mul(tab, log_h, g, c);
                    rn[c] = m[k2];
                    ln[c] = qi[k2] + rn[c];
                }
                __stcs(reinterpret_cast<float4*>(r + (size_t)e * Q + a0), make_float4(rn[0], rn[1], rn[2], rn[3]));
                if (layered) {
                    *reinterpret_cast<float4*>(post + (size_t)v * Q + a0) =
                        make_float4(ln[0], ln[1], ln[2], ln[3]);
                }
            }
        }
        wk.sync_part();
    }
}

// One round of check_row's staging: edges i0, i0 + PARTS, .., i0 + (C-1) PARTS of the part (those
// past d repeat edge d-1's loads and store nothing): Q' = L - R_old, their columns first, then every
// load, the minima over the part, then the stores (loads and stores interleaved would wait edge by
// edge: a store to shared memory may not pass the load of the next edge's column); Q_i = Q' - min Q'
// is stored permuted (Min-Max: Qh_i(h a) = Q_i(a)) or as it is with z_i (kTrellis).
template <int Q, bool kTrellis, int PARTS, int C>
__device__ __forceinline__ void stage_round(const Worker<Q, PARTS>& wk, const nb::Tables& tab,
                                            const int2* __restrict__ meta, int* __restrict__ zs,
                                            float* __restrict__ qh, int d, int rb, int i0,
                                            const float* __restrict__ post, const float* __restrict__ r,
                                            bool first)
{
    constexpr int P = Shape<Q>::P, G = Shape<Q>::G;
    int v[C];
#pragma unroll
    for (int k = 0; k < C; ++k) v[k] = meta[min(i0 + PARTS * k, d - 1)].x;
    float x[C][G][4], mn[C];
#pragma unroll
    for (int k = 0; k < C; ++k) {
        mn[k] = nb::inf();
#pragma unroll
        for (int g = 0; g < G; ++g) {
            const int a0 = 4 * (wk.lt + g * P);
            const float4 l = *reinterpret_cast<const float4*>(post + (size_t)v[k] * Q + a0);
            const float4 ro = first ? make_float4(0.f, 0.f, 0.f, 0.f)
                                    : __ldcs(reinterpret_cast<const float4*>(r + (size_t)(rb + min(i0 + PARTS * k, d - 1)) * Q + a0));
            x[k][g][0] = l.x - ro.x; x[k][g][1] = l.y - ro.y; x[k][g][2] = l.z - ro.z; x[k][g][3] = l.w - ro.w;
#pragma unroll
            for (int c = 0; c < 4; ++c) mn[k] = fminf(mn[k], x[k][g][c]);
        }
    }
#pragma unroll
    for (int k = 0; k < C; ++k) mn[k] = wk.min_part(mn[k]);
#pragma unroll
    for (int k = 0; k < C; ++k) {
        const int i = i0 + PARTS * k;
        if (i >= d) continue;
        const int log_h = meta[i].y;
        float* row = qh + i * Q;
        int zi = 0x7fffffff;             // kTrellis: z << 16 | a << 8 | log h of the smallest z = h a
#pragma unroll
        for (int g = 0; g < G; ++g) {
            float y[4];
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                y[c] = x[k][g][c] - mn[k];
                if constexpr (kTrellis) {
                    if (y[c] == 0.f) zi = min(zi, wk.mul(tab, log_h, g, c) << 16 | (4 * (wk.lt + g * P) + c) << 8 | log_h);
                } else {
                    row[wk.mul(tab, log_h, g, c)] = y[c];
                }
            }
            if constexpr (kTrellis) {
                *reinterpret_cast<float4*>(row + 4 * (wk.lt + g * P)) = make_float4(y[0], y[1], y[2], y[3]);
            }
        }
        if (kTrellis && zi != 0x7fffffff) atomicMin(zs + i, zi);
    }
}

// One check row: Q, the two recursions, the merges and R (and L when layered); kTrellis:
// Q and z, then trellis_rule.
//
// Shared memory of a worker: meta[dmax rounded up to even] (column, log h of each edge of the
// row), (kTrellis: zs[dmax rounded up to 4], z_i << 16 | (z_i / h_i) << 8 | log h_i, z_i the
// smallest x with Qh_i(x) = 0), then the row's d vectors of Q (Min-Max: permuted, Qh_i(h a) = Q_i(a);
// kTrellis: Q_i as it is), F_1..F_{d-2}, B_1..B_{d-2} and one merge buffer per half (kTrellis:
// after Q the trellis rule's trellis rows, 6 Q words for T-MM and 2 for "tmm1", and four planes of
// outputs).
template <int Q, Rule R, int PARTS>
__device__ void check_row(const Worker<Q, PARTS>& wk, const nb::Tables& tab, int2* __restrict__ meta,
                          int* __restrict__ zs, float* __restrict__ vec, int d, int rb,
                          const int* __restrict__ edge_col, const unsigned char* __restrict__ edge_h,
                          float* __restrict__ post, float* __restrict__ r, bool first, bool layered,
                          float alpha)
{
    constexpr bool kTrellis = R != Rule::kMinMax;
    constexpr int G = Shape<Q>::G, W = Worker<Q, PARTS>::W, C = kTrellis ? 4 / G : 2 / G;
    float* qh = vec;

    for (int i = wk.t; i < d; i += W) {
        const int log_h = tab.log[edge_h[rb + i]];
        meta[i] = make_int2(edge_col[rb + i], log_h);
        if constexpr (kTrellis) zs[i] = Q << 16 | log_h;   // lowered by every zero of Q_i below
    }
    wk.sync_worker();
    // Q_i = Q' - min Q' with Q' = L - R_old, C of the part's edges at a time (stage_round).  Min-Max
    // takes half as many edges at a time: its permuted stores hold more registers (four edges spilled
    // 56 bytes at GF(32), two 4).  A T-MM row of at most 2 edges a part takes them two at a time, not
    // four (no slots spent on repeats: gf32-620-310, rows of 6 edges over 4 parts, +4.7 %).
    if (C == 4 && d <= 2 * PARTS) {
        for (int i0 = wk.part; i0 < d; i0 += PARTS * 2) {
            stage_round<Q, kTrellis, PARTS, 2>(wk, tab, meta, zs, qh, d, rb, i0, post, r, first);
        }
    } else {
        for (int i0 = wk.part; i0 < d; i0 += PARTS * C) {
            stage_round<Q, kTrellis, PARTS, C>(wk, tab, meta, zs, qh, d, rb, i0, post, r, first);
        }
    }
    wk.sync_worker();
    if constexpr (kTrellis) {
        trellis_rule<Q, PARTS, R == Rule::kFirstMinima>(wk, tab, meta, zs, qh, d, rb, post, r, layered, alpha);
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

template <int Q, Rule R>
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

    constexpr bool kTrellis = R != Rule::kMinMax;
    constexpr int PARTS = kTrellis ? TrellisParts<Q> : 2;
    const Worker<Q, PARTS> wk(tab);
    const int workers = blockDim.x / Worker<Q, PARTS>::W;
    const int meta_slots = (dmax + 1) & ~1;  // keeps the vectors 16-byte aligned
    const int z_slots = kTrellis ? (dmax + 3) & ~3 : 0;
    const int vec_floats = R == Rule::kMinMax ? (3 * dmax - 2) * Q : (dmax + (R == Rule::kTrellis ? 10 : 6)) * Q;
    int2* meta = reinterpret_cast<int2*>(work + (size_t)wk.id * (vec_floats + 2 * meta_slots + z_slots));
    int* zs = reinterpret_cast<int*>(meta + meta_slots);
    float* vec = reinterpret_cast<float*>(zs + z_slots);
    for (int it = 1; it <= max_iter; ++it) {
        for (int g = 0; g < groups; ++g) {
            if (wk.id < workers) {
                for (int k = group_ptr[g] + wk.id; k < group_ptr[g + 1]; k += workers) {
                    const int row = group_rows[k];
                    const int rb = row_ptr[row];
                    check_row<Q, R, PARTS>(wk, tab, meta, zs, vec, row_ptr[row + 1] - rb, rb, edge_col,
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

// nb_minmax_q<Q> (forward-backward Min-Max; alpha unused), nb_tmm_q<Q> (trellis Min-Max) and
// nb_tmm1_q<Q> (trellis Min-Max, step 5's pairs from first minima): one parameter list, the rule
// picked at compile time.  The trellis kernels above GF(32) are not
// capped at 64 registers (two blocks of 512 threads): their steps 4-5 keep two rows' chains and
// their loads in flight (122 registers, no spills, where 64 spilled).  Up to GF(32) a warp works a
// row, one row eta a thread: 64 registers (4 bytes spilled at GF(32)) give twice the warps of the
// uncapped 118, and ran 8 % faster on gf32-837-726 (uncapped: no gain; docs/gpu_nb.md).
#define NB_RULE_KERNEL(NAME, Q, RULE)                                                               \
    extern "C" __global__ void __launch_bounds__(kMaxThreads, RULE != Rule::kMinMax && Q > 32 ? 1 : 2) NAME( \
        const float* in, int in_bits, float* post, float* chan, float* r, unsigned char* symbols,   \
        int* iterations, unsigned char* valid, const unsigned char* gexp, const short* glog,        \
        const int* row_ptr, const int* edge_col, const unsigned char* edge_h, const int* group_ptr, \
        const int* group_rows, int groups, const int* vn_ptr, const int* vn_edge, int n, int m,     \
        int E, int dmax, int max_iter, int early_stop, int flooding, float* soft, float alpha)      \
    {                                                                                               \
        minmax_decode<Q, RULE>(in, in_bits, post, chan, r, symbols, iterations, valid, gexp,        \
                               glog, row_ptr, edge_col, edge_h, group_ptr, group_rows, groups,      \
                               vn_ptr, vn_edge, n, m, E, dmax, max_iter, early_stop, flooding,      \
                               soft, alpha);                                                        \
    }
#define NB_MINMAX_KERNEL(Q)                                   \
    NB_RULE_KERNEL(nb_minmax_q##Q, Q, Rule::kMinMax)          \
    NB_RULE_KERNEL(nb_tmm_q##Q, Q, Rule::kTrellis)            \
    NB_RULE_KERNEL(nb_tmm1_q##Q, Q, Rule::kFirstMinima)

NB_MINMAX_KERNEL(4)
NB_MINMAX_KERNEL(8)
NB_MINMAX_KERNEL(16)
NB_MINMAX_KERNEL(32)
NB_MINMAX_KERNEL(64)
NB_MINMAX_KERNEL(128)
NB_MINMAX_KERNEL(256)
