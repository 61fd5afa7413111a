// GF(q) Min-Max flooding decoding of few frames at low latency: one frame spread over many
// multiprocessors, its check rows run as a dataflow of (iteration, row) tasks (q = 4 .. 256).
//
// Paper 003 (Min-Max on GPU), Algorithm 1 (flooding) and Algorithm 2 (forward-backward check
// update), with section IV-B's mapping turned around for one frame: instead of one kernel
// launch per phase over many frames, one launch runs every iteration of a frame, and a
// *task* = (iteration it, check row r) is the unit of work of one warp.  The numbers are the
// ones of gpuldpc.decoders.reference_nb (flooding), bit for bit:
//
//   T_v    = Lch_v + R_{e_1} + R_{e_2} + ...      (R of iteration it-1; v's edges in increasing row)
//   Q'_e   = T_v - R_e,   Q_e = Q'_e - min_a Q'_e,   Qh_i(h_i a) = Q_i(a)
//   F_0 = Qh_0, F_s = F_{s-1} (*) Qh_s;   B_{d-1} = Qh_{d-1}, B_t = B_{t+1} (*) Qh_t
//   M_0 = B_1, M_{d-1} = F_{d-2}, M_i = F_{i-1} (*) B_{i+1};   R_i(a) = M_i(h_i a)
// with (x (*) y)(c) = min_{a + b = c} max(x(a), y(b)); min/max are exact and the additions are
// the reference's in its order.  A task recomputes T of its row's variables itself from the
// previous iteration's R (no variable-node pass), so a row of iteration it needs only the rows
// that share a variable with it (its *neighbours*, itself included) to have finished it-1.
// The same T gives the decisions after iteration it-1 (argmin, smallest element on ties) and the
// row's check, so the syndrome of iteration it-1 is counted by the tasks of iteration it; the
// tasks of the extra iteration max_iter+1 only decide and check.
//
// Scheduling (deadlock-free on any number of resident blocks): each frame has a ticket counter;
// a warp takes tickets in order, ticket t = ((it-1) * M + k) is row k of iteration it, and a
// task waits only for tasks of smaller tickets (its neighbours at it-1, flags done[k'] >= it-1
// polled with relaxed loads, then one fence.acq_rel).  The smallest unfinished ticket is always
// held by a running warp whose inputs are complete, so the frame always progresses, whatever the
// residency and other launches do.  Rows run ahead as far as their neighbours allow: iterations
// overlap.  R is double-buffered (iteration parity); a task of iteration it overwrites R^{it-2}
// of its own edges, whose readers (neighbours at it-1) it has waited for.  A task publishes by
// storing R, __syncwarp, then red.release.max(done[k], it) in lane 0: the release is cumulative,
// so it orders the stores of the lanes synchronized with lane 0 by the warp barrier (the pattern
// of CUTLASS's __syncthreads + red.release semaphore; a fence.acq_rel in every lane before it cost
// 4 us a (620,310) frame, docs/gpu_nb.md).  Readers copy R with cp.async.cg (L2, never a stale
// L1 line), all of a row's messages in flight at once.
// What needs no other task (the row's edge table, the channel LLRs of its variables) is done
// before waiting.
//
// Early stop: per evaluated iteration a counter packs (rows counted) | (rows failing) << 16; the
// task completing the count of an all-satisfied iteration s lowers the stop iteration
// (stopv = max_iter + 1 - s, atomicMax).  Tasks of iterations > stop + 1 are skipped (marked
// done without work, so that a warp that read a stale stop never waits forever), and a task
// waiting for its neighbours gives up as soon as it reads a stop that makes it useless.  The
// last warp of the frame to leave writes symbols (the decisions of iteration s, or max_iter),
// iterations and the syndrome flag as gpuldpc.decoders.reference does, and zeroes the frame's
// control words for the next launch (the scratch must be zero before its first launch).
//
// Non-finite LLRs: a task loads its variables' channel LLRs through the rule of llr_load.cuh;
// a warp that loaded a non-finite one sets the frame's word cnt[0] (no iteration 0 is
// evaluated), which the last warp turns into llr::kBadLlrFlag in the frame's valid byte.
//
// Warp layout of a task: half h = lane / 16 works on edges i = h, h+2, ... for T and Q; for the
// two recursions half 0 runs the forward and half 1 the backward one (one instruction stream, the
// operands are selected), then the halves take the merges in pairs.  A lane owns G groups of W
// consecutive outputs of a convolution (16 lanes x W x G = q for q >= 16; q < 16 leaves lanes
// idle): one W-wide broadcast load of x(y0..) and one W-wide load of y((x0 ^ y0)..) serve W^2
// max/min pairs, since (x0 + c) ^ (y0 + j) = (x0 ^ y0) + (c ^ j) for c, j < W.
//
// Scratch per frame (host: python/gpuldpc/cuda/nb_frame.py): control ints [ticket, stopv, exit,
// cnt[max_iter + 2], done[M]], decisions [max_iter + 1][sym_stride] bytes, R [2][E][q] floats.
#include "nb_common.cuh"
#include "resident.cuh"

