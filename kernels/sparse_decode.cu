// Sparse binary LDPC decoder: any parity-check matrix, given by its rows, for the codes the QC
// kernels (qc_decode.cuh) cannot describe: blocks that are sums of circulants (DVB-S2's
// information part, CCSDS C2), a circulant with an entry missing (DVB-S2's accumulator wrap),
// circulants larger than a block of threads (AR4JA k = 16384: z = 2048, 1024), or no QC structure
// at all (alist codes).  Tables built by gpuldpc.cuda.sparse_layout: cols_t[e * m + r], the e-th
// column of row r in code.H's order (-1 past the row's degree; width = the heaviest row),
// layer_start (the reference decoder's layers as row ranges), col_ptr/col_edges (flooding), and
// kcol (or null): the kernel's column of each of the frame's columns, for codes whose frame order
// scatters the columns that neighbouring rows read (DVB-S2's parity bits: the QC form's column
// order puts the columns of a warp's rows next to each other, so its gathers coalesce); the
// tables then hold kernel columns, and the LLR load, decisions and soft output go through kcol.
//
// One frame a block of threads, a check row a thread (its columns and Q in registers).  Min-sum as
// the QC kernels (paper 004 eq. (1), Algorithm 1, the two-min check-node update): a check row
// keeps its messages compressed, f(min1), f(min2), the index of min1 and the sign bits of its
// messages R, in a 16-byte record in device memory
// (rec[row] of the frame's scratch; a layer's rows are consecutive, so a warp's records are one
// coalesced access):  R_e = sign_e * (e == idx ? f(min2) : f(min1)),  f(m) = alpha * m (nms) or
// max(m - beta, 0) (oms).  Record words: f(min1), f(min2) as float32 bits, sign bits 0-31, then
// sign bits 32-57 | idx << 26 (rows of up to 58 edges: gpuldpc.cuda.sparse_layout.MAX_ROW).
//
// Schedules, the reference decoder's (gpuldpc.decoders.reference_graph):
//   layered (eqs. (2), (3)): layers are runs of consecutive rows with pairwise disjoint supports
//     (TannerGraph.layers), rows[layer_start[l] .. layer_start[l+1]) in layer l, one barrier a
//     layer; per row  Q = L - R_old,  R_new from Q,  L = Q + R_new  (the row's columns and Q in
//     registers, DC_MAX slots; the record of a thread's first row of the next layer is loaded a
//     layer ahead, as no row of this layer writes it).
//   flooding: every row from the totals (Q = T - R_old), a barrier, then per column
//     T = Lch + R_1 + R_2 + ... over its edges in increasing row order (col_ptr, col_edges:
//     (row, position of the edge in its row)), left to right as the reference sums.
// Message arithmetic (template T of the posteriors): float32, or IEEE binary16, where every
// difference, sum and magnitude is rounded once to half (channel LLRs clamped to +-kHalfLlrMax,
// magnitudes to kHalfRMax), the reference's precision="float16"; registers hold the values as
// float32 (a half is exact in float32, so comparisons and sign flips are the same).  Either way
// the decisions, iteration counts and flags are the reference decoder's, bit for bit.
//
// Posteriors (and, flooding, the channel LLRs) in shared memory (POST_SHARED: n values of T, 2n
// flooding) or, where they do not fit (DVB-S2 normal frames in float32), in the frame's scratch
// after its records: frame_bytes of device memory a frame in either case.
//
// Non-finite LLRs: the rule of llr_load.cuh at the load, the frame flagged (valid bit 1).  Early
// stop: after each iteration every row's parity (a frame stops after the first iteration whose
// decisions satisfy every check); without it the syndrome is taken after the last iteration.
// Outputs as qc_decode.cuh: decisions (bit 1 iff posterior < 0; unpacked, or packed in np.packbits
// order), iterations run, flags (bit 0 syndrome satisfied, bit 1 non-finite LLRs), and on request
// (soft != 0) the float32 posteriors at the frame's stop in the caller's sign.
#include "qc_decode.cuh"

