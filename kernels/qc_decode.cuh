// Fused QC-LDPC decoder: all iterations of a batch in one launch, posteriors in shared
// memory, device memory sees the LLRs once and the hard decisions once.
//
// Paper 004 (Wang, Wu, Yin, Cavallaro, "High throughput low latency LDPC decoding on GPU
// for SDR systems"):
//   * check-node update eq. (1) with the two-min algorithm (Algorithm 1): a check row keeps
//     only min1, min2, the index of min1 and the sign bits of Q, so its messages R_mn are
//     rebuilt on the fly;  R_mn = sign_excl * f(n == idx ? min2 : min1)  with
//     f(m) = alpha * m (normalized min-sum) or max(m - beta, 0) (offset min-sum);
//   * variable-node update eqs. (2), (3):  Q = L - R_old,  L = Q + R_new  (layered), or
//     total = Lch + sum_m R_mn in increasing check-row order,  Q = total - R  (flooding);
//   * section III-C: z not a multiple of the warp size.  Here threads are not padded per
//     frame at all: thread t of a block serves frame t / z, row t % z, so frames share
//     warps and only the block's last warp carries idle lanes.
// Sum-product keeps every message R_mn in device memory (coalesced: edge-major, row-minor per
// frame) and computes them in the phi domain (Gallager; paper 004 section III-A's log-domain
// rule in the form of the cpu backend, lib/cpu_binary_decoder.cpp SpaRow):
//   R_e = sign_e * phi(sum_{j != e} phi(|Q_j|)),  phi(x) = -ln tanh(x/2),
// the sum over the other edges as a prefix plus a suffix sum, phi clamped to 30 (the
// reference's |R| <= SPA_MAX_LLR), accurate expf/expm1f/log1pf.
//
// QC layout (shared with syndrome.cu, built by gpuldpc.cuda.layout): the non-empty blocks
// of the base matrix in layer order, edges[b] = (j*z + s, z - s) for a block in base
// column j with shift s: row r of the layer checks column j*z + (r + s) mod z, which is
// r + (j*z + s) for r < z - s and that minus z otherwise.  Blocks layer_start[l] ..
// layer_start[l+1]-1 belong to base row (layer) l.  Layers run in base-row order.
//
// Bit-exactness: every float operation mirrors the reference decoder
// (gpuldpc.decoders.reference): float32, Q = L - R_old, R_new = sign * f(min_excl),
// sign(x) = -1 iff x < 0, L = Q + R_new; flooding sums in increasing check-row order,
// which for a QC code is increasing layer order for every column.
//
// Binary16 (HalfMinSum, entry points qc_hs*): the same min-sum in IEEE binary16, two frames a
// thread packed as half2, bit-exact with the reference decoder's float16 arithmetic (clamps
// kHalfLlrMax on the channel LLRs, kHalfRMax on the message magnitudes; docs/gpu.md).
//
// Outputs per frame: hard decisions (bit = 1 iff posterior < 0) unpacked (one byte per
// bit) or packed (np.packbits order: first bit in the most significant bit, n/8 bytes
// rounded up), the number of iterations run, and the flags: bit 0 syndrome satisfied, bit 1
// the frame's LLRs held NaN or +-inf (decoded under the rule of llr_load.cuh).  With early stop
// a frame stops after the first full iteration whose decisions satisfy every check.  On request
// (soft != 0) the soft output: the frame's float32 posteriors at its stop (binary16: converted,
// exact) in the caller's sign (negated back for a negative scale), written once, coalesced.

// (Device code of the binary decoders; the entry points are in qc_decode.cu, the
// resident latency entry points in qc_resident.cu.)
#pragma once

#include <cuda_fp16.h>

#include "llr_load.cuh"

namespace {

constexpr unsigned kSignMask = (1u << 27) - 1;  // sign bits of Q (dc <= 27)
constexpr int kIdxShift = 27;                   // index of min1 in the top 5 bits
constexpr int kEdgePad = 32;                    // spare (zero) block entries after the table

enum Rule { kNms = 0, kOms = 1, kSpa = 2 };

// Largest block of the row-per-thread entry points (caps registers at 65536 / 512 = 128); the
// register variants past 128 registers take a smaller bound (their MAX_THREADS, qc_decode.cu).
constexpr int kMaxBlockThreads = 512;

// Binary16 kernels: channel LLRs are clamped to +-kHalfLlrMax before rounding to half and
// message magnitudes to kHalfRMax, so |L| <= kHalfLlrMax + dv * kHalfRMax for column weight dv
// (the host admits a code only where that is below 65504, the largest half:
// gpuldpc.decoders.reference_binary.check_half_range).  Powers of two, exact in half.
constexpr float kHalfLlrMax = 2048.0f;
constexpr unsigned kHalfRMax2 = 0x68006800u;  // half2(2048, 2048)
constexpr unsigned kHalfInf2 = 0x7c007c00u;   // half2(+inf, +inf): the pad words of padded rows
constexpr unsigned kHalfSigns = 0x80008000u;  // the sign bits of both halves

// Input LLR as float32 before the rule: value * scale (one FMA) for every input type.  The scale
// carries the caller's sign convention: -scale for LLRs with positive = bit 1 (GNU Radio, gr-fec;
// gl.Decoder(positive_llr_bit=1)), so that input is decoded where it lies, with no negating copy
// on the host; x * -1 is exact, and NaN, +-inf keep their meaning for the rule.  "+ 0.0f" turns
// -0.0 into +0.0 and leaves every other value as it is; -0.0 and +0.0 behave alike under the
// reference's rules (sign(x) = -1 iff x < 0, bit = 1 iff x < 0), and without -0.0 in the input no
// posterior or Q is ever -0.0 (a float32 sum or difference is -0.0 only from -0.0 operands), so
// the sign bit of Q is exactly "Q < 0" (used by the register kernels' sign bookkeeping).
__device__ __forceinline__ float llr_float(float x, float scale) { return x * scale + 0.0f; }
__device__ __forceinline__ float llr_float(__half x, float scale) { return __half2float(x) * scale + 0.0f; }
__device__ __forceinline__ float llr_float(signed char x, float scale) { return (float)x * scale + 0.0f; }

// Packed int4 input (the binary16 kernels' "i4" entry points; python/gpuldpc/int4.py): a frame's
// row is ceil(n/2) bytes, byte j holding column 2j in its low nibble and 2j + 1 in its high one,
// each a two's complement 4-bit value, -8 read as -7; LLR = value * scale, the float32 the i8
// kernels form from the int8 rows kernels/transport.cu unpack_int4 writes of the same bytes.  A
// tag type: its rows are addressed in bytes (frame_row), its values read by load_pairs.
struct Nibbles {
    unsigned char byte;
};

template <typename In> constexpr bool is_f32 = false;
template <> constexpr bool is_f32<float> = true;
template <typename In> constexpr bool is_i8 = false;  // int8 (and int4) input is always finite
template <> constexpr bool is_i8<signed char> = true;
template <> constexpr bool is_i8<Nibbles> = true;

// Frame f's row of input LLRs (n values a frame).
template <typename In>
__device__ __forceinline__ const In* frame_row(const In* llr, long long f, int n)
{
    return llr + f * n;
}
template <>
__device__ __forceinline__ const Nibbles* frame_row(const Nibbles* llr, long long f, int n)
{
    return llr + f * ((n + 1) / 2);
}

// Column k (0..7) of 8 packed int4 columns in a word (little-endian: column k in bits 4k..4k+3)
// as the float32 LLR (llr::nibble, then llr_float's product).
__device__ __forceinline__ float nibble_llr(unsigned word, int k, float scale)
{
    return (float)llr::nibble((word >> (4 * k)) & 15u) * scale + 0.0f;
}

// Input LLR as float32, through the rule for non-finite values (llr_load.cuh: NaN -> +0,
// +-inf -> +-kLlrSaturation, bad = 1; finite values pass unchanged).
template <typename In>
__device__ __forceinline__ float llr_value(In x, float scale, unsigned& bad)
{
    if constexpr (is_i8<In>) return llr_float(x, scale);
    else return llr::rule(llr_float(x, scale), bad);
}

// Four input LLRs as loaded by one vector load (16, 8 or 4 bytes), converted by cvt4 (the latency
// kernel issues every load of a thread before it waits on one; its float input goes by cp.async).
template <typename In> struct Raw4;
template <> struct Raw4<float> { using T = float4; };
template <> struct Raw4<__half> { using T = uint2; };
template <> struct Raw4<signed char> { using T = char4; };
template <> struct Raw4<Nibbles> { using T = unsigned; };  // (declared only: no shared-state kernel takes i4)
template <typename In>
__device__ __forceinline__ typename Raw4<In>::T raw4(const In* p)
{
    return *reinterpret_cast<const typename Raw4<In>::T*>(p);
}
__device__ __forceinline__ float4 cvt4(float4 v, float s, unsigned& bad)
{
    return llr::rule4(make_float4(llr_float(v.x, s), llr_float(v.y, s), llr_float(v.z, s), llr_float(v.w, s)), bad);
}
__device__ __forceinline__ float4 cvt4(uint2 v, float s, unsigned& bad)
{
    const __half2 a = *reinterpret_cast<const __half2*>(&v.x);
    const __half2 b = *reinterpret_cast<const __half2*>(&v.y);
    return llr::rule4(make_float4(llr_float(__low2half(a), s), llr_float(__high2half(a), s),
                                  llr_float(__low2half(b), s), llr_float(__high2half(b), s)), bad);
}
__device__ __forceinline__ float4 cvt4(char4 v, float s, unsigned&)
{
    return make_float4(llr_float((signed char)v.x, s), llr_float((signed char)v.y, s),
                       llr_float((signed char)v.z, s), llr_float((signed char)v.w, s));
}

// The loads of decode_frames: as above, and a non-finite LLR or-s kItersBad into `flag`, its
// frame's iteration word (iters[f], set before any load; turned into llr::kBadLlrFlag in
// valid_out at the end), so clean input costs only the test of each value.
constexpr int kItersBad = 1 << 30;
template <class Load>  // load(bad), then the flag
__device__ __forceinline__ auto flagged(int* flag, Load load)
{
    unsigned bad = 0u;
    const auto v = load(bad);
    if (bad) atomicOr(flag, kItersBad);
    return v;
}
template <typename In>
__device__ __forceinline__ float llr_value(In x, float s, int* flag)
{
    return flagged(flag, [&](unsigned& bad) { return llr_value(x, s, bad); });
}
template <typename V>
__device__ __forceinline__ float4 cvt4(V v, float s, int* flag)
{
    return flagged(flag, [&](unsigned& bad) { return cvt4(v, s, bad); });
}
// Four consecutive input LLRs of one frame as float32 (one vector load).
template <typename In>
__device__ __forceinline__ float4 llr_value4(const In* p, float s, int* flag)
{
    return cvt4(raw4(p), s, flag);
}

// Asynchronous global -> shared copy of `bytes` (4, 8 or 16) bytes (cp.async, sm_80+: no register,
// no scoreboard; completion by commit groups), so work can proceed while the data is in flight.
__device__ __forceinline__ void cp_async(void* dst, const void* src, int bytes)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    const size_t g = __cvta_generic_to_global(src);
    if (bytes == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(g) : "memory");
    else if (bytes == 8) asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(d), "l"(g) : "memory");
    else asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(d), "l"(g) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>  // wait until at most N of this thread's commit groups are pending
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