// GPULDPC_NB_TRACE (bench/nb_frame_trace.py builds a copy with it): lane 0 stamps %globaltimer at
// five points of each of a frame's first 8192 tasks (ticket taken, channel loads done, inputs
// ready, neighbours' R staged, flag published) into g_trace[5 * ticket + point].
#ifdef GPULDPC_NB_TRACE
__device__ unsigned long long g_trace[5 * 8192];
#define NB_STAMP(t, point)                                                                        \
    do {                                                                                          \
        if ((threadIdx.x & 31) == 0 && (t) < 8192) g_trace[5 * (t) + (point)] = resident::now_ns(); \
    } while (0)
#else
#define NB_STAMP(t, point) \
    do {                   \
    } while (0)
#endif

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr unsigned kFull = 0xffffffffu;
constexpr unsigned kSpinLimit = 1u << 25;   // ~10 s of polling: a lost dependency traps, never hangs

template <int Q>
struct Lane {
    static constexpr int W = Q >= 64 ? 4 : (Q >= 32 ? 2 : 1);   // outputs per group
    static constexpr int G = Q >= 64 ? Q / 64 : 1;               // groups per lane
    __device__ static int x0(int lt, int g) { return (W * (lt + 16 * g)) & (Q - 1); }
    __device__ static bool active(int lt) { return W * lt < Q; }
};

template <int W>
__device__ __forceinline__ void load_vec(const float* p, float* o)
{
    if constexpr (W == 4) {
        const float4 v = *reinterpret_cast<const float4*>(p);
        o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w;
    } else if constexpr (W == 2) {
        const float2 v = *reinterpret_cast<const float2*>(p);
        o[0] = v.x; o[1] = v.y;
    } else {
        o[0] = *p;
    }
}

template <int W>
__device__ __forceinline__ void store_vec(float* p, const float* o)
{
    if constexpr (W == 4) {
        *reinterpret_cast<float4*>(p) = make_float4(o[0], o[1], o[2], o[3]);
    } else if constexpr (W == 2) {
        *reinterpret_cast<float2*>(p) = make_float2(o[0], o[1]);
    } else {
        *p = o[0];
    }
}

__device__ __forceinline__ int ld_relaxed(const int* p)
{
    int v;
    asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void fence_acq_rel() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

__device__ __forceinline__ void cp_async16(void* dst, const void* src)
{
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(__cvta_generic_to_global(src))
                 : "memory");
}

__device__ __forceinline__ void cp_async_wait_all()
{
    asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
}