namespace {

constexpr int kRecIdxShift = 26;     // record word 3: sign bits 32..57 | idx << 26
constexpr unsigned kRecHighMask = (1u << kRecIdxShift) - 1;
constexpr float kHalfRMaxValue = 2048.0f;  // the halves of kHalfRMax2: gpuldpc.float16.HALF_R_MAX

// Posterior storage and the arithmetic of each precision, on float32 registers.
template <typename T> struct Arith;
template <> struct Arith<float> {
    static __device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
    static __device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
    static __device__ __forceinline__ float channel(float x) { return x; }
    static __device__ __forceinline__ float magnitude(float m, int rule, float alpha, float beta)
    {
        return rule == kOms ? fmaxf(__fsub_rn(m, beta), 0.0f) : __fmul_rn(alpha, m);
    }
    static __device__ __forceinline__ float get(const float* p) { return *p; }
    static __device__ __forceinline__ void put(float* p, float v) { *p = v; }
};
template <> struct Arith<__half> {
    static __device__ __forceinline__ __half h(float x) { return __float2half_rn(x); }
    static __device__ __forceinline__ float sub(float a, float b) { return __half2float(__hsub(h(a), h(b))); }
    static __device__ __forceinline__ float add(float a, float b) { return __half2float(__hadd(h(a), h(b))); }
    // clamped, rounded to nearest half, "+ 0" (a value that rounds to -0 becomes +0), as half_llr_pair
    static __device__ __forceinline__ float channel(float x)
    {
        return __half2float(__hadd(h(fminf(fmaxf(x, -kHalfLlrMax), kHalfLlrMax)), h(0.0f)));
    }
    // min(f(m), kHalfRMax), f rounded once in half with alpha, beta rounded to half
    static __device__ __forceinline__ float magnitude(float m, int rule, float alpha, float beta)
    {
        const float f = rule == kOms ? fmaxf(__half2float(__hsub(h(m), h(beta))), 0.0f)
                                     : __half2float(__hmul(h(alpha), h(m)));
        return fminf(f, kHalfRMaxValue);
    }
    static __device__ __forceinline__ float get(const __half* p) { return __half2float(*p); }
    static __device__ __forceinline__ void put(__half* p, float v) { *p = h(v); }
};

// The compressed messages of a row (see the header).
struct RowRecord {
    float mag1, mag2;
    unsigned long long signs;  // bit e: R_e < 0
    int idx;

    __device__ __forceinline__ static RowRecord unpack(uint4 w)
    {
        return {__uint_as_float(w.x), __uint_as_float(w.y),
                w.z | ((unsigned long long)(w.w & kRecHighMask) << 32), (int)(w.w >> kRecIdxShift)};
    }
    __device__ __forceinline__ static RowRecord load(const uint4* rec) { return unpack(*rec); }
    __device__ __forceinline__ void store(uint4* rec) const
    {
        *rec = make_uint4(__float_as_uint(mag1), __float_as_uint(mag2), (unsigned)signs,
                          (unsigned)(signs >> 32) | ((unsigned)idx << kRecIdxShift));
    }
    __device__ __forceinline__ float message(int e) const
    {
        const float v = e == idx ? mag2 : mag1;
        return (signs >> e) & 1ull ? -v : v;
    }
};

// One check row held in registers: its record (R_old), its columns and its Q = L - R_old (DC_MAX
// slots, the row's dc used).  The columns come from the transposed table cols_t[e * m + r] (-1
// past the row's dc, width = the heaviest row): no row pointer to wait for, and a warp's rows read
// one coalesced line an edge.  gather issues the posterior loads of the row together; write
// reuses them.
template <typename T, int DC_MAX>
struct Row {
    RowRecord old;
    int col[DC_MAX];
    float q[DC_MAX];
    int dc;

    __device__ __forceinline__ void columns(const int* __restrict__ cols_t, int width, int m, int r)
    {
        dc = 0;
#pragma unroll
        for (int e = 0; e < DC_MAX; ++e) {
            col[e] = e < width ? cols_t[e * m + r] : -1;
            dc += col[e] >= 0;
        }
    }

    // Q of every edge from the posteriors at p (L, or the flooding totals T).
    __device__ __forceinline__ void gather(const T* p)
    {
#pragma unroll
        for (int e = 0; e < DC_MAX; ++e)
            if (col[e] >= 0) q[e] = Arith<T>::sub(Arith<T>::get(p + col[e]), old.message(e));
    }

    // The new record (Algorithm 1): the two-min scan in edge order (|Q| < min1 moves min1 to min2),
    // f(min1), f(min2), and the sign of each R, the product of the other edges' signs (sign(x) = -1
    // iff x < 0).
    __device__ __forceinline__ RowRecord update(int rule, float alpha, float beta) const
    {
        float m1 = __int_as_float(0x7f800000), m2 = m1;
        int idx = 0;
        unsigned long long neg = 0ull;
#pragma unroll
        for (int e = 0; e < DC_MAX; ++e) {
            if (col[e] >= 0) {
                const float a = fabsf(q[e]);
                if (a < m1) {
                    m2 = m1;
                    m1 = a;
                    idx = e;
                } else {
                    m2 = fminf(m2, a);
                }
                neg |= (unsigned long long)(q[e] < 0.0f) << e;
            }
        }
        const unsigned long long all = (1ull << dc) - 1ull;   // dc <= 58
        const unsigned long long signs = neg ^ ((__popcll(neg) & 1) ? all : 0ull);
        return {Arith<T>::magnitude(m1, rule, alpha, beta), Arith<T>::magnitude(m2, rule, alpha, beta), signs, idx};
    }

