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
// Circulant rows (sp33c: float32, layered, posteriors in shared memory; CCSDS C2): where every row
// is, but for at most one extra column, a sum of circulants of size z (SparseLayout.circulants), a
// row's columns are computed (CirculantColumns) instead of loaded from cols_t and held in registers.
//
// float32: one frame a block of threads, a check row a thread (its columns and Q in registers).
// Min-sum as the QC kernels (paper 004 eq. (1), Algorithm 1, the two-min check-node update): a
// check row keeps its messages compressed, f(min1), f(min2), the index of min1 and the sign bits
// of its messages R, in a 16-byte record in device memory (rec[row] of the block's scratch; a
// layer's rows are consecutive, so a warp's records are one coalesced access):
//   R_e = sign_e * (e == idx ? f(min2) : f(min1)),  f(m) = alpha * m (nms) or max(m - beta, 0) (oms).
// Record words: f(min1), f(min2) as float32 bits, sign bits 0-31, then sign bits 32-57 | idx << 26
// (rows of up to 58 edges: gpuldpc.cuda.sparse_layout.MAX_ROW).
//
// binary16 (precision="float16"): two frames a block, packed as the halves of one half2 word per
// posterior (the QC kernels' HalfMinSum, qc_decode.cuh, whose helpers this uses), so one thread
// runs a check row of both frames with one instruction stream: every difference, sum and
// magnitude rounded once to half with __hsub2/__hadd2/__hfma2 (channel LLRs clamped to
// +-kHalfLlrMax, magnitudes to kHalfRMax), the reference's precision="float16", bit for bit.  A
// row's record per frame pair, in word planes rec[w * m + row] (a warp's rows coalesce per word):
// f(min1) and f(min2) as half2 with the signs P and not P (P the product of the row's Q signs),
// then per edge e, in word e / 8, the bits "take min2" (|Q_e| == min1, the reference's
// e == idx: equal to min1 elsewhere means min1 == min2) and "Q_e < 0" of each half, from which
// R_e = (take min2 ? f(min2) : f(min1)) with the sign P xor sign(Q_e) is one select.  A frame
// that stops early has its results written at its stop and keeps being updated in its half.
//
// Schedules, the reference decoder's (gpuldpc.decoders.reference_graph):
//   layered (eqs. (2), (3)): layers are runs of consecutive rows with pairwise disjoint supports
//     (TannerGraph.layers), rows[layer_start[l] .. layer_start[l+1]) in layer l, one barrier a
//     layer; per row  Q = L - R_old,  R_new from Q,  L = Q + R_new  (the row's columns and Q in
//     registers, DC_MAX slots; its record's loads are in flight with its column loads).
//   flooding: every row from the totals (Q = T - R_old), a barrier, then per column
//     T = Lch + R_1 + R_2 + ... over its edges in increasing row order (col_ptr, col_edges:
//     (row, position of the edge in its row)), left to right as the reference sums.
// Either way the decisions, iteration counts and flags are the reference decoder's, bit for bit.
//
// Posteriors (and, flooding, the channel LLRs) in shared memory (POST_SHARED: n words, 2n
// flooding; a word is a float32 or a frame pair's half2) or, where they do not fit (DVB-S2
// normal frames), in the block's scratch after its records.
//
// Non-finite LLRs: the rule of llr_load.cuh at the load, the frame flagged (valid bit 1).  Early
// stop: after each iteration every row's parity (a frame stops after the first iteration whose
// decisions satisfy every check); without it the syndrome is taken after the last iteration.
// Outputs as qc_decode.cuh: decisions (bit 1 iff posterior < 0; unpacked, or packed in np.packbits
// order), iterations run, flags (bit 0 syndrome satisfied, bit 1 non-finite LLRs), and on request
// (soft != 0) the float32 posteriors at the frame's stop in the caller's sign.
#include "qc_decode.cuh"