// out = x (*) y on the lane's outputs (written when `write`); x, y, out: q floats in shared memory.
// Each output is a min over q max pairs: the lane keeps P partial minima (the y0 steps dealt
// out in turn) so that its dependent FMNMX chains are q/P long, not q (min is exact in any
// order: the reference's numbers bit for bit).
template <int Q>
__device__ __forceinline__ void minmax_conv(const float* __restrict__ x, const float* __restrict__ y,
                                            float* __restrict__ out, int lt, bool write)
{
    using L = Lane<Q>;
    constexpr int W = L::W, G = L::G;
    constexpr int P = G * W >= 16 ? 1 : (G * W >= 8 ? 2 : (Q / W >= 4 ? 4 : Q / W));
    float part[P][G][W];
#pragma unroll
    for (int p = 0; p < P; ++p)
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
            for (int c = 0; c < W; ++c) part[p][g][c] = nb::inf();
#pragma unroll(Q / (P * W) <= 16 ? Q / (P * W) : 8)
    for (int y1 = 0; y1 < Q; y1 += P * W) {
#pragma unroll
        for (int p = 0; p < P; ++p) {
            const int y0 = y1 + p * W;
            float xa[W];
            load_vec<W>(x + y0, xa);
#pragma unroll
            for (int g = 0; g < G; ++g) {
                float yb[W];
                load_vec<W>(y + (L::x0(lt, g) ^ y0), yb);
#pragma unroll
                for (int j = 0; j < W; ++j)
#pragma unroll
                    for (int c = 0; c < W; ++c) part[p][g][c] = fminf(part[p][g][c], fmaxf(xa[j], yb[c ^ j]));
            }
        }
    }
    float acc[G][W];
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
        for (int c = 0; c < W; ++c) {
            acc[g][c] = part[0][g][c];
#pragma unroll
            for (int p = 1; p < P; ++p) acc[g][c] = fminf(acc[g][c], part[p][g][c]);
        }
    if (write) {
#pragma unroll
        for (int g = 0; g < G; ++g) store_vec<W>(out + L::x0(lt, g), acc[g]);
    }
}

// R_e(a) = m(h a) for the lane's elements a, stored to global memory.
template <int Q>
__device__ __forceinline__ void store_r(const nb::Tables& tab, const float* __restrict__ m, int log_h,
                                        float* __restrict__ r, int lt)
{
    using L = Lane<Q>;
    if (!L::active(lt)) return;
#pragma unroll
    for (int g = 0; g < L::G; ++g) {
        float v[L::W];
#pragma unroll
        for (int c = 0; c < L::W; ++c) v[c] = m[nb::gf_mul_log(tab, log_h, L::x0(lt, g) + c)];
        store_vec<L::W>(r + L::x0(lt, g), v);
    }
}

// Wait until done[nbr[j]] >= need for j in [b, e) (whole warp), polling with relaxed loads and
// ending with one acquire fence.  With `stopv` (early stop), gives up and returns false as soon
// as the task's iteration `it` lies past the stop iteration + 1; `stop_seen` keeps the last value.
__device__ bool wait_rows(const int* __restrict__ done, const int* __restrict__ nbr, int b, int e, int need,
                          const int* stopv, int it, int max_iter, int& stop_seen)
{
    const int lane = threadIdx.x & 31;
    for (int base = b; base < e; base += 32) {
        const int* p = base + lane < e ? done + nbr[base + lane] : nullptr;
        unsigned spins = 0;
        for (;;) {
            const int sv = stopv ? ld_relaxed(stopv) : 0;
            const bool ok = p == nullptr || ld_relaxed(p) >= need;
            if (sv) stop_seen = sv;
            if (__all_sync(kFull, ok)) break;
            if (sv && it > max_iter + 2 - sv) return false;
            __nanosleep(32);
            if (++spins == kSpinLimit) __trap();
        }
    }
    fence_acq_rel();
    __syncwarp();
    return true;
}

struct Frame {
    int* ticket;
    int* stopv;              // 0: no stop yet; else max_iter + 1 - (first all-satisfied iteration)
    int* exitc;
    unsigned* cnt;           // [max_iter + 2]: rows counted | rows failing << 16, per evaluated iteration
                             // (1 .. max_iter); cnt[0]: 1 once a non-finite LLR was loaded
    int* done;               // [M]: last finished iteration of each task row
    unsigned char* sym;      // [max_iter + 1][sym_stride]: decisions after each iteration
    float* r;                // [2][E][q], by iteration parity
};