// Shared-memory load/store at a 32-bit shared address (no base add between a barrier and the load).
__device__ __forceinline__ float lds_abs(unsigned a)
{
    float v;
    asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(a) : "memory");
    return v;
}
__device__ __forceinline__ void sts_abs(unsigned a, float v)
{
    asm volatile("st.shared.f32 [%0], %1;" ::"r"(a), "f"(v) : "memory");
}

// The byte / word at a 32-bit shared address (volatile: read where it stands, never hoisted out of
// a loop)
__device__ __forceinline__ unsigned lds_u8(unsigned a)
{
    unsigned v;
    asm volatile("ld.shared.u8 %0, [%1];" : "=r"(v) : "r"(a));
    return v;
}
__device__ __forceinline__ unsigned lds_u32(unsigned a)
{
    unsigned v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(a));
    return v;
}

// x, opaque to the compiler's algebra (keeps a factored xor factored: one LOP3 an edge)
__device__ __forceinline__ unsigned opaque(unsigned x)
{
    unsigned y;
    asm("mov.b32 %0, %1;" : "=r"(y) : "r"(x));
    return y;
}

// v with its sign flipped when s == 1 (s in {0, 1}); equals v * (s ? -1 : 1) exactly.
__device__ __forceinline__ float flip(float v, unsigned s)
{
    return __int_as_float(__float_as_int(v) ^ (int)(s << 31));
}

// v with its sign flipped when bit e of `bits` is set (e a compile-time constant in the
// unrolled loops: one shift and one LOP3).
__device__ __forceinline__ float flip_bit(float v, unsigned bits, int e)
{
    return __int_as_float(__float_as_int(v) ^ (int)((bits << (31 - e)) & 0x80000000u));
}

// Check-to-variable magnitude f(min_excl): NMS alpha*m, OMS max(m - beta, 0).
__device__ __forceinline__ float minsum_magnitude(float m, int rule, float alpha, float beta)
{
    return rule == kOms ? fmaxf(m - beta, 0.0f) : alpha * m;
}

// Row r of a layer checks, through block (j, s), column j*z + (r + s) mod z, that is
// r + (j*z + s) - (r >= z - s ? z : 0).  In shared memory the blocks are held as
// e4 = (4 * (j*z + s), z - s), so the byte offset of that column's entry from the row's
// own entry (post + r) is  e4.x - (r >= e4.y ? 4z : 0):  compare, select, add.
__device__ __forceinline__ int qc_offset(int2 e4, int r, int z4)
{
    return e4.x - (r >= e4.y ? z4 : 0);
}

__device__ __forceinline__ float& at(float* row_entry, int offset)
{
    return *reinterpret_cast<float*>(reinterpret_cast<char*>(row_entry) + offset);
}

// The 4-byte word at a byte offset as raw bits (a half2 of the binary16 kernels).
__device__ __forceinline__ unsigned& word(float* row_entry, int offset)
{
    return *reinterpret_cast<unsigned*>(reinterpret_cast<char*>(row_entry) + offset);
}

__device__ __forceinline__ __half2 as_half2(unsigned u) { return *reinterpret_cast<const __half2*>(&u); }
__device__ __forceinline__ unsigned as_bits(__half2 h) { return *reinterpret_cast<const unsigned*>(&h); }

// Two channel LLRs (float32, as llr_value gives them) as the half2 of a frame pair: each
// clamped to +-kHalfLlrMax, rounded to nearest half, then "+ 0" (a negative value that rounds
// to -0 becomes +0: no posterior or Q is then ever -0, so its sign bit is exactly "< 0").
__device__ __forceinline__ unsigned half_llr_pair(float lo, float hi)
{
    const __half2 h = __floats2half2_rn(fminf(fmaxf(lo, -kHalfLlrMax), kHalfLlrMax),
                                        fminf(fmaxf(hi, -kHalfLlrMax), kHalfLlrMax));
    return as_bits(__hadd2_rn(h, __float2half2_rn(0.0f)));
}

// 0xffff in the low half when bit 7 of v is set, in the high half when bit 23 is set (PRMT
// with sign replication: bytes 0, 1 copy the top bit of byte 0, bytes 2, 3 that of byte 2).
__device__ __forceinline__ unsigned byte_top_masks(unsigned v)
{
    unsigned m;
    asm("prmt.b32 %0, %1, %2, 0xAA88;" : "=r"(m) : "r"(v), "r"(0u));
    return m;
}

// Per half: b where mask is 0xffff, else a (one LOP3).
__device__ __forceinline__ unsigned select_halves(unsigned a, unsigned b, unsigned mask)
{
    return (a & ~mask) | (b & mask);
}

// The sign bits of both halves from s, the other bits from m: one LOP3 (written out, as
// the compiler splits this constant select into two).
__device__ __forceinline__ unsigned with_signs_of(unsigned m, unsigned s)
{
    unsigned d;
    asm("lop3.b32 %0, %1, %2, %3, 0xD8;" : "=r"(d) : "r"(m), "r"(s), "r"(kHalfSigns));  // c ? b : a
    return d;
}

// Binary16 message magnitude min(max(scale * m - offset, 0), kHalfRMax) of both frames, with
// so = (scale, offset) in half: NMS (alpha, 0) gives alpha * m, OMS (1, beta) max(m - beta, 0)
// (minsum_magnitude), each rounded once (an FMA whose other part is exact).
__device__ __forceinline__ unsigned half_magnitude(__half2 m, __half2 so)
{
    const __half2 f = __hfma2_relu(__low2half2(so), m, __hneg2(__high2half2(so)));
    return as_bits(__hmin2(f, as_half2(kHalfRMax2)));
}

// Two-min update (Algorithm 1, lines 3-14) of one |Q| at position e.
__device__ __forceinline__ void two_min(float q, int e, float& m1, float& m2, int& idx, unsigned& signs)
{
    const float a = fabsf(q);
    signs |= (q < 0.0f ? 1u : 0u) << e;
    const bool lower = a < m1;
    m2 = lower ? m1 : fminf(m2, a);
    idx = lower ? e : idx;
    m1 = lower ? a : m1;
}

// phi(x) = -ln tanh(x/2) = log1p(2 e^-x / (1 - e^-x)) for x clamped to [2 e^-30, inf), so that
// phi <= 30 and phi(phi(x)) caps |R| at 30 = 2 atanh(tanh(15)), the reference's SPA_MAX_LLR
// (gpuldpc.decoders.reference_binary); the cpu backend's Phi.  1 - e^-x by expm1f and the
// log1pf are the accurate library functions (both cancel otherwise: x near 0, phi near 0);
// e^-x by __expf and the quotient by __fdividef (relative errors ~1e-6 on a value that a
// relative error enters as such).  Measured against expf and the IEEE division: the same
// 1e-4 agreement with the reference after 10 iterations, 10-15 % faster (docs/gpu.md).
__device__ __forceinline__ float spa_phi(float x)
{
    const float xc = fmaxf(x, 1.8715e-13f);
    return fminf(log1pf(__fdividef(2.0f * __expf(-xc), -expm1f(-xc))), 30.0f);
}

// Min-sum messages compressed per check row (min1, min2, idx, sign bits) and held in
// registers: LAYERS_MAX rows per thread (one per layer), DC_MAX blocks per layer at most.
// Per row the state is f(min1), f(min2) (f = the NMS scale or OMS offset, so the stored
// values are the message magnitudes) and one word: the sign bits of the messages R (bit e
// = sign of R to edge e = parity of all Q signs xor the sign of Q_e) | idx << 27.
// Whether a row of the wide variants (DC_MAX > 8: the pruned 5G NR graphs, whose layers hold 3 to
// 19 blocks, in tables of 10, 16 or 24 slots) is done at edge e, one uniform branch (dc is the
// layer's) where a row can end instead of running every padded slot: past its dc blocks and its
// first 4 slots (two min chains of two edges each), at a whole 4-edge chunk in the register
// variants, at its last block (EACH) in the variants with the state in device memory (`hm24`,
// `mm24`: up to 46 layers, 3 to 8 blocks in most): BG1 rate 1/3 317 slots a frame pass for its 316
// blocks against 404 in chunks (1104 with all 24), 12-13 % faster; in the register variants a
// branch an edge cost 9 % on BG1 rate 8/9's 19-block rows (84 slots in chunks, 80 with EACH).  The
// state a skipped pad slot would have left is the one it keeps (select bit 0, sign +), so the
// numbers do not change.  The narrower variants (WiFi, WiMAX) keep their branch-free rows.
template <int DC_MAX, bool EACH>
__device__ __forceinline__ bool past_row(int e, int dc)
{
    return DC_MAX > 8 && e >= 4 && e >= dc && (EACH || (e & 3) == 0);
}

// The check rows' state of the min-sum variants RegisterMinSum and HalfMinSum, WORDS 32-bit words
// a row and layer, read when a row step starts (begin, get) and replaced when it ends (put, end):
// FIXED words, then WORDS - FIXED words of per-edge bits, one for each 8 edges the row step visits
// (past_row: the row's blocks, at least 4; HalfMinSum's select and sign bits).
//   LAYERS > 0: in registers, the layer index a compile-time constant (the unrolled layer loop);
//   LAYERS == 0: in device memory, for graphs with more layers than registers hold (5G NR BG1
//     below rate 2/3: up to 46 layers, BG2 below 1/3: up to 42).  Word k of layer l of the row r
//     of a frame (binary16: a frame pair) `slot` lies at msg_store[(slot * WORDS + k) * mb * z +
//     l * z + r]: coalesced over a block's rows.  A row is visited in layer order 0, 1, ..,
//     mb - 1, 0, .. and by its own thread only, so no barrier orders these accesses, and the
//     words of the next layer are loaded as a row step begins: their latency hides behind the
//     step's work and the layer barrier instead of stalling the next step (mb >= 2: the next
//     layer is another; gpuldpc.cuda.decoder.kernel_name).  Only the bit words a layer's rows
//     use are loaded and stored (BG1 rate 1/3 in binary16: 149 of a row's 230 words an iteration),
//     the others are neither read nor written.
template <int LAYERS, int WORDS, int FIXED = WORDS>
struct RowState {
    unsigned w[LAYERS][WORDS];

    __device__ __forceinline__ void reset(float*, long long, const int*, int, int, int)
    {
#pragma unroll
        for (int l = 0; l < LAYERS; ++l)
#pragma unroll
            for (int k = 0; k < WORDS; ++k) w[l][k] = 0u;
    }
    __device__ __forceinline__ void begin(int) {}
    __device__ __forceinline__ unsigned get(int l, int k) const { return w[l][k]; }
    __device__ __forceinline__ void put(int l, int k, unsigned v) { w[l][k] = v; }
    __device__ __forceinline__ void end() {}
};

template <int WORDS, int FIXED>
struct RowState<0, WORDS, FIXED> {
    unsigned* own;       // word 0 of layer 0 of this thread's row
    const int* starts;   // the layers' first blocks (shared memory)
    int plane, z, layers;
    int used, next_used;  // words the current / next layer's rows use
    unsigned cur[WORDS], next[WORDS];