    // Layered: L = Q + R_new on every edge.
    __device__ __forceinline__ void write(T* p, const RowRecord& now) const
    {
#pragma unroll
        for (int e = 0; e < DC_MAX; ++e)
            if (col[e] >= 0) Arith<T>::put(p + col[e], Arith<T>::add(q[e], now.message(e)));
    }
};

template <typename T, int DC_MAX, bool FLOOD, typename In, bool POST_SHARED>
__device__ void sparse_frames(const In* __restrict__ llr, float scale, unsigned char* __restrict__ bits,
                              int packed, int* __restrict__ iters_out, unsigned char* __restrict__ valid_out,
                              const int* __restrict__ cols_t, int width,
                              const int* __restrict__ layer_start, const int* __restrict__ col_ptr,
                              const int2* __restrict__ col_edges, const int* __restrict__ kcol,
                              char* __restrict__ scratch, int frame_bytes,
                              int n, int m, int layers, int frames, int max_iter, int early_stop, int rule,
                              float alpha, float beta, float* __restrict__ soft)
{
    using A = Arith<T>;
    extern __shared__ float4 smem_vec[];
    __shared__ int flag;  // kItersBad once a non-finite LLR is seen
    const long long f = blockIdx.x;
    if (f >= frames) return;
    const int tid = threadIdx.x, nt = blockDim.x;
    char* mine = scratch + f * (long long)frame_bytes;
    uint4* rec = reinterpret_cast<uint4*>(mine);
    T* post = POST_SHARED ? reinterpret_cast<T*>(smem_vec) : reinterpret_cast<T*>(mine + 16ll * m);
    T* lch = post + n;  // flooding only

    const auto at = [kcol](int c) { return kcol != nullptr ? kcol[c] : c; };  // frame -> kernel column
    if (tid == 0) flag = 0;
    __syncthreads();
    const In* src = llr + f * n;
    for (int i = tid; i < n; i += nt) {
        const float c = A::channel(llr_value(src[i], scale, &flag));
        A::put(post + at(i), c);
        if (FLOOD) A::put(lch + at(i), c);
    }
    for (int r = tid; r < m; r += nt) rec[r] = make_uint4(0u, 0u, 0u, 0u);
    __syncthreads();

    uint4 ahead = make_uint4(0u, 0u, 0u, 0u);  // layered: the record of the thread's next first row
    int done_at = max_iter;
    bool satisfied = false;
    for (int it = 1; it <= max_iter; ++it) {
        if (!FLOOD) {
            for (int l = 0; l < layers; ++l) {
                // The record of the thread's first row of the next layer is loaded now (no row of
                // this layer writes it), so that round trip overlaps this layer's work; with a
                // single layer, after this layer's writes.
                const int end = layer_start[l + 1], ln = l + 1 < layers ? l + 1 : 0;
                const int r0 = layer_start[l] + tid, rn = layer_start[ln] + tid;
                const bool has_next = rn < layer_start[ln + 1];
                const uint4 first = ahead;
                if (has_next && ln != l) ahead = rec[rn];
                for (int r = r0; r < end; r += nt) {
                    Row<T, DC_MAX> row;
                    row.columns(cols_t, width, m, r);
                    row.old = RowRecord::unpack(r == r0 ? first : rec[r]);
                    row.gather(post);
                    const RowRecord now = row.update(rule, alpha, beta);
                    row.write(post, now);
                    now.store(rec + r);
                }
                if (has_next && ln == l) ahead = rec[rn];
                __syncthreads();
            }
        } else {
            for (int r = tid; r < m; r += nt) {
                Row<T, DC_MAX> row;
                row.columns(cols_t, width, m, r);
                row.old = RowRecord::load(rec + r);
                row.gather(post);
                row.update(rule, alpha, beta).store(rec + r);
            }
            __syncthreads();
            for (int v = tid; v < n; v += nt) {
                float t = A::get(lch + v);
                for (int k = col_ptr[v]; k < col_ptr[v + 1]; ++k) {
                    const int2 rp = col_edges[k];
                    t = A::add(t, RowRecord::load(rec + rp.x).message(rp.y));
                }
                A::put(post + v, t);
            }
            __syncthreads();
        }
        if (early_stop || it == max_iter) {
            bool odd = false;
            for (int r = tid; r < m && !odd; r += nt) {
                unsigned p = 0u;
                for (int e = 0; e < width; ++e) {
                    const int c = cols_t[e * m + r];
                    if (c >= 0) p ^= A::get(post + c) < 0.0f;
                }
                odd = p != 0u;
            }
            satisfied = !__syncthreads_or(odd);
            if (satisfied && early_stop) {
                done_at = it;
                break;
            }
        }
    }
    if (tid == 0) {
        iters_out[f] = done_at;
        valid_out[f] = (satisfied ? 1 : 0) | (flag ? llr::kBadLlrFlag : 0);
    }
    if (soft != nullptr) {  // the posteriors as float32 (binary16: exact) in the caller's sign
        const unsigned negative = scale < 0.0f;
        for (int i = tid; i < n; i += nt) soft[f * n + i] = flip(A::get(post + at(i)), negative);
    }
    if (packed) {
        const int nbytes = (n + 7) >> 3;
        for (int j = tid; j < nbytes; j += nt) {
            unsigned v = 0u;
            for (int k = 0; k < 8; ++k) v |= (8 * j + k < n && A::get(post + at(8 * j + k)) < 0.0f ? 1u : 0u) << (7 - k);
            bits[f * nbytes + j] = (unsigned char)v;
        }
    } else {
        for (int i = tid; i < n; i += nt) bits[f * n + i] = A::get(post + at(i)) < 0.0f ? 1 : 0;
    }
}

}  // namespace