namespace {

constexpr int kRecIdxShift = 26;     // float32 record word 3: sign bits 32..57 | idx << 26
constexpr unsigned kRecHighMask = (1u << kRecIdxShift) - 1;

// The min-sum rule of a launch: NMS f(m) = alpha m, OMS max(m - beta, 0); binary16 as one FMA
// max(scale * m - offset, 0) with (scale, offset) = (alpha, 0) or (1, beta) rounded to half.
struct MinSumRule {
    int rule;
    float alpha, beta;
    __half2 so;
    __device__ MinSumRule(int r, float a, float b)
        : rule(r), alpha(a), beta(b), so(r == kOms ? __floats2half2_rn(1.0f, b) : __floats2half2_rn(a, 0.0f)) {}
    __device__ float magnitude(float m) const
    {
        return rule == kOms ? fmaxf(__fsub_rn(m, beta), 0.0f) : __fmul_rn(alpha, m);
    }
};

// The columns of row r from the transposed table cols_t[e * m + r] (width = the heaviest row; a
// lighter row's slots past its edges hold the pad column `pad`, whose posterior stays +inf), held
// in registers: no row pointer to wait for, and a warp's rows read one coalesced line an edge.
// PADDED: every slot below width is run, the pad's too (|Q| = +inf is never a minimum, its sign is
// +, and Q + R stays +inf, so a pad slot changes no message): a test of a uniform value instead of
// each thread's column; else a slot runs where its column is not the pad.  PADDED for rows of up to
// 16 edges with the posteriors in shared memory (DVB-S2 short frames: 1/2 +7 %, 3/5 +48 % in
// binary16); padded everywhere, C2 lost 8 % and the normal frames' device-memory kernel spilled
// (docs/gpu.md "Padded rows").
template <int DC_MAX, bool PADDED>
struct TableColumns {
    int col[DC_MAX];
    int dc, pad;

    __device__ __forceinline__ TableColumns(const int* __restrict__ cols_t, int width, int m, int r, int pad_)
        : dc(width), pad(PADDED ? 0 : pad_)
    {
#pragma unroll
        for (int e = 0; e < DC_MAX; ++e) col[e] = e < width ? cols_t[e * m + r] : pad;
    }
    __device__ __forceinline__ bool has(int e) const { return PADDED ? e < dc : col[e] != pad; }
    __device__ __forceinline__ int operator[](int e) const { return col[e]; }
};

// The columns of row t of a block row of circulants (SparseLayout.circulants): slot e < count
// holds the column t + a_e, less z where t >= lim_e, for a circulant of shift s in block column j
// (a_e = j z + s, lim_e = z - s, the block row's table in shared memory, read at a uniform
// address); slot DC_MAX - 1 the row's extra column (-1: none).  Computed at each use, so no
// register holds a column and none is loaded from device memory.  dc: the slots up to the last
// present one (slots count .. DC_MAX - 2 absent).
template <int DC_MAX>
struct CirculantColumns {
    const int2* slot;
    int t, count, extra, z, dc;

    __device__ __forceinline__ CirculantColumns(const int2* s, int t_, int c, int x, int z_)
        : slot(s), t(t_), count(c), extra(x), z(z_), dc(x >= 0 ? DC_MAX : c) {}
    __device__ __forceinline__ bool has(int e) const { return e == DC_MAX - 1 ? extra >= 0 : e < count; }
    __device__ __forceinline__ int operator[](int e) const
    {
        if (e == DC_MAX - 1) return extra;
        const int2 a = slot[e];
        return t + a.x - (t >= a.y ? z : 0);
    }
};

// float32: the compressed messages of a row (see the header), 16 bytes at rec4[r].
struct RowRecord {
    float mag1, mag2;
    unsigned long long signs;  // bit e: R_e < 0
    int idx;

    __device__ __forceinline__ static RowRecord load(const unsigned* rec, int, int r)
    {
        const uint4 w = reinterpret_cast<const uint4*>(rec)[r];
        return {__uint_as_float(w.x), __uint_as_float(w.y),
                w.z | ((unsigned long long)(w.w & kRecHighMask) << 32), (int)(w.w >> kRecIdxShift)};
    }
    __device__ __forceinline__ void store(unsigned* rec, int, int r) const
    {
        reinterpret_cast<uint4*>(rec)[r] = make_uint4(__float_as_uint(mag1), __float_as_uint(mag2), (unsigned)signs,
                                                      (unsigned)(signs >> 32) | ((unsigned)idx << kRecIdxShift));
    }
    __device__ __forceinline__ float message(int e) const
    {
        const float v = e == idx ? mag2 : mag1;
        return (signs >> e) & 1ull ? -v : v;
    }
    __device__ __forceinline__ static float message_at(const unsigned* rec, int m, int r, int e)
    {
        return load(rec, m, r).message(e);
    }
};

// float32: one check row of one frame held in registers: its record (R_old) and its Q = L - R_old
// (DC_MAX slots; the columns C: TableColumns or CirculantColumns).  gather issues the posterior
// loads of the row together; write reuses the Q.
template <int DC_MAX>
struct Float32Row {
    RowRecord old;
    float q[DC_MAX];