// One frame's tasks, run by every warp of the frame's blocks (tables: the field tables in shared
// memory); the frame's last warp writes the results, clears the control words and, with `bc`
// (the resident kernel), acknowledges request `seq` after the warp barrier (resident::acknowledge,
// with the request block `ctrl`).
template <int Q>
__device__ void frame_decode(const nb::Tables& tab, const float* __restrict__ in, int in_bits,
                             unsigned char* __restrict__ symbols, int* __restrict__ iterations,
                             unsigned char* __restrict__ valid, unsigned char* __restrict__ scratch,
                             long long frame_bytes, int sym_off, long long r_off, int sym_stride, int ctas_per_frame,
                             const int4* __restrict__ task_row, const int4* __restrict__ edge_meta,
                             const int* __restrict__ stage_edge, const int* __restrict__ nbr_ptr,
                             const int* __restrict__ nbr_row, int n, int M, int E, int dmax, int stage_max,
                             int max_iter, int early_stop, resident::Broadcast* bc, unsigned* ctrl, unsigned seq)
{
    using L = Lane<Q>;
    constexpr int W = L::W, G = L::G;
    extern __shared__ float4 smem4[];
    unsigned char* smem = reinterpret_cast<unsigned char*>(smem4);

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, half = lane >> 4, lt = lane & 15;
    const size_t warp_bytes = 640 + 4 * (size_t)Q * (stage_max + 4 * dmax - 2);
    int4* meta = reinterpret_cast<int4*>(smem + nb::table_bytes(Q) + warp * warp_bytes);   // [32] edge_meta
    int* symrow = reinterpret_cast<int*>(meta + 32);         // [32] decisions of the row's variables
    float* stage = reinterpret_cast<float*>(symrow + 32);    // [stage_max][q]: R of the columns
    float* lch = stage + (size_t)stage_max * Q;               // [dmax][q]: channel LLRs of the variables
    float* qh = lch + (size_t)dmax * Q;                       // [dmax][q]
    float* fw = qh + (size_t)dmax * Q;                        // F_1 .. F_{d-2}
    float* bw = fw + (size_t)(dmax - 2) * Q;                  // B_1 .. B_{d-2}
    float* mbuf = bw + (size_t)(dmax - 2) * Q;                // one merge output per half

    const int frame = blockIdx.x / ctas_per_frame;
    unsigned char* base = scratch + frame * frame_bytes;
    Frame f;
    f.ticket = reinterpret_cast<int*>(base);
    f.stopv = f.ticket + 1;
    f.exitc = f.ticket + 2;
    f.cnt = reinterpret_cast<unsigned*>(f.ticket + 3);
    f.done = f.ticket + 3 + max_iter + 2;
    f.sym = base + sym_off;
    f.r = reinterpret_cast<float*>(base + r_off);
    int mbits = 0;
    while ((1 << mbits) < Q) ++mbits;
    in += (size_t)frame * n * (in_bits ? mbits : Q);

    const int total = (max_iter + 1) * M;
    int t = 0;
    if (lane == 0) t = atomicAdd(f.ticket, 1);
    t = __shfl_sync(kFull, t, 0);
    int stop_seen = 0;                       // stopv as last read (any stale value is safe)
    while (t < total) {
        const int it = t / M + 1, k = t - (it - 1) * M;
        if (stop_seen && it > max_iter + 2 - stop_seen) {      // past the stop iteration + 1
            if (lane == 0) atomicMax(f.done + k, it);
            break;
        }
        int next = 0;
        if (lane == 0) next = atomicAdd(f.ticket, 1);           // in flight during the task
        NB_STAMP(t, 0);
        const int4 row = task_row[k];                           // (first edge, degree, stage begin, count)
        const int rb = row.x, d = row.y;
        const bool eval = it >= 2 && (early_stop || it - 1 == max_iter);
        const bool update = it <= max_iter;
        const float* r_old = f.r + (size_t)((it - 1) & 1) * E * Q;
        float* r_new = f.r + (size_t)(it & 1) * E * Q;
        // Work that needs no other task, done before waiting: the row's edges and the channel
        // LLRs of its variables.
        if (lane < d) meta[lane] = edge_meta[rb + lane];        // (column, log h, stage offset, count | own << 16)
        __syncwarp();
        unsigned bad = 0u;                                      // this lane loaded a non-finite LLR
        for (int i = half; i < d; i += 2) {
            const int v = meta[i].x;
            if (L::active(lt)) {
#pragma unroll
                for (int g = 0; g < G; ++g) {
                    float x[W];
#pragma unroll
                    for (int c = 0; c < W; ++c) x[c] = nb::channel_llr(in, in_bits, mbits, Q, v, L::x0(lt, g) + c, bad);
                    store_vec<W>(lch + (size_t)i * Q + L::x0(lt, g), x);
                }
            }
        }
        if (__any_sync(kFull, bad) && lane == 0) atomicOr(f.cnt, 1u);
        NB_STAMP(t, 1);
        if (it >= 2) {
            if (!wait_rows(f.done, nbr_row, nbr_ptr[k], nbr_ptr[k + 1], it - 1, early_stop ? f.stopv : nullptr,
                           it, max_iter, stop_seen)) {
                if (lane == 0) atomicMax(f.done + k, it);         // past the stop: skipped
                break;
            }
            NB_STAMP(t, 2);
            constexpr int chunks = Q / 4;                        // 16-byte pieces per message
            for (int j = lane; j < row.w * chunks; j += 32) {
                const int p = j / chunks, c = j - p * chunks;
                cp_async16(stage + (size_t)p * Q + 4 * c, r_old + (size_t)stage_edge[row.z + p] * Q + 4 * c);
            }
            cp_async_wait_all();
            NB_STAMP(t, 3);
        }
        __syncwarp();
        // T, decisions and Q of each edge (half h: edges h, h+2, ...; both halves run every round,
        // a half past the last edge repeats edge d-1 without writing, for the full-warp shuffles).
        for (int i0 = 0; i0 < d; i0 += 2) {
            const bool on = i0 + half < d;
            const int i = on ? i0 + half : d - 1;
            const int4 em = meta[i];
            const int v = em.x, log_h = em.y, cnt = em.w & 0xffff, own = em.w >> 16;
            float tv[G][W], ro[G][W];
#pragma unroll
            for (int g = 0; g < G; ++g) {
                load_vec<W>(lch + (size_t)i * Q + L::x0(lt, g), tv[g]);
#pragma unroll
                for (int c = 0; c < W; ++c) ro[g][c] = 0.0f;
            }
            if (it >= 2) {
                for (int j = 0; j < cnt; ++j) {
                    const float* s = stage + (size_t)(em.z + j) * Q;
#pragma unroll
                    for (int g = 0; g < G; ++g) {
                        float x[W];
                        load_vec<W>(s + L::x0(lt, g), x);
#pragma unroll
                        for (int c = 0; c < W; ++c) {
                            tv[g][c] += x[c];
                            if (j == own) ro[g][c] = x[c];
                        }
                    }
                }
            }
            if (eval) {                                          // argmin T: decision after it-1
                float best = nb::inf();
                int arg = 0;
#pragma unroll
                for (int g = 0; g < G; ++g)
#pragma unroll
                    for (int c = 0; c < W; ++c)
                        if (tv[g][c] < best) { best = tv[g][c]; arg = L::x0(lt, g) + c; }
#pragma unroll
                for (int o = 8; o >= 1; o >>= 1) {
                    const float ob = __shfl_xor_sync(kFull, best, o);
                    const int oa = __shfl_xor_sync(kFull, arg, o);
                    if (ob < best || (ob == best && oa < arg)) { best = ob; arg = oa; }
                }
                if (lt == 0 && on) {
                    symrow[i] = arg;
                    f.sym[(size_t)(it - 1) * sym_stride + v] = (unsigned char)arg;
                }
            }
            if (update) {                                        // Q = Q' - min Q', scattered by h
                float mn = nb::inf();
#pragma unroll
                for (int g = 0; g < G; ++g)
#pragma unroll
                    for (int c = 0; c < W; ++c) {
                        tv[g][c] -= ro[g][c];
                        mn = fminf(mn, tv[g][c]);
                    }
#pragma unroll
                for (int o = 8; o >= 1; o >>= 1) mn = fminf(mn, __shfl_xor_sync(kFull, mn, o));
                if (L::active(lt) && on) {
                    float* dst = qh + (size_t)i * Q;
#pragma unroll
                    for (int g = 0; g < G; ++g)
#pragma unroll
                        for (int c = 0; c < W; ++c)
                            dst[nb::gf_mul_log(tab, log_h, L::x0(lt, g) + c)] = tv[g][c] - mn;
                }
            }
        }
        __syncwarp();
        unsigned counted = 0, mine = 0;
        if (eval) {                                              // the row's check after it-1
            int s = 0;
            for (int i = lane; i < d; i += 32) s ^= nb::gf_mul_log(tab, meta[i].y, symrow[i]);
#pragma unroll
            for (int o = 16; o >= 1; o >>= 1) s ^= __shfl_xor_sync(kFull, s, o);
            mine = 1u + ((s != 0 ? 1u : 0u) << 16);
            if (lane == 0) counted = atomicAdd(f.cnt + (it - 1), mine);
        }
        if (update) {
            auto F = [&](int s) { return s == 0 ? qh : fw + (size_t)(s - 1) * Q; };
            auto B = [&](int s) { return s == d - 1 ? qh + (size_t)(d - 1) * Q : bw + (size_t)(s - 1) * Q; };
            for (int s = 1; s <= d - 2; ++s) {                   // F_s (half 0) and B_{d-1-s} (half 1)
                const int tb = d - 1 - s;
                minmax_conv<Q>(half == 0 ? F(s - 1) : B(tb + 1), qh + (size_t)(half == 0 ? s : tb) * Q,
                               half == 0 ? F(s) : B(tb), lt, L::active(lt));
                __syncwarp();
            }
            for (int i0 = 1; i0 <= d - 2; i0 += 2) {             // merges: half h takes i0 + h
                const int i = i0 + half;
                const int ic = i <= d - 2 ? i : i0;
                minmax_conv<Q>(F(ic - 1), B(ic + 1), mbuf + half * Q, lt, L::active(lt));
                __syncwarp();
                if (i <= d - 2) store_r<Q>(tab, mbuf + half * Q, meta[i].y, r_new + (size_t)(rb + i) * Q, lt);
                __syncwarp();
            }
            const int ie = half == 0 ? 0 : d - 1;                // M_0 = B_1, M_{d-1} = F_{d-2}
            store_r<Q>(tab, half == 0 ? B(1) : F(d - 2), meta[ie].y, r_new + (size_t)(rb + ie) * Q, lt);
            __syncwarp();                        // every lane's R stores, then the flag (cumulative release)
            if (lane == 0) asm volatile("red.release.gpu.global.max.s32 [%0], %1;" ::"l"(f.done + k), "r"(it) : "memory");
            NB_STAMP(t, 4);
        }
        if (lane == 0 && eval && early_stop && (counted & 0xffffu) == (unsigned)(M - 1) &&
            ((counted + mine) >> 16) == 0) {
            atomicMax(f.stopv, max_iter + 2 - it);               // iteration it-1 satisfies every check
        }
        t = __shfl_sync(kFull, next, 0);
        __syncwarp();                            // the next task rewrites meta, lch, stage
    }

    // Leave; the frame's last warp writes the results and clears the control words.
    int last = 0;
    if (lane == 0) {
        __threadfence();
        last = atomicAdd(f.exitc, 1) == ctas_per_frame * kWarps - 1;
    }
    if (!__shfl_sync(kFull, last, 0)) return;
    __threadfence();
    const int sv = ld_relaxed(f.stopv);
    const int s = sv ? max_iter + 1 - sv : max_iter;
    const unsigned tally = __ldcg(f.cnt + s);
    const unsigned char* src = f.sym + (size_t)s * sym_stride;
    unsigned char* dst = symbols + (size_t)frame * n;
    for (int v0 = 16 * lane; v0 < n; v0 += 16 * 32) {
        const uint4 w = __ldcg(reinterpret_cast<const uint4*>(src + v0));
        if (v0 + 16 <= n && (reinterpret_cast<size_t>(dst + v0) & 15) == 0) {
            *reinterpret_cast<uint4*>(dst + v0) = w;    // one store (one PCIe write to mapped memory)
            continue;
        }
        const unsigned words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int b = 0; b < 16; ++b)
            if (v0 + b < n) dst[v0 + b] = (unsigned char)(words[b >> 2] >> (8 * (b & 3)));
    }
    if (lane == 0) {
        iterations[frame] = sv ? s : max_iter;
        valid[frame] = ((tally >> 16) == 0 ? 1 : 0) | (__ldcg(f.cnt) ? llr::kBadLlrFlag : 0);
        *f.ticket = 0;
        *f.stopv = 0;
        *f.exitc = 0;
    }
    for (int j = lane; j < max_iter + 2; j += 32) f.cnt[j] = 0;
    for (int j = lane; j < M; j += 32) f.done[j] = 0;
    if (bc != nullptr) {                         // results and cleared words, then the ack (cumulative)
        __syncwarp();
        if (lane == 0) resident::acknowledge(ctrl, bc, seq);
    }
}