    __device__ __forceinline__ int words(int l) const
    {
        if constexpr (FIXED == WORDS) return WORDS;
        return min(WORDS, FIXED + ((max(4, starts[l + 1] - starts[l]) + 7) >> 3));
    }
    __device__ void reset(float* store, long long slot, const int* layer_start, int mb, int z_, int r)
    {
        z = z_;
        layers = mb;
        plane = mb * z;
        starts = layer_start;
        own = reinterpret_cast<unsigned*>(store) + slot * WORDS * plane + r;
        for (int l = 0; l < mb; ++l)
#pragma unroll
            for (int k = 0; k < WORDS; ++k) own[k * plane + l * z] = 0u;
#pragma unroll
        for (int k = 0; k < WORDS; ++k) cur[k] = 0u;
        used = words(0);
    }
    __device__ __forceinline__ void begin(int l)
    {
        const int n = l + 1 < layers ? l + 1 : 0;
        next_used = words(n);
#pragma unroll
        for (int k = 0; k < WORDS; ++k)
            if (k < next_used) next[k] = own[k * plane + n * z];
    }
    __device__ __forceinline__ unsigned get(int, int k) const { return cur[k]; }
    __device__ __forceinline__ void put(int l, int k, unsigned v)
    {
        if (k < used) own[k * plane + l * z] = v;
    }
    __device__ __forceinline__ void end()
    {
#pragma unroll
        for (int k = 0; k < WORDS; ++k) cur[k] = next[k];
        used = next_used;
    }
};

template <int LAYERS_MAX, int DC_MAX, int MIN_BLOCKS, int MAX_THREADS = kMaxBlockThreads>
struct RegisterMinSum {
    static constexpr int kLayers = LAYERS_MAX;     // 0: the state in device memory, any number
    static constexpr int kLanes = 1;               // threads per check row
    static constexpr int kMaxThreads = MAX_THREADS;
    static constexpr int kMinBlocks = MIN_BLOCKS;  // __launch_bounds__: registers <= 64K / (MAX_THREADS * this)
    static constexpr bool kSharedState = false;
    // per layer: f(min1) of the row's last update, f(min2) (float bits), R sign bits | idx << 27
    RowState<LAYERS_MAX, 3> state;
    int rule;
    float alpha, beta;
    int pad;  // byte offset from the row's entry to the +inf pad slot (layered rows)

    __device__ void init(float* store, long long slot, const int2*, const int* layer_start, int mb, int, int r,
                         int z4, int)
    {
        state.reset(store, slot, layer_start, mb, z4 >> 2, r);
    }

    // One check row: r of layer l; post = posteriors read (layered: updated in place),
    // acc = flooding accumulator (unused when layered).
    template <bool FLOOD>
    __device__ __forceinline__ void row(int l, float* post, float* acc, const int2* edges, int, int dc,
                                        int r, int z4)
    {
        state.begin(l);
        const unsigned old = state.get(l, 2);
        const int old_idx = (int)(old >> kIdxShift);
        const float o1 = __uint_as_float(state.get(l, 0)), o2 = __uint_as_float(state.get(l, 1));
        float q[DC_MAX];
        int col[DC_MAX];
        // two-min (Algorithm 1, lines 9-13) as two independent chains (even and odd edges,
        // half the dependent latency), merged below.  min2 = min(min2, max(min1, |Q|)) is
        // the same selection as "if |Q| < min1 ... else if |Q| < min2".  On a tie of the
        // two smallest |Q| either index may be kept: then min1 == min2 and every message,
        // now and when rebuilt next iteration, is the same.
        const float inf = __int_as_float(0x7f800000);
        float c1[2] = {inf, inf}, c2[2] = {inf, inf};
        int ci[2] = {0, 0};
        // Layered rows are padded to DC_MAX edges: a pad edge reads and writes a shared slot
        // holding +inf, so |Q| = inf never becomes min1 or min2 (each chain has a real edge
        // first), its sign bit is 0, and the slot stays +inf.  The loops then have no
        // branches and the loads of all edges can be in flight together (the wide variants
        // stop where past_row says).  Flooding rows
        // (whose pad would need a slot in two swapping arrays) skip the missing edges.
        unsigned signs = 0u;
#pragma unroll
        for (int e = 0; e < DC_MAX; ++e) {
            if (past_row<DC_MAX, LAYERS_MAX == 0>(e, dc)) break;
            if (!FLOOD || e < dc) {
                const int o = qc_offset(edges[e], r, z4);  // edges[] has DC_MAX spare entries
                col[e] = FLOOD || e < dc ? o : pad;
                q[e] = at(post, col[e]) - flip_bit(e == old_idx ? o2 : o1, old, e);
                const float a = fabsf(q[e]);
                const int c = e & 1;
                ci[c] = a < c1[c] ? e : ci[c];
                c2[c] = fminf(c2[c], fmaxf(c1[c], a));
                c1[c] = fminf(c1[c], a);
                signs |= (__float_as_uint(q[e]) >> 31) << e;  // Q is never -0.0 (llr_value)
            }
        }
        const float m1 = fminf(c1[0], c1[1]);
        const float m2 = fminf(fminf(c2[0], c2[1]), fmaxf(c1[0], c1[1]));
        const int idx = c1[1] < c1[0] ? ci[1] : ci[0];
        const float n1 = minsum_magnitude(m1, rule, alpha, beta);
        const float n2 = minsum_magnitude(m2, rule, alpha, beta);
        const unsigned rsign = signs ^ ((__popc(signs) & 1u) ? kSignMask : 0u);
#pragma unroll
        for (int e = 0; e < DC_MAX; ++e) {
            if (past_row<DC_MAX, LAYERS_MAX == 0>(e, dc)) break;
            if (!FLOOD || e < dc) {
                const float r_new = flip_bit(e == idx ? n2 : n1, rsign, e);
                if (FLOOD) at(acc, col[e]) += r_new;
                else at(post, col[e]) = q[e] + r_new;
            }
        }
        state.put(l, 0, __float_as_uint(n1));
        state.put(l, 1, __float_as_uint(n2));
        state.put(l, 2, (rsign & kSignMask) | ((unsigned)idx << kIdxShift));
        state.end();
    }
};

// RegisterMinSum in IEEE binary16 with two frames a thread: every 4-byte word of the
// posteriors in shared memory is a half2 holding a frame pair's posteriors of one column
// (frame 2p in the low half, 2p+1 in the high half), so one shared load brings both and
// one HADD2 / HMNMX2 / HFMA2 updates both.  Each half follows the reference decoder's float16
// arithmetic: Q = L - R_old, R = sign * min(f(m), kHalfRMax), L = Q + R, each rounded once.
// Per row and layer the state is RegisterMinSum's, packed:
//   mag1, mag2: half2 of min(f(min1), R_MAX), min(f(min2), R_MAX); the sign bit of mag1 is
//               the frame's sign product P of the row's Q, that of mag2 its complement;
//   bits[w], edges e = 8w + e' (e' < 8): bit 7-e' (frame A) / 23-e' (frame B) set when edge e
//               takes mag2 (|Q_e| == min1: the reference's e == idx, or a tie, where
//               min1 == min2), bit 15-e' / 31-e' the sign S_e of Q_e.
// R_e is then one LOP3 select between mag1 and mag2 under a mask word X holding the select
// bit in bits 0-14 and S_e in bit 15 of each half: its magnitude bits come from mag2 or
// mag1, its sign from mag2 (not P) when S_e is set, else from mag1 (P): P xor S_e, the sign
// of the other edges' product.  Shifted left by e' the bit word has the select bits at the
// byte tops 7 / 23 (byte_top_masks spreads them over the halves) and S_e at 15 / 31, so
// rebuilding R_old is a shift, a PRMT and two LOP3 for both frames.
// Rows of both schedules are padded to DC_MAX blocks through the block table (decode_frames
// gives every layer DC_MAX entries, a missing block pointing at the row's own pad word,
// which holds half +inf): |Q| = inf is never min1 or min2, its sign is +, and the pad word
// stays +inf (R is finite), so a row step has no branch and no select per edge (the wide
// variants stop where past_row says).  A frame
// that stopped early keeps being updated in its half (its decisions were written when it
// stopped); halves never mix, and no operation can make a NaN: R is finite and no
// posterior is +-inf within the range the host admits.
// Column table (COLUMNS: the register variants with rows of up to 8 blocks, for z <= kTableMaxZ;
// session 18): per check row r and (layer, edge) slot one byte, c = (r + s) mod z, the row's column
// in the edge's block, and the block table holds 4 j z for block (j, s) (a pad slot: 4n, c = r), so
// a column's byte offset from the pair's column 0 is x + 4c: a byte load and a multiply-add on the
// FMA pipe in place of qc_offset's compare, select and add on the integer pipe, which bounds this
// kernel (docs/gpu.md "A column table for the binary16 rows").  Rows of kTableStride bytes (an
// odd number of words: a warp's loads of one slot are free of bank conflicts), z of them after
// decode_frames' tables, shared by the block's pairs.  With the table a layer whose rows have
// fewer than DC_MAX blocks skips the last slot (a uniform branch a layer), which as a pad would
// change nothing: |Q| = inf, sign +, select and sign bits 0.
template <int LAYERS_MAX, int DC_MAX, int MIN_BLOCKS, int MAX_THREADS = kMaxBlockThreads,
          bool COLUMNS = (LAYERS_MAX > 0 && DC_MAX <= 8)>
struct HalfMinSum {
    static_assert(!COLUMNS || (LAYERS_MAX > 0 && DC_MAX <= 8), "the column table: register rows of <= 8 blocks");
    static constexpr int kLayers = LAYERS_MAX;     // 0: the state in device memory, any number
    static constexpr int kLanes = 1;
    static constexpr int kMaxThreads = MAX_THREADS;
    static constexpr int kMinBlocks = MIN_BLOCKS;
    static constexpr bool kSharedState = false;
    static constexpr int kRowBlocks = DC_MAX;        // block table entries a layer (padded)
    static constexpr int kWords = (DC_MAX + 7) / 8;  // bit words per row
    static constexpr bool kColumns = COLUMNS;
    static constexpr int kTableMaxZ = 256;           // c in a byte (gpuldpc.cuda.decoder.HALF_TABLE_MAX_Z)
    static constexpr int kTableStride = ((LAYERS_MAX * DC_MAX + 3) / 4 | 1) * 4;
    // per layer: mag1 (half2 bits, sign = the row's Q sign product P), mag2 (sign = not P), then
    // kWords words of select and Q sign bits per edge (see above)
    RowState<LAYERS_MAX, 2 + kWords, 2> state;
    int rule;
    float alpha, beta;
    int pad;                            // unused: rows are padded through the block table
    __half2 scale_offset;               // f(m) = max(scale * m - offset, 0), both rounded to half
    unsigned cols;                      // COLUMNS: shared address of this row's table entries
    unsigned bases;                     // COLUMNS: shared address of this pair's block bases
    int own;                            // COLUMNS: words from a posterior array's start to the row's entry