    template <class C>
    __device__ __forceinline__ void gather(const float* p, const C& col)
    {
#pragma unroll
        for (int e = 0; e < DC_MAX; ++e)
            if (col.has(e)) q[e] = __fsub_rn(p[col[e]], old.message(e));
    }

    // The new record (Algorithm 1): the two-min scan in edge order (|Q| < min1 moves min1 to min2),
    // f(min1), f(min2), and the sign of each R, the product of the other edges' signs (sign(x) = -1
    // iff x < 0).
    template <class C>
    __device__ __forceinline__ RowRecord update(const MinSumRule& k, const C& col) const
    {
        float m1 = __int_as_float(0x7f800000), m2 = m1;
        int idx = 0;
        unsigned long long neg = 0ull;
#pragma unroll
        for (int e = 0; e < DC_MAX; ++e) {
            if (col.has(e)) {
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
        const unsigned long long all = (1ull << col.dc) - 1ull;   // dc <= 58
        const unsigned long long signs = neg ^ ((__popcll(neg) & 1) ? all : 0ull);
        return {k.magnitude(m1), k.magnitude(m2), signs, idx};
    }

    // Layered: L = Q + R_new on every edge.
    template <class C>
    __device__ __forceinline__ void write(float* p, const RowRecord& now, const C& col) const
    {
#pragma unroll
        for (int e = 0; e < DC_MAX; ++e)
            if (col.has(e)) p[col[e]] = __fadd_rn(q[e], now.message(e));
    }
};

// binary16: R_e of a frame pair from f(min1), f(min2) and the word holding edge e's bits (header):
// byte 0 / 2 bit 7 - e % 8 "take min2" of the low / high frame, byte 1 / 3 "Q_e < 0".
__device__ __forceinline__ unsigned pair_message(unsigned mag1, unsigned mag2, unsigned word, int e)
{
    const unsigned v = word << (e & 7);
    return select_halves(mag1, mag2, with_signs_of(byte_top_masks(v), v));
}

// binary16: the record of a row of a frame pair, in word planes rec[w * m + r].
template <int DC_MAX>
struct PairRecord {
    static constexpr int kWords = (DC_MAX + 7) / 8;
    unsigned mag1, mag2;    // half2: f(min1) with the sign P, f(min2) with not P
    unsigned bits[kWords];  // per edge: take min2, Q < 0 (pair_message)

    __device__ __forceinline__ static PairRecord load(const unsigned* rec, int m, int r)
    {
        PairRecord x;
        x.mag1 = rec[r];
        x.mag2 = rec[m + r];
#pragma unroll
        for (int w = 0; w < kWords; ++w) x.bits[w] = rec[(2 + w) * m + r];
        return x;
    }
    __device__ __forceinline__ void store(unsigned* rec, int m, int r) const
    {
        rec[r] = mag1;
        rec[m + r] = mag2;
#pragma unroll
        for (int w = 0; w < kWords; ++w) rec[(2 + w) * m + r] = bits[w];
    }
    __device__ __forceinline__ unsigned message(int e) const { return pair_message(mag1, mag2, bits[e >> 3], e); }
    __device__ __forceinline__ static unsigned message_at(const unsigned* rec, int m, int r, int e)
    {
        return pair_message(rec[r], rec[m + r], rec[(2 + (e >> 3)) * m + r], e);
    }
};

// binary16: one check row of a frame pair, HalfMinSum's arithmetic (qc_decode.cuh) on a sparse row
// (the columns C as in Float32Row).
template <int DC_MAX>
struct PairRow {
    PairRecord<DC_MAX> old;
    unsigned q[DC_MAX];  // half2 bits

    template <class C>
    __device__ __forceinline__ void gather(const unsigned* p, const C& col)
    {
#pragma unroll
        for (int e = 0; e < DC_MAX; ++e)
            if (col.has(e)) q[e] = as_bits(__hsub2_rn(as_half2(p[col[e]]), as_half2(old.message(e))));
    }

    // The two smallest |Q| of each frame (two chains, even and odd edges, merged: the multiset's
    // two smallest, as the reference's scan), f of each, the sign P of the Q product (Q is never
    // -0: half_llr_pair), and each edge's bits.
    template <class C>
    __device__ __forceinline__ PairRecord<DC_MAX> update(const MinSumRule& k, const C& col) const
    {
        __half2 c1[2] = {as_half2(kHalfInf2), as_half2(kHalfInf2)}, c2[2] = {c1[0], c1[0]};
        unsigned parity = 0u;
#pragma unroll
        for (int e = 0; e < DC_MAX; ++e) {
            if (col.has(e)) {
                const __half2 a = __habs2(as_half2(q[e]));
                const int c = e & 1;
                c2[c] = __hmin2(c2[c], __hmax2(c1[c], a));
                c1[c] = __hmin2(c1[c], a);
                parity ^= q[e];
            }
        }
        const __half2 m1 = __hmin2(c1[0], c1[1]);
        const __half2 m2 = __hmin2(__hmin2(c2[0], c2[1]), __hmax2(c1[0], c1[1]));
        const unsigned sign = parity & kHalfSigns;
        PairRecord<DC_MAX> now{};
        now.mag1 = half_magnitude(m1, k.so) ^ sign;
        now.mag2 = half_magnitude(m2, k.so) ^ sign ^ kHalfSigns;
#pragma unroll
        for (int e = 0; e < DC_MAX; ++e) {
            if (col.has(e)) {
                const unsigned x = with_signs_of(__heq2_mask(__habs2(as_half2(q[e])), m1), q[e]);
                now.bits[e >> 3] |= (x >> (e & 7)) & (0x80808080u >> (e & 7));
            }
        }
        return now;
    }

    template <class C>
    __device__ __forceinline__ void write(unsigned* p, const PairRecord<DC_MAX>& now, const C& col) const
    {
#pragma unroll
        for (int e = 0; e < DC_MAX; ++e)
            if (col.has(e)) p[col[e]] = as_bits(__hadd2_rn(as_half2(q[e]), as_half2(now.message(e))));
    }
};

// What a precision puts in a posterior word: float32, one frame a block ...
struct Float32Frames {
    static constexpr int kFrames = 1;
    using Word = float;
    template <int DC_MAX> using Record = RowRecord;
    template <int DC_MAX> using Row = Float32Row<DC_MAX>;
    __host__ __device__ static constexpr int record_words(int) { return 4; }
    static constexpr float kPad = __builtin_huge_valf();
    __device__ static Word channel(const float (&v)[1]) { return v[0]; }
    __device__ static Word add(Word a, Word b) { return __fadd_rn(a, b); }
    __device__ static unsigned negative(Word w) { return w < 0.0f ? 1u : 0u; }   // bit h: frame h's sign
    __device__ static float value(Word w, int) { return w; }
};

// ... binary16, a frame pair a block (low half: the block's first frame).
struct HalfPairs {
    static constexpr int kFrames = 2;
    using Word = unsigned;
    template <int DC_MAX> using Record = PairRecord<DC_MAX>;
    template <int DC_MAX> using Row = PairRow<DC_MAX>;
    __host__ __device__ static constexpr int record_words(int dc_max) { return 2 + (dc_max + 7) / 8; }
    static constexpr unsigned kPad = kHalfInf2;
    __device__ static Word channel(const float (&v)[2]) { return half_llr_pair(v[0], v[1]); }
    __device__ static Word add(Word a, Word b) { return as_bits(__hadd2_rn(as_half2(a), as_half2(b))); }
    __device__ static unsigned negative(Word w) { return ((w >> 15) & 1u) | ((w >> 30) & 2u); }
    __device__ static float value(Word w, int h) { return h ? __high2float(as_half2(w)) : __low2float(as_half2(w)); }
};

// CIRC (layered, POST_SHARED): the rows' columns from circ[i * DC_MAX + e] (block row i's (a_e, lim_e),
// entry DC_MAX - 1 holding (count, 0); copied after the posteriors and the pad word in shared memory) and extra[r],
// circulants of size z (CirculantColumns); else from cols_t (TableColumns).
template <class P, int DC_MAX, bool FLOOD, typename In, bool POST_SHARED, bool CIRC = false>
__device__ void sparse_frames(const In* __restrict__ llr, float scale, unsigned char* __restrict__ bits,
                              int packed, int* __restrict__ iters_out, unsigned char* __restrict__ valid_out,
                              const int* __restrict__ cols_t, int width,
                              const int* __restrict__ layer_start, const int* __restrict__ col_ptr,
                              const int2* __restrict__ col_edges, const int* __restrict__ kcol,
                              const int2* __restrict__ circ, const int* __restrict__ extra, int z,
                              char* __restrict__ scratch, int block_bytes,
                              int n, int m, int layers, int frames, int max_iter, int early_stop, int rule,
                              float alpha, float beta, float* __restrict__ soft)
{
    using Word = typename P::Word;
    using Record = typename P::template Record<DC_MAX>;
    using Row = typename P::template Row<DC_MAX>;
    static_assert(!CIRC || (POST_SHARED && !FLOOD), "circulant rows: layered, posteriors in shared memory");
    constexpr int F = P::kFrames;
    extern __shared__ float4 smem_vec[];
    __shared__ int flag[F];  // kItersBad once a non-finite LLR of the frame is seen
    const long long f0 = (long long)blockIdx.x * F;
    if (f0 >= frames) return;
    const int present = min(F, (int)(frames - f0));
    const int tid = threadIdx.x, nt = blockDim.x;
    char* mine = scratch + blockIdx.x * (long long)block_bytes;
    unsigned* rec = reinterpret_cast<unsigned*>(mine);
    Word* post = POST_SHARED ? reinterpret_cast<Word*>(smem_vec)
                             : reinterpret_cast<Word*>(mine + 4ll * P::record_words(DC_MAX) * m);
    Word* lch = post + n;  // flooding only
    const int pad_column = FLOOD ? 2 * n : n;   // the pad column of lighter rows (TableColumns): +inf
    constexpr bool PADDED = POST_SHARED && DC_MAX <= 16;
    const MinSumRule k(rule, alpha, beta);

    const auto at = [kcol](int c) { return kcol != nullptr ? kcol[c] : c; };  // frame -> kernel column
    if (tid < F) flag[tid] = 0;
    if (tid == 0) post[pad_column] = P::kPad;
    __syncthreads();
    const In* src = llr + f0 * n;
    for (int i = tid; i < n; i += nt) {
        float v[F];
#pragma unroll
        for (int h = 0; h < F; ++h) v[h] = h < present ? llr_value(src[h * (long long)n + i], scale, &flag[h]) : 1.0f;
        const Word c = P::channel(v);   // an absent frame of a pair: LLRs +1, the all-zero codeword
        post[at(i)] = c;
        if (FLOOD) lch[at(i)] = c;
    }
    for (int r = tid; r < m; r += nt) Record{}.store(rec, m, r);
    int2* circ_sh = reinterpret_cast<int2*>(post + ((n + 2) & ~1));   // CIRC: after the posteriors and the pad
    if (CIRC)
        for (int i = tid; i < m / z * DC_MAX; i += nt) circ_sh[i] = circ[i];
    __syncthreads();

    // Frame h's results at its stop (iteration `it`, syndrome satisfied or not), by the whole block.
    const auto finish = [&](int h, int it, bool satisfied) {
        const long long f = f0 + h;
        if (tid == 0) {
            iters_out[f] = it;
            valid_out[f] = (satisfied ? 1 : 0) | (flag[h] ? llr::kBadLlrFlag : 0);
        }
        if (soft != nullptr) {  // the posteriors as float32 (binary16: exact) in the caller's sign
            const unsigned negative = scale < 0.0f;
            for (int i = tid; i < n; i += nt) soft[f * n + i] = flip(P::value(post[at(i)], h), negative);
        }
        if (packed) {
            const int nbytes = (n + 7) >> 3;
            for (int j = tid; j < nbytes; j += nt) {
                unsigned v = 0u;
                for (int b = 0; b < 8; ++b)
                    v |= (8 * j + b < n ? (P::negative(post[at(8 * j + b)]) >> h) & 1u : 0u) << (7 - b);
                bits[f * nbytes + j] = (unsigned char)v;
            }
        } else {
            for (int i = tid; i < n; i += nt) bits[f * n + i] = (P::negative(post[at(i)]) >> h) & 1u;
        }
    };

    unsigned pending = (1u << present) - 1u;  // frames whose results are not written yet
    for (int it = 1; it <= max_iter; ++it) {
        if (!FLOOD) {
            for (int l = 0; l < layers; ++l) {
                const int begin = layer_start[l], end = layer_start[l + 1];
                const int i = CIRC ? begin / z : 0;   // a layer lies in one block row
                const int2* slots = circ_sh + i * DC_MAX;
                const int count = CIRC ? slots[DC_MAX - 1].x : 0;
                for (int r = begin + tid; r < end; r += nt) {
                    const auto col = [&] {
                        if constexpr (CIRC)
                            return CirculantColumns<DC_MAX>(slots, r - i * z, count, extra[r], z);
                        else
                            return TableColumns<DC_MAX, PADDED>(cols_t, width, m, r, pad_column);
                    }();
                    Row row;
                    row.old = Record::load(rec, m, r);
                    row.gather(post, col);
                    const Record now = row.update(k, col);
                    row.write(post, now, col);
                    now.store(rec, m, r);
                }
                __syncthreads();
            }
        } else {
            for (int r = tid; r < m; r += nt) {
                const TableColumns<DC_MAX, PADDED> col(cols_t, width, m, r, pad_column);
                Row row;
                row.old = Record::load(rec, m, r);
                row.gather(post, col);
                row.update(k, col).store(rec, m, r);
            }
            __syncthreads();
            for (int v = tid; v < n; v += nt) {
                Word t = lch[v];
                for (int e = col_ptr[v]; e < col_ptr[v + 1]; ++e) {
                    const int2 rp = col_edges[e];
                    t = P::add(t, Record::message_at(rec, m, rp.x, rp.y));
                }
                post[v] = t;
            }
            __syncthreads();
        }
        if (early_stop || it == max_iter) {
            unsigned mine_odd = 0u;   // bit h: a row of this thread fails frame h's check
            for (int r = tid; r < m && mine_odd != (1u << F) - 1u; r += nt) {
                unsigned p = 0u;
                for (int e = 0; e < width; ++e) p ^= P::negative(post[cols_t[e * m + r]]);   // a pad adds 0
                mine_odd |= p;
            }
            unsigned odd = 0u;        // bit h: frame h's syndrome failed
#pragma unroll
            for (int h = 0; h < F; ++h) odd |= (__syncthreads_or((mine_odd >> h) & 1u) ? 1u : 0u) << h;
            const unsigned stop = it == max_iter ? pending : early_stop ? pending & ~odd : 0u;
            for (int h = 0; h < F; ++h)
                if ((stop >> h) & 1u) finish(h, it, !((odd >> h) & 1u));
            pending &= ~stop;
            if (!pending) break;
            if (stop) __syncthreads();   // the results are read before the next iteration writes
        }
    }
}

}  // namespace

// Entry points sp<DC_MAX>_<messages>_<posteriors>_<schedule>_<input>: rows of up to DC_MAX edges.
// Launch bounds (SPARSE_THREADS, SPARSE_BLOCKS; registers count per quarter of the register file,
// gpuldpc.cuda.tuning.blocks_per_sm):
//   8: 384 threads, three blocks an SM (56 registers), so that DVB-S2 normal frames in device
//      memory run three blocks of 12 warps, not two;
//   16: 512 threads; binary16 with posteriors in shared memory (DVB-S2 short frames, 3/5 .. 4/5)
//      384 and two blocks an SM: 71 registers instead of 84, six warps a quarter of the file, so
//      two blocks of 12 warps fit where one did (float32 keeps 512: at 80 registers it spilled
//      and lost 5 %);
//   32: 384, DVB-S2's 360-row layers; 34, 40, 58: 256, their rows' registers.  34 is C2's rows of
//      33 edges: 159 registers in binary16 (shared, layered), three warps a quarter of the file,
//      three blocks of 4 warps an SM where sp40's 172 hold two.
// Those but 8 and binary16 shared 16 name no block count (0: ptxas's own register target; a "1"
// let it give sp40 float32 203 registers, and C2 ran at 4.0 instead of 6.4 Gb/s).  Messages f32
// (one frame a block) | f16 (binary16, a frame pair a block); posteriors sh (shared memory: n
// words of dynamic shared memory, 2n flooding) | gl (device memory, in the block's scratch of
// block_bytes after its records); schedule layered | flooding; input f32 | f16 | i8 (LLR = value *
// scale).
#define SPARSE_ARGS(In)                                                                              \
    const In *llr, float scale, unsigned char *bits, int packed, int *iters, unsigned char *valid,   \
        const int *cols_t, int width, const int *layer_start, const int *col_ptr,                    \
        const int2 *col_edges, const int *kcol, const int2 *circ, const int *extra, int z,           \
        char *scratch, int block_bytes, int n, int m, int layers, int frames,                        \
        int max_iter, int early_stop, int rule, float alpha, float beta, float *soft
#define SPARSE_THREADS(DC, PAIRS_SH) (DC > 32 ? 256 : DC > 16 ? 384 : DC > 8 ? ((PAIRS_SH) ? 384 : 512) : 384)
#define SPARSE_BLOCKS(DC, PAIRS_SH) (DC > 16 ? 0 : DC > 8 ? ((PAIRS_SH) ? 2 : 0) : 3)
#define SPARSE_KERNEL(name, DC, P, FLOOD, In, SHARED, CIRC)                                            \
    extern "C" __global__ void __launch_bounds__(SPARSE_THREADS(DC, SHARED && P::kFrames == 2),           \
                                                 SPARSE_BLOCKS(DC, SHARED && P::kFrames == 2))            \
        name(SPARSE_ARGS(In))                                                                        \
    {                                                                                                 \
        sparse_frames<P, DC, FLOOD, In, SHARED, CIRC>(llr, scale, bits, packed, iters, valid, cols_t,   \
                                                      width, layer_start, col_ptr, col_edges, kcol,    \
                                                      circ, extra, z, scratch, block_bytes, n, m,      \
                                                      layers, frames, max_iter, early_stop, rule,      \
                                                      alpha, beta, soft);                              \
    }
#define SPARSE_INPUTS(prefix, DC, P, FLOOD, SHARED, CIRC)                  \
    SPARSE_KERNEL(prefix##_f32, DC, P, FLOOD, float, SHARED, CIRC)         \
    SPARSE_KERNEL(prefix##_f16, DC, P, FLOOD, __half, SHARED, CIRC)        \
    SPARSE_KERNEL(prefix##_i8, DC, P, FLOOD, signed char, SHARED, CIRC)
#define SPARSE_SCHEDULES(prefix, DC, P, SHARED)                      \
    SPARSE_INPUTS(prefix##_layered, DC, P, false, SHARED, false)     \
    SPARSE_INPUTS(prefix##_flooding, DC, P, true, SHARED, false)
#define SPARSE_VARIANTS(prefix, DC)                                  \
    SPARSE_SCHEDULES(prefix##_f32_sh, DC, Float32Frames, true)       \
    SPARSE_SCHEDULES(prefix##_f32_gl, DC, Float32Frames, false)      \
    SPARSE_SCHEDULES(prefix##_f16_sh, DC, HalfPairs, true)           \
    SPARSE_SCHEDULES(prefix##_f16_gl, DC, HalfPairs, false)

SPARSE_VARIANTS(sp8, 8)
SPARSE_VARIANTS(sp16, 16)
SPARSE_VARIANTS(sp32, 32)
SPARSE_VARIANTS(sp34, 34)
SPARSE_VARIANTS(sp40, 40)
SPARSE_VARIANTS(sp58, 58)
// Circulant rows (CirculantColumns): up to 32 circulants a row and one extra column, float32, layered,
// posteriors in shared memory (CCSDS C2: 32 and the mother's two pad columns).  93-96 registers
// against sp34's 128 and 44 bytes of spill: five blocks an SM instead of four.  In binary16 the
// computed columns (126 registers, four blocks instead of three) ran 18 % slower than sp34's
// (docs/gpu.md "Circulant rows"), so binary16 keeps the table.
SPARSE_INPUTS(sp33c_f32_sh_layered, 33, Float32Frames, false, true, true)