// dst[0 .. count) = src[...] (16-byte aligned) by the block, all of a thread's loads in flight
// before its stores (src is mapped host memory: one PCIe round trip a round of kCopy float4s a
// thread, not one a float4), then a fence.
__device__ void copy_in(const float* __restrict__ src, float* __restrict__ dst, int count)
{
    constexpr int kCopy = 8;
    const int n4 = count / 4;
    const float4* s4 = reinterpret_cast<const float4*>(src);
    float4* d4 = reinterpret_cast<float4*>(dst);
    for (int base = 0; base < n4; base += kCopy * blockDim.x) {
        float4 v[kCopy];
#pragma unroll
        for (int k = 0; k < kCopy; ++k) {
            const int i = base + k * blockDim.x + threadIdx.x;
            if (i < n4) v[k] = s4[i];
        }
#pragma unroll
        for (int k = 0; k < kCopy; ++k) {
            const int i = base + k * blockDim.x + threadIdx.x;
            if (i < n4) d4[i] = v[k];
        }
    }
    for (int i = 4 * n4 + threadIdx.x; i < count; i += blockDim.x) dst[i] = src[i];
    __threadfence();
}

// The resident copy (python/gpuldpc/cuda/resident.py): the field tables once a launch, then one
// frame of bit LLRs a request (resident.cuh's protocol).  Block 0 copies the request's LLRs from
// mapped host memory into `in_dev` (one coalesced pass over PCIe, instead of every task reading
// its variables over it) before it broadcasts the request, so the other blocks' tasks read them
// from device memory as the launched kernel does; the frame's last warp acknowledges.
template <int Q>
__device__ void resident_frames(unsigned* ctrl, resident::Broadcast* bc, unsigned id, unsigned long long idle_ns,
                                unsigned long long life_ns, float* __restrict__ in_dev, int in_floats,
                                unsigned char* symbols, int* iterations, unsigned char* valid, unsigned char* scratch,
                                long long frame_bytes, int sym_off, long long r_off, int sym_stride, int ctas_per_frame,
                                const unsigned char* gexp, const short* glog, const int4* task_row,
                                const int4* edge_meta, const int* stage_edge, const int* nbr_ptr, const int* nbr_row,
                                int n, int M, int E, int dmax, int stage_max, int max_iter, int early_stop)
{
    __shared__ unsigned s_seq;
    __shared__ unsigned long long s_llr;
    extern __shared__ float4 smem4[];
    const nb::Tables tab = nb::load_tables(reinterpret_cast<unsigned char*>(smem4), gexp, glog, Q);
    const unsigned long long born = resident::now_ns();
    unsigned last = *reinterpret_cast<volatile unsigned*>(&bc->last);
    for (;;) {
        if (threadIdx.x == 0) {
            int frames = 0;
            unsigned long long llr = 0;
            if (blockIdx.x == 0) {
                resident::wait_done(bc, last);
                s_seq = resident::poll_host(ctrl, last, born, idle_ns, life_ns, frames, llr);
            } else {
                s_seq = resident::follow(bc, id, last, frames, llr);
            }
            s_llr = llr;
        }
        __syncthreads();
        const unsigned seq = s_seq;
        if (blockIdx.x == 0) {
            if (seq != resident::kLeave) copy_in(reinterpret_cast<const float*>(s_llr), in_dev, in_floats);
            __syncthreads();
            if (threadIdx.x == 0) resident::broadcast(bc, id, seq, 1, s_llr);
        }
        if (seq == resident::kLeave) {
            if (blockIdx.x == 0 && threadIdx.x == 0) resident::leave(ctrl, bc, last);
            return;
        }
        frame_decode<Q>(tab, in_dev, 1, symbols, iterations, valid, scratch, frame_bytes, sym_off, r_off, sym_stride,
                        ctas_per_frame, task_row, edge_meta, stage_edge, nbr_ptr, nbr_row, n, M, E, dmax, stage_max,
                        max_iter, early_stop, bc, ctrl, seq);
        last = seq;
        __syncthreads();                         // s_seq is rewritten
    }
}

}  // namespace