    // COLUMNS: point at row r of the column table at `table` and, for pair f = 0 (one thread a row),
    // fill it from the layers' block tables (y = z - s: c = r - y, or r + z - y where r < y); then,
    // after the z rows, pair f's block bases (mb x DC_MAX words: 4 f stride, the byte offset of the
    // pair's column 0 in a posterior array, plus x = 4 j z), filled by the pair's threads when the
    // pair is one of the block's (`in_block`: the block's last warp may hold threads past its last
    // pair, and the host sizes the bases for whole pairs).  A column's offset from the array's start
    // is then a base and a byte: the address of a shared load or store with the array's start in a
    // uniform register (LDS [R + UR]), no per-thread base added an edge.  own = f stride + r, the
    // row's entry in an array (the flooding arrays swap each iteration).
    __device__ void columns(unsigned char* table, const int2* edges, int mb, int z, int r, int f, int stride,
                            bool in_block)
    {
        cols = (unsigned)__cvta_generic_to_shared(table + r * kTableStride);
        if (f == 0)
            for (int i = 0; i < mb * DC_MAX; ++i) {
                const int y = edges[i].y;
                table[r * kTableStride + i] = (unsigned char)(r >= y ? r - y : r + z - y);
            }
        own = f * stride + r;
        int* const mine = reinterpret_cast<int*>(table + z * kTableStride) + f * mb * DC_MAX;
        if (in_block)
            for (int i = r; i < mb * DC_MAX; i += z) mine[i] = 4 * f * stride + edges[i].x;
        bases = (unsigned)__cvta_generic_to_shared(mine);
    }

    // Byte offset of edge e's column of layer l (edges: the layer's block table) from the posterior
    // array's start (COLUMNS) or from the row's own entry.
    __device__ __forceinline__ int column(int l, int e, const int2* edges, int r, int z4) const
    {
        if constexpr (COLUMNS)
            return (int)lds_u32(bases + 4 * (l * DC_MAX + e)) + 4 * (int)lds_u8(cols + l * DC_MAX + e);
        else return qc_offset(edges[e], r, z4);
    }

    // Unsatisfied-parity bits of the row of layer l for the pair (bit h: the frame in half h), from
    // the posteriors' sign bits; post = the row's own entry.  A pad word's sign is +.
    __device__ __forceinline__ unsigned parity(int l, float* post, const int2* edges, int r, int z4) const
    {
        float* const from = COLUMNS ? post - own : post;
        unsigned p = 0u;
        for (int e = 0; e < DC_MAX; ++e) p ^= word(from, column(l, e, edges, r, z4));
        return ((p >> 15) & 1u) | ((p >> 30) & 2u);
    }

    __device__ void init(float* store, long long slot, const int2*, const int* layer_start, int mb, int, int r,
                         int z4, int)
    {
        // NMS: (alpha, 0), OMS: (1, beta); max(alpha * m - 0, 0) = alpha * m and
        // max(1 * m - beta, 0) = max(m - beta, 0), each with the one rounding of an FMA
        scale_offset = rule == kOms ? __floats2half2_rn(1.0f, beta) : __floats2half2_rn(alpha, 0.0f);
        state.reset(store, slot, layer_start, mb, z4 >> 2, r);
    }

    // One check row: r of layer l, edges = the layer's DC_MAX (padded) block table entries, dc of
    // them real (past_row; COLUMNS: a row of fewer than DC_MAX runs one slot less); post, acc =
    // the row's own entries.
    template <bool FLOOD>
    __device__ __forceinline__ void row(int l, float* post, float* acc, const int2* edges, int dc, int r, int z4)
    {
        if constexpr (COLUMNS) {
            if (dc < DC_MAX) step<FLOOD, DC_MAX - 1>(l, post - own, acc - own, edges, dc, r, z4);
            else step<FLOOD, DC_MAX>(l, post - own, acc - own, edges, dc, r, z4);
        } else {
            step<FLOOD, DC_MAX>(l, post, acc, edges, dc, r, z4);
        }
    }

    // The row step over DC slots; post, acc = the posterior arrays' starts (COLUMNS) or the row's own
    // entries.
    template <bool FLOOD, int DC>
    __device__ __forceinline__ void step(int l, float* post, float* acc, const int2* edges, int dc, int r, int z4)
    {
        static_assert(DC >= 4 && DC <= DC_MAX, "two min chains of two edges each");
        state.begin(l);
        const unsigned o1 = state.get(l, 0), o2 = state.get(l, 1);
        unsigned q[DC], fresh[kWords];
        int col[DC];
        __half2 c1[2], c2[2];  // two min chains (even, odd edges) as RegisterMinSum, from edges 0, 1
        unsigned parity = 0u;
#pragma unroll
        for (int w = 0; w < kWords; ++w) fresh[w] = 0u;
#pragma unroll
        for (int e = 0; e < DC; ++e) {
            if (past_row<DC_MAX, LAYERS_MAX == 0>(e, dc)) break;
            col[e] = column(l, e, edges, r, z4);
            const int s = e & 7;
            const unsigned v = state.get(l, 2 + (e >> 3)) << s;
            const unsigned r_old = select_halves(o1, o2, with_signs_of(byte_top_masks(v), v));
            q[e] = as_bits(__hsub2_rn(as_half2(word(post, col[e])), as_half2(r_old)));
            const __half2 a = __habs2(as_half2(q[e]));
            const int c = e & 1;
            if (e < 2) {
                c1[c] = a;
            } else {
                c2[c] = e < 4 ? __hmax2(c1[c], a) : __hmin2(c2[c], __hmax2(c1[c], a));
                c1[c] = __hmin2(c1[c], a);
            }
            parity ^= q[e];  // Q is never -0 (half_llr_pair)
        }
        const __half2 m1 = __hmin2(c1[0], c1[1]);
        const __half2 m2 = __hmin2(__hmin2(c2[0], c2[1]), __hmax2(c1[0], c1[1]));
        const unsigned sign = parity & kHalfSigns;
        const unsigned n1 = half_magnitude(m1, scale_offset) ^ sign;
        const unsigned n2 = half_magnitude(m2, scale_offset) ^ sign ^ kHalfSigns;
#pragma unroll
        for (int e = 0; e < DC; ++e) {
            if (past_row<DC_MAX, LAYERS_MAX == 0>(e, dc)) break;
            // X: take mag2 (bits 0-14), S_e (bit 15), per half; kept as the state's bits
            const unsigned x = with_signs_of(__heq2_mask(__habs2(as_half2(q[e])), m1), q[e]);
            fresh[e >> 3] |= (x >> (e & 7)) & (0x80808080u >> (e & 7));
            const __half2 r_new = as_half2(select_halves(n1, n2, x));
            if (FLOOD) word(acc, col[e]) = as_bits(__hadd2_rn(as_half2(word(acc, col[e])), r_new));
            else word(post, col[e]) = as_bits(__hadd2_rn(as_half2(q[e]), r_new));
        }
        state.put(l, 0, n1);
        state.put(l, 1, n2);
#pragma unroll
        for (int w = 0; w < kWords; ++w) state.put(l, 2 + w, fresh[w]);
        state.end();
    }
};

// Frames a thread serves: 2 for the binary16 kernels (a half2 pair), else 1.
template <class M>
constexpr int kFramesPerThread = 1;
template <int LAYERS_MAX, int DC_MAX, int MIN_BLOCKS, int MAX_THREADS, bool COLUMNS>
constexpr int kFramesPerThread<HalfMinSum<LAYERS_MAX, DC_MAX, MIN_BLOCKS, MAX_THREADS, COLUMNS>> = 2;

// The two smallest of a[0 .. E) (E a power of two; E = 1: a[0] and +inf): sorted pairs merged
// in a tree of depth ceil(log2 E), (a1, a2) and (b1, b2) giving min(a1, b1) and
// min(max(a1, b1), min(a2, b2)), the multiset's two smallest (the values of a sequential scan);
// an odd E's last value enters as the pair (a, +inf).
template <int E>
__device__ __forceinline__ void two_smallest(const float (&a)[E], float& m1, float& m2)
{
    float lo[E], hi[E];
#pragma unroll
    for (int k = 0; k < E; k += 2) {
        lo[k] = k + 1 < E ? fminf(a[k], a[k + 1 < E ? k + 1 : k]) : a[k];
        hi[k] = k + 1 < E ? fmaxf(a[k], a[k + 1 < E ? k + 1 : k]) : __int_as_float(0x7f800000);
    }
#pragma unroll
    for (int w = 2; w < E; w <<= 1) {
#pragma unroll
        for (int k = 0; k + w < E; k += 2 * w) {
            const float h = fminf(fmaxf(lo[k], lo[k + w]), fminf(hi[k], hi[k + w]));
            lo[k] = fminf(lo[k], lo[k + w]);
            hi[k] = h;
        }
    }
    m1 = lo[0];
    m2 = hi[0];
}

// Min-sum with each check row spread over LANES consecutive threads of a warp (LANES > 1 a
// power of two), EDGES edges a lane (a power of two): lane p of row r owns the row's edges
// p + k * LANES, k < EDGES (rows of at most LANES * EDGES blocks).  A lane keeps its own
// messages R for every layer and its columns' offsets, two words per edge instead of the
// row's two-min record.  Per layer each lane forms Q = L - R_old and the two smallest of its
// own |Q| (a tree of sorted pairs); a butterfly over the row's lanes (warp shuffles) merges
// the sorted pairs the same way, (a1, a2) and (b1, b2) giving min(a1, b1) and
// min(max(a1, b1), min(a2, b2)), the multiset's two smallest (so the values are those of the
// reference's sequential scan); the sign product is the parity of the row's bits of a ballot
// of the lanes' own sign parities.  Edge e's message is f(|Q_e| == min1 ? min2 : min1) with
// the sign of the other Q: the reference's f(e == idx ? min2 : min1), because |Q_e| equal to
// min1 at an edge other than idx means min1 == min2.  Missing edges hold |Q| = +inf (never
// min1 or min2, sign +) and write nothing.  Every thread of the block runs every row step (a
// stopped or absent frame with no edges), so the shuffles, ballots and barriers run on whole,
// converged warps.  A layer is a few dependent steps per lane instead of a walk over the row.
template <int LAYERS_MAX, int LANES, int EDGES, int MAX_THREADS, int MIN_BLOCKS>
struct EdgeParallelMinSum {
    static_assert(LANES > 1 && (EDGES & (EDGES - 1)) == 0 && (LANES & (LANES - 1)) == 0, "powers of two");
    static constexpr int kLayers = LAYERS_MAX;
    static constexpr int kLanes = LANES;
    static constexpr int kMaxThreads = MAX_THREADS;
    static constexpr int kMinBlocks = MIN_BLOCKS;
    static constexpr bool kSharedState = false;
    // byte offsets from the row's entry to this lane's columns: one int an edge, or (EDGES > 1)
    // two int16 a word, edge 2i in the low half (|offset| <= 4n < 2^15: n <= 8191, checked by
    // the host's kernel choice)
    static constexpr int kOffWords = EDGES > 1 ? EDGES / 2 : 1;
    float r_old[LAYERS_MAX][EDGES];  // this lane's messages of each layer
    int off[LAYERS_MAX][kOffWords];
    unsigned real[EDGES];            // bit l: this lane's edge k exists in layer l
    int first;                       // the row's first lane in the warp
    int rule;
    float alpha, beta;
    int pad;  // unused: missing edges write nothing