// Entry points sp<DC_MAX>_<messages>_<posteriors>_<schedule>_<input>: rows of up to DC_MAX edges
// (8, 16: blocks of up to 512 threads; 32: 384, DVB-S2's 360-row layers; 40, 58: 256: their rows'
// registers), messages f32 | f16
// (binary16), posteriors sh (shared memory: n * sizeof(T) bytes of dynamic shared memory, 2n
// flooding) | gl (device memory, in the frame's scratch after its records); schedule layered |
// flooding; input f32 | f16 | i8 (LLR = value * scale).  One frame a block.
#define SPARSE_ARGS(In)                                                                              \
    const In *llr, float scale, unsigned char *bits, int packed, int *iters, unsigned char *valid,   \
        const int *cols_t, int width, const int *layer_start, const int *col_ptr,                    \
        const int2 *col_edges, const int *kcol, char *scratch, int frame_bytes, int n, int m,         \
        int layers, int frames,                                                                      \
        int max_iter, int early_stop, int rule, float alpha, float beta, float *soft
#define SPARSE_KERNEL(name, DC, T, FLOOD, In, SHARED)                                                 \
    extern "C" __global__ void __launch_bounds__(DC > 32 ? 256 : DC > 16 ? 384 : 512) name(SPARSE_ARGS(In)) \
    {                                                                                                 \
        sparse_frames<T, DC, FLOOD, In, SHARED>(llr, scale, bits, packed, iters, valid, cols_t, width,  \
                                                layer_start, col_ptr, col_edges, kcol, scratch,        \
                                                frame_bytes,                                           \
                                                n, m, layers, frames, max_iter, early_stop, rule,      \
                                                alpha, beta, soft);                                    \
    }
#define SPARSE_INPUTS(prefix, DC, T, FLOOD, SHARED)                  \
    SPARSE_KERNEL(prefix##_f32, DC, T, FLOOD, float, SHARED)         \
    SPARSE_KERNEL(prefix##_f16, DC, T, FLOOD, __half, SHARED)        \
    SPARSE_KERNEL(prefix##_i8, DC, T, FLOOD, signed char, SHARED)
#define SPARSE_SCHEDULES(prefix, DC, T, SHARED)                      \
    SPARSE_INPUTS(prefix##_layered, DC, T, false, SHARED)            \
    SPARSE_INPUTS(prefix##_flooding, DC, T, true, SHARED)
#define SPARSE_VARIANTS(prefix, DC)                                  \
    SPARSE_SCHEDULES(prefix##_f32_sh, DC, float, true)               \
    SPARSE_SCHEDULES(prefix##_f32_gl, DC, float, false)              \
    SPARSE_SCHEDULES(prefix##_f16_sh, DC, __half, true)              \
    SPARSE_SCHEDULES(prefix##_f16_gl, DC, __half, false)

SPARSE_VARIANTS(sp8, 8)
SPARSE_VARIANTS(sp16, 16)
SPARSE_VARIANTS(sp32, 32)
SPARSE_VARIANTS(sp40, 40)
SPARSE_VARIANTS(sp58, 58)