#define NB_FRAME_KERNEL(Q)                                                                                 \
    extern "C" __global__ void __launch_bounds__(kThreads) nb_frame_q##Q(                                 \
        const float* in, int in_bits, unsigned char* symbols, int* iterations, unsigned char* valid,       \
        unsigned char* scratch, long long frame_bytes, int sym_off, long long r_off, int sym_stride,       \
        int ctas_per_frame, const unsigned char* gexp, const short* glog, const int4* task_row,            \
        const int4* edge_meta, const int* stage_edge, const int* nbr_ptr, const int* nbr_row, int n,       \
        int M, int E, int dmax, int stage_max, int max_iter, int early_stop)                               \
    {                                                                                                      \
        extern __shared__ float4 smem4[];                                                                  \
        const nb::Tables tab = nb::load_tables(reinterpret_cast<unsigned char*>(smem4), gexp, glog, Q);    \
        __syncthreads();                         /* field tables; no block-wide barrier after this */      \
        frame_decode<Q>(tab, in, in_bits, symbols, iterations, valid, scratch, frame_bytes, sym_off, r_off, \
                        sym_stride, ctas_per_frame, task_row, edge_meta, stage_edge, nbr_ptr, nbr_row, n, M, \
                        E, dmax, stage_max, max_iter, early_stop, nullptr, nullptr, 0u);                   \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(kThreads) nb_frame_resident_q##Q(                        \
        unsigned* ctrl, resident::Broadcast* bc, unsigned id, unsigned long long idle_ns,                  \
        unsigned long long life_ns, float* in_dev, int in_floats, unsigned char* symbols, int* iterations, \
        unsigned char* valid, unsigned char* scratch, long long frame_bytes, int sym_off, long long r_off,  \
        int sym_stride, int ctas_per_frame, const unsigned char* gexp, const short* glog,                  \
        const int4* task_row, const int4* edge_meta, const int* stage_edge, const int* nbr_ptr,            \
        const int* nbr_row, int n, int M, int E, int dmax, int stage_max, int max_iter, int early_stop)    \
    {                                                                                                      \
        resident_frames<Q>(ctrl, bc, id, idle_ns, life_ns, in_dev, in_floats, symbols, iterations, valid,  \
                           scratch, frame_bytes, sym_off, r_off, sym_stride, ctas_per_frame, gexp, glog,   \
                           task_row, edge_meta, stage_edge, nbr_ptr, nbr_row, n, M, E, dmax, stage_max,    \
                           max_iter, early_stop);                                                          \
    }

NB_FRAME_KERNEL(4)
NB_FRAME_KERNEL(8)
NB_FRAME_KERNEL(16)
NB_FRAME_KERNEL(32)
NB_FRAME_KERNEL(64)
NB_FRAME_KERNEL(128)
NB_FRAME_KERNEL(256)