    __device__ void init(float*, long long, const int2* edges, const int* layer_start, int mb, int, int r,
                         int z4, int lane)
    {
        first = (threadIdx.x & 31) & ~(LANES - 1);
#pragma unroll
        for (int k = 0; k < EDGES; ++k) {
            real[k] = 0u;
#pragma unroll
            for (int l = 0; l < LAYERS_MAX; ++l) {
                r_old[l][k] = 0.0f;
                const int e = lane + k * LANES;
                const int b0 = l < mb ? layer_start[l] : 0;
                const bool has = l < mb && e < layer_start[l + 1] - b0;
                const int o = has ? qc_offset(edges[b0 + e], r, z4) : 0;
                if (EDGES == 1) off[l][0] = o;
                else if (k & 1) off[l][k / 2] = (off[l][k / 2] & 0xffff) | (o << 16);
                else off[l][k / 2] = o & 0xffff;
                real[k] |= (has ? 1u : 0u) << l;
            }
        }
    }

    __device__ __forceinline__ int offset(int l, int k) const
    {
        if (EDGES == 1) return off[l][0];
        return k & 1 ? off[l][k / 2] >> 16 : (int)(short)off[l][k / 2];
    }

    // Row step of layer l; every thread of the block calls it (active: its frame decodes).
    template <bool FLOOD>
    __device__ __forceinline__ void row(int l, bool active, float* post, float* acc)
    {
        const float inf = __int_as_float(0x7f800000);
        float q[EDGES], a[EDGES];
        unsigned negs = 0u;
#pragma unroll
        for (int k = 0; k < EDGES; ++k) {
            q[k] = active && ((real[k] >> l) & 1u) ? at(post, offset(l, k)) - r_old[l][k] : inf;
            a[k] = fabsf(q[k]);
            negs ^= __float_as_uint(q[k]) >> 31;  // Q is never -0.0 (llr_value)
        }
        float m1, m2;
        two_smallest(a, m1, m2);  // of the lane's |Q|
#pragma unroll
        for (int s = 1; s < LANES; s <<= 1) {
            const float o1 = __shfl_xor_sync(0xffffffffu, m1, s);
            if (EDGES == 1 && s == 1) {  // both second minima are +inf
                m2 = fmaxf(m1, o1);
            } else {
                const float o2 = __shfl_xor_sync(0xffffffffu, m2, s);
                m2 = fminf(fmaxf(m1, o1), fminf(m2, o2));
            }
            m1 = fminf(m1, o1);
        }
        const unsigned row_negs = __ballot_sync(0xffffffffu, negs) >> first;
        const unsigned parity = __popc(row_negs & (0xffffffffu >> (32 - LANES))) & 1u;
        const float n1 = minsum_magnitude(m1, rule, alpha, beta);
        const float n2 = minsum_magnitude(m2, rule, alpha, beta);
#pragma unroll
        for (int k = 0; k < EDGES; ++k) {
            const float r_new = flip(a[k] == m1 ? n2 : n1, parity ^ (__float_as_uint(q[k]) >> 31));
            if (active && ((real[k] >> l) & 1u)) {
                if (FLOOD) at(acc, offset(l, k)) += r_new;
                else at(post, offset(l, k)) = q[k] + r_new;
                r_old[l][k] = r_new;
            }
        }
    }
};

// Min-sum with each check row in one thread and the row's state in shared memory (the latency
// kernel since v9, `ep12x1x8`: docs/gpu.md).  GROUP layers a step (layered only; `pl12x2x7`,
// GROUP 2): the host orders the layers so that those of a step share no column
// (gpuldpc.cuda.layout.pair_layers): such layers update disjoint posteriors, so doing them at
// once equals doing them one after the other, and the result is the layered schedule (Hocevar,
// SiPS 2004) in that layer order, with half the steps (WiMAX rate 1/2: 6 of 12); the frame's
// GROUP * z threads in GROUP halves, half h serving layer GROUP s + h of step s; with half the
// steps each thread holds the R messages and columns of all its steps in registers (kRegs: 2 x
// 6 x 7 for pl12x2x7), so a step reads and writes the posteriors only (shared memory
// wavefronts a warp and step 40 -> 16: the steps of 6 warps were bound by them), and a row is
// computed at the ROW edges the code's rows have at most (WiMAX rate 1/2: 7), not at the
// table's EDGES (ROW rounded up to 4s; ep12x1x8: ROW = EDGES = 8).  Per (step,
// thread), 16-byte aligned after the +inf pad slot, T = MAX_THREADS, CHUNKS = EDGES / 4,
// S = mb / GROUP steps (kRegs: the column table only, read at each frame's start and by the
// parity; R lives in registers):
//   float4 msg[S][CHUNKS][T]    the row's messages R of edges 4c..4c+3 (of the last update; not kRegs)
//   uint4  col[S][CHUNKS][T]    their columns: layered, absolute shared addresses of the
//                               posteriors (a missing edge, or a thread of no frame: the +inf pad
//                               slot, which reads +inf and is written +inf: never min1 or min2,
//                               sign +); flooding, byte offsets from the array's start (missing: 1,
//                               odd, skipped)
// so the layer loop needs no register arrays indexed by layer (the register kernel ep12x2x4 holds
// 197 registers and a 15 KB init).  A layered step: the row's posteriors are loaded (no base add,
// no predicate), then the next layer's state (private: no hazard) while they are in flight; Q = L
// - R_old; the two smallest |Q| by a tree of sorted pairs (depth ceil(log2 ROW)); magnitude f(m) =
// max(A m + B, 0) with (A, B) = (alpha, 0) (NMS; fmaf(alpha, m, +0) rounds once, like alpha * m,
// and the max is a no-op for alpha > 0) or (1, -beta) (OMS: m - beta, then the max), so no rule
// branch; the sign product (parity of the Q sign bits) is folded into f(min1), f(min2) and each
// message is one select and one LOP3: R = (|Q_e| == min1 ? f(min2) : f(min1)) ^ sign(Q_e) ^ parity,
// bit-exact with the reference (same values as the two-min record, see EdgeParallelMinSum).  R is
// kept unpredicated: a stopped frame's R is never used again (stores of L stay predicated).
// Flooding steps use the plain form (predicated, relative offsets: post and acc swap).
template <int LAYERS_MAX, int ROW, int MAX_THREADS, int GROUP = 1>
struct SharedRowMinSum {
    static constexpr int EDGES = (ROW + 3) / 4 * 4;  // column table slots a row (whole uint4s)
    static_assert(LAYERS_MAX % GROUP == 0, "whole steps");
    static_assert(GROUP > 1 || ROW == EDGES, "rows narrower than the table: the register-state form only");
    static constexpr int kLayers = LAYERS_MAX / GROUP;  // steps
    static constexpr int kGroup = GROUP;
    static constexpr int kLanes = GROUP;                // threads a row index (one a layer of the step)
    static constexpr int kMaxThreads = MAX_THREADS;
    static constexpr int kMinBlocks = 1;
    static constexpr bool kSharedState = true;
    static constexpr int kChunks = EDGES / 4;
    static constexpr int T = MAX_THREADS;  // state stride (float4 units)
    static constexpr bool kRegs = GROUP > 1;  // every step's state in registers
    static constexpr int kHeld = kRegs ? kLayers : 1;
    float rm[kHeld][EDGES];      // R of every step (kRegs), else of the step about to run
    unsigned col[kHeld][EDGES];  // their columns
    float4* st;           // this thread's msg[0][0]; col[0][0] is st[cols]
    int cols;             // steps * kChunks * T (kRegs: 0, no msg array)
    int rule;
    float alpha, beta;
    float A, B;           // f(m) = max(A m + B, 0)
    int pad;              // unused (the pad slot's address is in the column table)

    // bytes of shared memory after decode_frames' tables (host: + 16 for the alignment)
    static constexpr int state_bytes(int mb) { return mb / GROUP * kChunks * T * (kRegs ? 16 : 32); }

    __device__ void attach(float4* state, int mb)
    {
        cols = kRegs ? 0 : mb / GROUP * kChunks * T;
        st = state + threadIdx.x;
        A = rule == kOms ? 1.0f : alpha;
        B = rule == kOms ? -beta : 0.0f;
    }

    // The column table of row r (own: its entry in the posterior array post0; mine: the thread
    // serves a frame) and zero messages; RAW: edges[] as in device memory (x not yet times 4).
    // GROUP > 1: row and layer from the thread's place in its frame's halves (decode_frames' r and
    // own interleave the lanes), so a warp's loads are those of consecutive rows of one layer.
    template <bool FLOOD, bool RAW>
    __device__ void setup(const int2* edges, const int* layer_start, int mb, int r, int z4, int own,
                          int pad_byte, const float* post0, bool mine)
    {
        static_assert(GROUP == 1 || !FLOOD, "layer groups: layered only");
        int half = 0;
        if constexpr (GROUP > 1) {
            const int z = z4 >> 2;
            const int t = (int)threadIdx.x % (GROUP * z);
            half = t / z;
            own += t - half * z - r;
            r = t - half * z;
        }
        const unsigned base = FLOOD ? 0u : (unsigned)__cvta_generic_to_shared(post0);
        const unsigned none = FLOOD ? 1u : base + (unsigned)pad_byte;
        for (int s = 0; s < mb / GROUP; ++s) {
            const int l = s * GROUP + half;
            const int b0 = layer_start[l];
            const int dc = layer_start[l + 1] - b0;
#pragma unroll
            for (int c = 0; c < kChunks; ++c) {
                unsigned h[4];
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const int e = 4 * c + i;
                    int2 g = edges[b0 + e < 0 ? 0 : b0 + e];  // edges[] has kEdgePad spare entries
                    if (RAW) g.x *= 4;
                    h[i] = e < dc && (FLOOD || mine) ? base + (unsigned)(4 * own + qc_offset(g, r, z4)) : none;
                }
                if constexpr (!kRegs) st[(s * kChunks + c) * T] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                reinterpret_cast<uint4*>(st)[cols + (s * kChunks + c) * T] = make_uint4(h[0], h[1], h[2], h[3]);
            }
        }
        if constexpr (kRegs) {
            restart(mb);
        } else {
            load_into(0, rm[0], col[0]);
        }
    }

    // A new frame on the column table that setup left in place (decode_frames' kFrames part):
    // zero messages of every step, step 0's state (R = 0 and its columns) for the first step.
    // kRegs: every step's columns into registers, R = 0.
    __device__ __forceinline__ void restart(int mb)
    {
        if constexpr (!kRegs) {
#pragma unroll 4
            for (int i = 0; i < mb / GROUP * kChunks; ++i) st[i * T] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int s = 0; s < kHeld; ++s) {
            if (s < mb / GROUP) {
#pragma unroll
                for (int c = 0; c < kChunks; ++c) {
                    const uint4 w = reinterpret_cast<const uint4*>(st)[cols + (s * kChunks + c) * T];
                    col[s][4 * c] = w.x;
                    col[s][4 * c + 1] = w.y;
                    col[s][4 * c + 2] = w.z;
                    col[s][4 * c + 3] = w.w;
                }
#pragma unroll
                for (int k = 0; k < EDGES; ++k) rm[s][k] = 0.0f;
            }
        }
    }

    __device__ __forceinline__ void load_into(int l, float (&m_out)[EDGES], unsigned (&c_out)[EDGES]) const
    {
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
            const float4 m = st[(l * kChunks + c) * T];
            const uint4 w = reinterpret_cast<const uint4*>(st)[cols + (l * kChunks + c) * T];
            m_out[4 * c] = m.x;
            m_out[4 * c + 1] = m.y;
            m_out[4 * c + 2] = m.z;
            m_out[4 * c + 3] = m.w;
            c_out[4 * c] = w.x;
            c_out[4 * c + 1] = w.y;
            c_out[4 * c + 2] = w.z;
            c_out[4 * c + 3] = w.w;
        }
    }

    // 1 if the thread's row of one of its layers is unsatisfied by the decisions of post (mine:
    // the thread serves a frame); all loads of 4 steps at a time in flight.
    template <bool FLOOD>
    __device__ __forceinline__ unsigned row_fail(const float* post, int mb, bool mine) const
    {
        unsigned bad = 0u;  // bit l: parity of step l's row
#pragma unroll 4
        for (int l = 0; l < (mine ? mb / GROUP : 0); ++l) {
            unsigned p = 0u;
#pragma unroll
            for (int c = 0; c < kChunks; ++c) {
                const uint4 w = reinterpret_cast<const uint4*>(st)[cols + (l * kChunks + c) * T];
                const unsigned cc[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    if constexpr (!FLOOD) p ^= lds_abs(cc[i]) < 0.0f;
                    else if (!(cc[i] & 1u))
                        p ^= *reinterpret_cast<const float*>(reinterpret_cast<const char*>(post) + cc[i]) < 0.0f;
                }
            }
            bad |= p << l;
        }
        return bad != 0u;
    }

    // Row step l (the thread's layer of it; post, acc: the arrays' starts).  kRegs: the state of
    // step l in registers (l a compile-time constant: decode_frames' step loop is unrolled); else
    // in rm[0]/col[0], and the state of step `next` (!= l: mb >= 2) is loaded for the following step.
    template <bool FLOOD>
    __device__ __forceinline__ void row(int l, bool active, float* post, float* acc, int next)
    {
        float m1, m2;
        float(&rl)[EDGES] = rm[kRegs ? l : 0];
        unsigned(&cl)[EDGES] = col[kRegs ? l : 0];
        if constexpr (!FLOOD) {
            float q[ROW], a[ROW];  // the row's first ROW edges (the table's others are never read)
            unsigned x = 0u;  // xor of the Q words: bit 31 = the sign parity
            float post_l[ROW];
#pragma unroll
            for (int k = 0; k < ROW; ++k) post_l[k] = lds_abs(cl[k]);
            float nrm[EDGES];
            unsigned ncol[EDGES];
            if constexpr (!kRegs) load_into(next, nrm, ncol);
#pragma unroll
            for (int k = 0; k < ROW; ++k) {
                q[k] = post_l[k] - rl[k];  // a stopped frame's Q is computed, never stored
                a[k] = fabsf(q[k]);
                x ^= __float_as_uint(q[k]);  // Q is never -0.0 (llr_value)
            }
            two_smallest(a, m1, m2);
            const unsigned pm = x & 0x80000000u;
            const float n1 = __uint_as_float(opaque(__float_as_uint(fmaxf(fmaf(A, m1, B), 0.0f)) ^ pm));
            const float n2 = __uint_as_float(opaque(__float_as_uint(fmaxf(fmaf(A, m2, B), 0.0f)) ^ pm));
#pragma unroll
            for (int k = 0; k < ROW; ++k) {
                const float r_new = __uint_as_float(__float_as_uint(a[k] == m1 ? n2 : n1) ^
                                                    (__float_as_uint(q[k]) & 0x80000000u));
                if (active) sts_abs(cl[k], q[k] + r_new);
                rl[k] = r_new;
            }
            if constexpr (!kRegs) {
#pragma unroll
                for (int c = 0; c < kChunks; ++c)
                    st[(l * kChunks + c) * T] = make_float4(rl[4 * c], rl[4 * c + 1], rl[4 * c + 2], rl[4 * c + 3]);
#pragma unroll
                for (int k = 0; k < EDGES; ++k) {
                    rl[k] = nrm[k];
                    cl[k] = ncol[k];
                }
            }
        } else {
            float q[EDGES], a[EDGES];
            const float inf = __int_as_float(0x7f800000);
            bool has[EDGES];
            unsigned negs = 0u;
#pragma unroll
            for (int k = 0; k < EDGES; ++k) {
                has[k] = active && !(cl[k] & 1u);
                q[k] = has[k] ? at(post, (int)cl[k]) - rl[k] : inf;
                a[k] = fabsf(q[k]);
                negs ^= __float_as_uint(q[k]) >> 31;  // Q is never -0.0 (llr_value)
            }
            two_smallest(a, m1, m2);
            const float n1 = minsum_magnitude(m1, rule, alpha, beta);
            const float n2 = minsum_magnitude(m2, rule, alpha, beta);
#pragma unroll
            for (int k = 0; k < EDGES; ++k) {
                const float r_new = flip(a[k] == m1 ? n2 : n1, negs ^ (__float_as_uint(q[k]) >> 31));
                if (has[k]) {
                    at(acc, (int)cl[k]) += r_new;
                    rl[k] = r_new;
                }
            }
#pragma unroll
            for (int c = 0; c < kChunks; ++c)
                st[(l * kChunks + c) * T] = make_float4(rl[4 * c], rl[4 * c + 1], rl[4 * c + 2], rl[4 * c + 3]);
            load_into(next, rl, cl);
        }
    }
};

// Every message R_mn kept in device memory (frame-major, then block, then row): any
// number of layers, rows of weight up to DC_MAX, any rule (NMS, OMS, SPA).
template <int DC_MAX>
struct StoredMessages {
    static constexpr int kLayers = 0;  // any number (runtime loop)
    static constexpr int kLanes = 1;
    static constexpr int kMaxThreads = kMaxBlockThreads;
    static constexpr int kMinBlocks = 1;
    static constexpr bool kSharedState = false;
    float* msg;  // this thread's frame: msg[b * z + r]
    int rule;
    float alpha, beta;
    int pad;  // unused: rows loop over their real edges

    __device__ void init(float* store, long long frame, const int2*, const int*, int, int nblocks, int r,
                         int z4, int)
    {
        const int z = z4 >> 2;
        msg = store + frame * nblocks * z;
        for (int b = 0; b < nblocks; ++b) msg[b * z + r] = 0.0f;
    }

    // edges points at the layer's first block b0; its messages start at msg + b0 * z.
    template <bool FLOOD>
    __device__ __forceinline__ void row(int, float* post, float* acc, const int2* edges, int b0, int dc,
                                        int r, int z4)
    {
        float q[DC_MAX], out[DC_MAX];
        int col[DC_MAX];
        const int z = z4 >> 2;
        float* m = msg + b0 * z + r;
        for (int e = 0; e < dc; ++e) {
            col[e] = qc_offset(edges[e], r, z4);
            q[e] = at(post, col[e]) - m[e * z];
        }
        if (rule == kSpa) {
            // R_e = sign_e phi(before_e + after_e): the other edges' phi(|Q|) summed as a prefix
            // and a suffix (not the row's total less the edge's own term, which cancels where one
            // edge dominates), in the cpu backend's order
            float ph[DC_MAX];
            unsigned signs = 0u;
            for (int e = 0; e < dc; ++e) {
                ph[e] = spa_phi(fabsf(q[e]));
                signs |= (q[e] < 0.0f ? 1u : 0u) << e;
            }
            const unsigned par = __popc(signs) & 1u;
            float after = 0.0f;
            for (int e = dc - 1; e >= 0; --e) {
                out[e] = after;
                after += ph[e];
            }
            float before = 0.0f;
            for (int e = 0; e < dc; ++e) {
                out[e] = flip(spa_phi(before + out[e]), ((signs >> e) ^ par) & 1u);
                before += ph[e];
            }
        } else {
            float m1 = __int_as_float(0x7f800000), m2 = m1;
            int idx = 0;
            unsigned signs = 0u;
            for (int e = 0; e < dc; ++e) two_min(q[e], e, m1, m2, idx, signs);
            const float n1 = minsum_magnitude(m1, rule, alpha, beta);
            const float n2 = minsum_magnitude(m2, rule, alpha, beta);
            const unsigned par = __popc(signs) & 1u;
            for (int e = 0; e < dc; ++e) out[e] = flip(e == idx ? n2 : n1, ((signs >> e) ^ par) & 1u);
        }
        for (int e = 0; e < dc; ++e) {
            m[e * z] = out[e];
            if (FLOOD) at(acc, col[e]) += out[e];
            else at(post, col[e]) = q[e] + out[e];
        }
    }
};

// Row r of layer l for a frame still decoding (edge-parallel rows: every thread, told whether
// its frame decodes); post, acc point at the row's own entry (frame offset + r) of the
// posteriors and the flooding accumulator.
template <bool FLOOD, class M>
__device__ __forceinline__ void layer_step(M& msgs, int l, bool active, float* post, float* acc,
                                           const int2* edges, const int* layer_start, int r, int z4)
{
    if constexpr (M::kLanes > 1) {
        msgs.template row<FLOOD>(l, active, post, acc);
    } else if (active) {
        if constexpr (kFramesPerThread<M> == 2) {  // every layer padded to M::kRowBlocks entries
            msgs.template row<FLOOD>(l, post, acc, edges + l * M::kRowBlocks, layer_start[l + 1] - layer_start[l], r,
                                     z4);
        } else {
            const int b0 = layer_start[l];
            msgs.template row<FLOOD>(l, post, acc, edges + b0, b0, layer_start[l + 1] - b0, r, z4);
        }
    }
}

// Parity of row r of layer l over the hard decisions of post (1 = unsatisfied).
__device__ __forceinline__ unsigned row_parity(float* post, const int2* edges, int dc, int r, int z4)
{
    unsigned p = 0u;
    for (int e = 0; e < dc; ++e) p ^= at(post, qc_offset(edges[e], r, z4)) < 0.0f ? 1u : 0u;
    return p;
}

// Channel LLRs of nf frames into frame-pair words, a pair every `stride` (>= n + z, a
// multiple of 4) words: its n columns (half_llr_pair; an odd last frame pairs with zeros,
// which only its own half ever sees), then pad words (its rows' z among them), half +inf;
// flags: the frames' iteration words (llr_value).
// The pad words (half +inf) after the n columns of each of `pairs` frame-pair slots.
__device__ __forceinline__ void pad_pairs(unsigned* dst, int pairs, int n, int stride)
{
    for (int i = threadIdx.x; i < pairs * (stride - n); i += blockDim.x)
        dst[i / (stride - n) * stride + n + i % (stride - n)] = kHalfInf2;
}

template <typename In>
__device__ void load_pairs(unsigned* dst, const In* src, float scale, int nf, int n, int stride, int* flags)
{
    const int pairs = (nf + 1) >> 1;
    pad_pairs(dst, pairs, n, stride);
    if ((n & 3) == 0) {  // 4 columns of both frames: two vector loads, one 16-byte store
        const int quads = n >> 2;
        for (int i = threadIdx.x; i < pairs * quads; i += blockDim.x) {
            const int p = i / quads;
            const int c = 4 * (i - p * quads);
            const In* a = src + (2 * p) * n + c;
            const float4 x = llr_value4(a, scale, flags + 2 * p);
            const float4 y = 2 * p + 1 < nf ? llr_value4(a + n, scale, flags + 2 * p + 1)
                                            : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            *reinterpret_cast<uint4*>(dst + p * stride + c) = make_uint4(
                half_llr_pair(x.x, y.x), half_llr_pair(x.y, y.y), half_llr_pair(x.z, y.z), half_llr_pair(x.w, y.w));
        }
    } else {
        for (int i = threadIdx.x; i < pairs * n; i += blockDim.x) {
            const int p = i / n;
            const In* a = src + (2 * p) * n + (i - p * n);
            dst[p * stride + (i - p * n)] = half_llr_pair(
                llr_value(a[0], scale, flags + 2 * p), 2 * p + 1 < nf ? llr_value(a[n], scale, flags + 2 * p + 1) : 0.0f);
        }
    }
}

// load_pairs of packed int4 rows (Nibbles): where n % 8 == 0 and the rows are 4-byte aligned (every
// standard code from the engine's buffers), 8 columns of both frames from one 4-byte load each, two
// 16-byte stores; else column by column.  The words are load_pairs' of the int8 values.
__device__ void load_pairs(unsigned* dst, const Nibbles* src_, float scale, int nf, int n, int stride, int*)
{
    const unsigned char* src = &src_->byte;
    const int w = (n + 1) >> 1;  // bytes a row
    const int pairs = (nf + 1) >> 1;
    pad_pairs(dst, pairs, n, stride);
    if ((n & 7) == 0 && (reinterpret_cast<size_t>(src) & 3) == 0) {
        const int octs = n >> 3;
        for (int i = threadIdx.x; i < pairs * octs; i += blockDim.x) {
            const int p = i / octs;
            const int c = 8 * (i - p * octs);
            const unsigned char* a = src + (2 * p) * w + c / 2;
            const unsigned x = *reinterpret_cast<const unsigned*>(a);
            const unsigned y = 2 * p + 1 < nf ? *reinterpret_cast<const unsigned*>(a + w) : 0u;  // 0: LLR +0
            unsigned v[8];
#pragma unroll
            for (int k = 0; k < 8; ++k) v[k] = half_llr_pair(nibble_llr(x, k, scale), nibble_llr(y, k, scale));
            uint4* to = reinterpret_cast<uint4*>(dst + p * stride + c);
            to[0] = make_uint4(v[0], v[1], v[2], v[3]);
            to[1] = make_uint4(v[4], v[5], v[6], v[7]);
        }
    } else {
        for (int i = threadIdx.x; i < pairs * n; i += blockDim.x) {
            const int p = i / n;
            const int c = i - p * n;
            const unsigned char* a = src + (2 * p) * w + c / 2;
            const int k = c & 1;
            dst[p * stride + c] = half_llr_pair(nibble_llr(a[0], k, scale),
                                                2 * p + 1 < nf ? nibble_llr(a[w], k, scale) : 0.0f);
        }
    }
}

// Hard decisions (bit = 1 iff posterior < 0) of the frame in half h of a pair's words (16-byte
// aligned), to dst: unpacked, or packed 8 per byte (np.packbits order), by the whole block.
__device__ void write_half_decisions(const unsigned* words, int h, int n, int packed, unsigned char* dst)
{
    const int sign = 15 + 16 * h;
    if (packed) {
        for (int j = threadIdx.x; j < (n + 7) >> 3; j += blockDim.x) {
            unsigned v = 0u;
            for (int k = 0; k < 8; ++k) v |= (8 * j + k < n ? (words[8 * j + k] >> sign) & 1u : 0u) << (7 - k);
            dst[j] = (unsigned char)v;
        }
    } else if ((n & 3) == 0) {
        for (int j = threadIdx.x; j < n >> 2; j += blockDim.x) {
            const uint4 w = reinterpret_cast<const uint4*>(words)[j];
            reinterpret_cast<uchar4*>(dst)[j] = make_uchar4((w.x >> sign) & 1u, (w.y >> sign) & 1u,
                                                            (w.z >> sign) & 1u, (w.w >> sign) & 1u);
        }
    } else {
        for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = (words[i] >> sign) & 1u;
    }
}

// blockIdx.x read where it is used (an asm volatile read the compiler does not move or merge with
// the kernel's frame0: computed up front, the soft output's offset took registers in the loop).
__device__ __forceinline__ unsigned late_block_index()
{
    unsigned b;
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(b));
    return b;
}

// Soft output of the frame in half h of a pair's words: its n posteriors as float32 (exact) in
// the caller's sign (flip: negative for positive = bit 1), to dst, by the whole block.
__device__ void write_half_soft(const unsigned* words, int h, int n, unsigned negative, float* dst)
{
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        dst[i] = flip(__half2float(__ushort_as_half((unsigned short)(words[i] >> (16 * h)))), negative);
}

// The decoder: one block decodes `fpb` consecutive frames, fpb * z * M::kLanes threads
// (rounded up to the warp by the caller).  Shared memory (dynamic, in this order):
//   float post[fpb * n]           posteriors (layered: L;  flooding: totals)
//   float acc[fpb * n], lch[fpb*n]  flooding only: new totals, channel LLRs
//   (padding to 8 bytes) int2 edges[nblocks + kEdgePad] (as (4*(j*z+s), z-s), then zeros),
//   int layer_start[mb + 1], int done[fpb], int fail[fpb], int iters[fpb] (| kItersBad), float pad (+inf).
// The binary16 kernels (kFramesPerThread 2, fpb even) serve a frame pair a thread, fpb / 2 * z
// threads: post, acc, lch hold fpb / 2 slots of n + z words rounded up to a multiple of 4 (a
// half2 each), the pair's n columns then +inf pad words, one per row, and edges holds
// mb * M::kRowBlocks entries, every layer padded with (4n, z): the row's own pad word.
// Early stop: a stopped frame freezes (its threads skip the layers); a stopped frame whose
// pair partner still decodes cannot, so pair kernels write a frame's decisions when it stops
// (or after the last iteration) and let its half run on.
// PART splits the work for the resident kernel (qc_resident.cu; layered shared-state kernels, one
// frame a block): kTables copies the block tables and builds the column table, once a launch;
// kFrames then decodes each request on those tables (LLRs, zero messages, flags); kAll does both.
enum Part { kAll, kTables, kFrames };
template <class M, bool FLOOD, typename In, Part PART = kAll>
__device__ void decode_frames(const In* __restrict__ llr, float scale, unsigned char* __restrict__ bits,
                              int packed, int* __restrict__ iters_out, unsigned char* __restrict__ valid_out,
                              const int2* __restrict__ g_edges, const int* __restrict__ g_layer_start,
                              float* __restrict__ msg_store, int n, int z, int mb, int nblocks,
                              int frames, int fpb, int max_iter, int early_stop, int rule, float alpha,
                              float beta, float* __restrict__ soft)
{
    static_assert(PART == kAll || (M::kSharedState && !FLOOD), "split parts: layered shared-state kernels");
    constexpr bool kTablesHere = PART != kFrames;  // this part builds the tables
    constexpr bool kDecodes = PART != kTables;     // this part loads LLRs and decodes
    extern __shared__ float4 smem_vec[];  // 16-byte aligned
    float* smem = reinterpret_cast<float*>(smem_vec);
    const int tid = threadIdx.x;
    const long long frame0 = (long long)blockIdx.x * fpb;
    const int nf = (int)min((long long)fpb, (long long)frames - frame0);
    constexpr int kPack = kFramesPerThread<M>;
    const int stride = kPack == 1 ? n : (n + z + 3) & ~3;  // words a slot (a frame; a pair and its pads)
    const int span = fpb / kPack * stride;
    float* post = smem;
    float* acc = smem + span;
    float* lch = smem + 2 * span;
    const int nfloat = ((FLOOD ? 3 : 1) * span + 1) & ~1;
    int2* edges = reinterpret_cast<int2*>(smem + nfloat);

    // shared-state kernels: the LLRs are not waited for before the column table is built.  float
    // input: tables, then LLRs, copied by cp.async (two commit groups); other inputs: every vector
    // load of the thread into registers (up to kVec, one round trip), stored after the table.
    constexpr bool kAsync = M::kSharedState && is_f32<In>;
    constexpr bool kBatch = M::kSharedState && !is_f32<In>;
    constexpr int kVec = 8;
    typename Raw4<In>::T held[kVec];
    const int nvec = (n & 3) == 0 ? nf * n / 4 : 0;
    if constexpr (kAsync) {
        if constexpr (kTablesHere) {
            int* starts = reinterpret_cast<int*>(edges + nblocks + kEdgePad);
            for (int i = tid; i < nblocks; i += blockDim.x) cp_async(edges + i, g_edges + i, 8);
            for (int i = tid; i <= mb; i += blockDim.x) cp_async(starts + i, g_layer_start + i, 4);
            cp_async_commit();
        }
        if constexpr (kDecodes) {
            float* dst = FLOOD ? smem + 2 * span : smem;
            for (int i = tid; i < nvec; i += blockDim.x) cp_async(dst + 4 * i, llr + frame0 * n + 4 * i, 16);
            cp_async_commit();
        }
    } else if constexpr (kBatch && kDecodes) {
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
            const int i = tid + j * (int)blockDim.x;
            if (i < nvec) held[j] = raw4(llr + frame0 * n + 4 * i);
        }
    }
    if constexpr (kPack == 2) {  // every layer padded to M::kRowBlocks entries with (4n, z)
        // with a column table (HalfMinSum::columns) x = 4 j z for block (j, s): g = (j z + s, z - s)
        const int shift = M::kColumns ? z : 0;
        for (int i = tid; i < mb * M::kRowBlocks; i += blockDim.x) {
            const int l = i / M::kRowBlocks;
            const int b = g_layer_start[l] + (i - l * M::kRowBlocks);
            edges[i] = b < g_layer_start[l + 1] ? make_int2(4 * (g_edges[b].x - shift + (shift ? g_edges[b].y : 0)),
                                                            g_edges[b].y)
                                                : make_int2(4 * n, z);
        }
    } else if (!kAsync && kTablesHere) {
        for (int i = tid; i < nblocks + kEdgePad; i += blockDim.x)
            edges[i] = i < nblocks ? make_int2(4 * g_edges[i].x, g_edges[i].y) : make_int2(0, 0);
    }
    int* layer_start = reinterpret_cast<int*>(edges + nblocks + kEdgePad);
    if constexpr (kPack == 2) layer_start = reinterpret_cast<int*>(edges + mb * M::kRowBlocks);
    int* done = layer_start + mb + 1;
    int* fail = done + fpb;
    int* iters = fail + fpb;
    float* pad = reinterpret_cast<float*>(iters + fpb);  // +inf slot of padded rows
    if (kTablesHere && tid == 0) *pad = __int_as_float(0x7f800000);
    if (!kAsync && kTablesHere)
        for (int i = tid; i <= mb; i += blockDim.x) layer_start[i] = g_layer_start[i];
    for (int i = tid; i < (kDecodes ? fpb : 0); i += blockDim.x) {
        done[i] = i < nf ? 0 : 1;
        iters[i] = max_iter;
    }
    // iters[] is set before a load flags a frame in it (the shared-state kernels' loads come after
    // the next barrier; int8 input is always finite)
    if (!is_i8<In> && (!M::kSharedState || PART == kFrames)) __syncthreads();
    const In* src = frame_row(llr, frame0, n);
    float* first = FLOOD ? lch : post;
    if constexpr (kPack == 2) {
        load_pairs(reinterpret_cast<unsigned*>(first), src, scale, nf, n, stride, iters);
    } else if (M::kSharedState) {
        // converted after the tables (below)
    } else if ((n & 3) == 0) {  // every standard code: whole vectors, aligned (frames start at 4n-element offsets)
        for (int i = tid; i < nf * n / 4; i += blockDim.x)
            reinterpret_cast<float4*>(first)[i] = llr_value4(src + 4 * i, scale, iters + 4 * i / n);
    } else {
        for (int i = tid; i < nf * n; i += blockDim.x) first[i] = llr_value(src[i], scale, iters + i / n);
    }

    // thread tid serves frame (pair) f, check row r (of every layer), lane `part` of that row
    const int f = tid / (z * M::kLanes);
    const int r = (tid - f * z * M::kLanes) / M::kLanes;
    const int part = tid & (M::kLanes - 1);
    const bool lane = f * kPack < nf;
    const int own = f * stride + r;  // this thread's row entry in its frame's (pair's) posteriors
    const int z4 = 4 * z;

    M msgs;
    msgs.rule = rule;
    msgs.alpha = alpha;
    msgs.pad = (int)(reinterpret_cast<char*>(pad) - reinterpret_cast<char*>(post + own));
    msgs.beta = beta;
    if constexpr (M::kSharedState) {  // the state after the +inf slot, 16-byte aligned
        msgs.attach(smem_vec + (reinterpret_cast<char*>(pad + 1) - reinterpret_cast<char*>(smem) + 15) / 16, mb);
        if (kAsync && PART == kAll) cp_async_wait<1>();  // the tables have landed
        if (kAsync && PART == kTables) cp_async_wait<0>();
    }
    if (kTablesHere) __syncthreads();  // (kFrames: the tables are in place; done[] is read after the next)
    if constexpr (M::kSharedState) {
        if constexpr (kTablesHere)
            msgs.template setup<FLOOD, kAsync>(edges, layer_start, mb, r, z4, own,
                                               (int)(reinterpret_cast<char*>(pad) - reinterpret_cast<char*>(smem)),
                                               post, lane);
        else
            msgs.restart(mb);  // while the LLRs are in flight
        if constexpr (!kDecodes) return;
        if constexpr (kAsync) {
            cp_async_wait<0>();  // this thread's LLR vectors: converted in place (llr_value)
            for (int i = tid; i < nvec; i += blockDim.x) {
                float4* v = reinterpret_cast<float4*>(first) + i;
                *v = cvt4(*v, scale, iters + 4 * i / n);
            }
        } else {
#pragma unroll
            for (int j = 0; j < kVec; ++j) {
                const int i = tid + j * (int)blockDim.x;
                if (i < nvec) reinterpret_cast<float4*>(first)[i] = cvt4(held[j], scale, iters + 4 * i / n);
            }
            for (int i = tid + kVec * (int)blockDim.x; i < nvec; i += blockDim.x)
                reinterpret_cast<float4*>(first)[i] = llr_value4(src + 4 * i, scale, iters + 4 * i / n);
        }
        if ((n & 3) != 0)  // odd lengths (nvec = 0)
            for (int i = tid; i < nf * n; i += blockDim.x) first[i] = llr_value(src[i], scale, iters + i / n);
        if (FLOOD) __syncthreads();  // the copy below reads other threads' LLRs
    } else if (lane || M::kLanes > 1) {
        msgs.init(msg_store, frame0 / kPack + f, edges, layer_start, mb, nblocks, r, z4, part);
    }
    if constexpr (kPack == 2) {
        if constexpr (M::kColumns)  // the column table after the +inf slot (z <= kTableMaxZ), built by pair 0
            msgs.columns(reinterpret_cast<unsigned char*>(pad + 1), edges, mb, z, r, f, stride, kPack * f < fpb);
    }
    const int used = (nf + kPack - 1) / kPack * stride;  // words of posteriors in use
    if (FLOOD)
        for (int i = tid; i < used; i += blockDim.x) post[i] = lch[i];

    for (int it = 1; it <= max_iter; ++it) {
        // (shared-state kernels: nothing since the last layer's barrier needs another one)
        if (!M::kSharedState || it == 1 || early_stop || FLOOD) __syncthreads();
        // frame (pair) f decodes: not stopped (a pair: not both stopped)
        const bool active = lane && !(kPack == 1 ? done[f] : done[2 * f] & done[2 * f + 1]);
        if (FLOOD) {
            // new totals start from the channel LLRs; a stopped frame keeps its posteriors
            for (int i = tid; i < used; i += blockDim.x) {
                const int g = i / stride;
                acc[i] = (kPack == 1 ? done[g] : done[2 * g] & done[2 * g + 1]) ? post[i] : lch[i];
            }
            __syncthreads();
        }
        if constexpr (M::kSharedState) {
            const int steps = mb / M::kGroup;
#pragma unroll
            for (int l = 0; l < M::kLayers; ++l) {
                if (l < steps) {
                    msgs.template row<FLOOD>(l, active, post, acc, l + 1 < steps ? l + 1 : 0);
                    __syncthreads();
                }
            }
        } else if constexpr (M::kLayers > 0) {
            // register-resident rows: the layer index must be a compile-time constant
#pragma unroll
            for (int l = 0; l < M::kLayers; ++l) {
                if (l < mb) {
                    layer_step<FLOOD>(msgs, l, active, post + own, acc + own, edges, layer_start, r, z4);
                    __syncthreads();
                }
            }
        } else {
            for (int l = 0; l < mb; ++l) {
                layer_step<FLOOD>(msgs, l, active, post + own, acc + own, edges, layer_start, r, z4);
                __syncthreads();
            }
        }
        if (FLOOD) {
            float* t = post;
            post = acc;
            acc = t;
        }
        if (early_stop || it == max_iter) {
            if (tid < fpb) fail[tid] = 0;
            __syncthreads();
            if constexpr (kPack == 2) {
                if (active) {  // a stopped frame's half runs on: its flag stays as it stopped
                    unsigned p = 0u;
                    for (int l = 0; l < mb && p != 3u; ++l)
                        p |= msgs.parity(l, post + own, edges + l * M::kRowBlocks, r, z4);
                    if ((p & 1u) && !done[2 * f]) fail[2 * f] = 1;
                    if ((p & 2u) && !done[2 * f + 1]) fail[2 * f + 1] = 1;
                }
            } else if constexpr (M::kSharedState) {
                if (msgs.template row_fail<FLOOD>(post, mb, lane)) fail[f] = 1;
            } else if (lane && part == 0) {
                unsigned p = 0u;
                for (int l = 0; l < mb && !p; ++l) {
                    const int b0 = layer_start[l];
                    p = row_parity(post + own, edges + b0, layer_start[l + 1] - b0, r, z4);
                }
                if (p) fail[f] = 1;
            }
            __syncthreads();
            if (tid < nf && !done[tid]) {
                if (!fail[tid] && early_stop) {
                    done[tid] = 1;
                    iters[tid] = it | (iters[tid] & kItersBad);
                }
            }
            if constexpr (kPack == 2) {
                // decisions of the frames that stopped now, or of every running frame after the
                // last iteration: iters == it exactly for those
                __syncthreads();
                const int width = packed ? (n + 7) >> 3 : n;
                for (int g = 0; g < nf; ++g) {
                    if ((iters[g] & ~kItersBad) != it) continue;
                    const unsigned* words = reinterpret_cast<const unsigned*>(post) + (g >> 1) * stride;
                    write_half_decisions(words, g & 1, n, packed, bits + (frame0 + g) * width);
                    if (soft != nullptr) write_half_soft(words, g & 1, n, scale < 0.0f, soft + (frame0 + g) * n);
                }
            }
            if (early_stop && !__syncthreads_or(tid < nf && !done[tid])) break;
        }
    }
    __syncthreads();
    if (tid < nf) {
        iters_out[frame0 + tid] = iters[tid] & ~kItersBad;
        valid_out[frame0 + tid] = (fail[tid] ? 0 : 1) | (iters[tid] & kItersBad ? llr::kBadLlrFlag : 0);
    }
    if constexpr (kPack == 2) {
        return;  // decisions (and soft output) written in the loop
    }
    // soft output (soft != 0): the posteriors in the caller's sign (flip: negative for positive =
    // bit 1, see llr_float), beside the decisions and from their loads where n % 4 == 0.  (Written
    // by a call, or with the block's frame offset computed up front, it moved the register
    // allocation of the decoding loop: more spills in the 64-register ms12x7 / ms12x8 kernels.)
    const unsigned negative = scale < 0.0f;
    const long long soft_at = (long long)late_block_index() * fpb * n;  // this block's first frame
    if (soft != nullptr && (packed || (n & 3) != 0))
        for (int i = tid; i < nf * n; i += blockDim.x) soft[soft_at + i] = flip(post[i], negative);
    if (packed) {
        const int nbytes = (n + 7) >> 3;
        unsigned char* dst = bits + frame0 * nbytes;
        for (int j = tid; j < nf * nbytes; j += blockDim.x) {
            const int g = j / nbytes;
            const int i0 = (j - g * nbytes) * 8;
            const float* p = post + g * n;
            unsigned v = 0u;
            for (int k = 0; k < 8; ++k) v |= (i0 + k < n && p[i0 + k] < 0.0f ? 1u : 0u) << (7 - k);
            dst[j] = (unsigned char)v;
        }
    } else if ((n & 3) == 0) {  // the decisions and the soft output of one float4 load
        uchar4* dst = reinterpret_cast<uchar4*>(bits + frame0 * n);
        for (int i = tid; i < nf * n / 4; i += blockDim.x) {
            const float4 v = reinterpret_cast<const float4*>(post)[i];
            dst[i] = make_uchar4(v.x < 0.0f, v.y < 0.0f, v.z < 0.0f, v.w < 0.0f);
            if (soft != nullptr)
                reinterpret_cast<float4*>(soft + soft_at)[i] =
                    make_float4(flip(v.x, negative), flip(v.y, negative), flip(v.z, negative), flip(v.w, negative));
        }
    } else {
        unsigned char* dst = bits + frame0 * n;
        for (int i = tid; i < nf * n; i += blockDim.x) dst[i] = post[i] < 0.0f ? 1 : 0;
    }
}

}  // namespace
