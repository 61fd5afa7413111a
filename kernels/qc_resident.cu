// Resident latency decoder: the binary latency kernel kept running between calls.
//
// A launch costs the host about 5 us (the driver call, the GPU picking up the work, the
// synchronize) on top of the decode (H200: launch + synchronize of an empty kernel 8.9 us, a
// request posted to a running kernel through mapped host memory 3.5 us; docs/gpu.md).  For the
// latency preset the kernel therefore stays resident: it polls a request block in mapped
// page-locked host memory, decodes the frames a request names with the same code as the
// launched kernels (decode_frames of qc_decode.cuh, one frame a block: its kTables part once a
// launch, so the block tables and the column table stay in shared memory, its kFrames part per
// request: LLRs, zero messages, flags; valid bit 1 for a frame with non-finite LLRs, as in
// every launched kernel: llr_load.cuh), writes the results into mapped host memory and
// acknowledges; it leaves after `idle_ns` without a request or after
// `life_ns` in all (so that the implicit device synchronization of cuMemFree and friends in
// the process waits at most that long), and the host launches it again at the next request
// (python/gpuldpc/cuda/resident.py).
//
// Request block (host memory, 32-bit words): [0], [1] the request, one aligned 64-bit word
// written at once by the host (read at once by the kernel: one PCIe round trip a request):
// seq << 48 | LLR address (8-byte aligned, below 2^48) | frames - 1 (frames 1..8), seq a 16-bit
// request number 1..65535; [2] ack, the last request done; [3] alive, set by the host before a
// launch and cleared by the kernel when it leaves.
// Block 0 polls the host (acquire, system scope) and hands each request to the other blocks
// through `bc` in device memory (its seq word carries the launch's id in the high half, so a
// word left by an earlier launch is never taken for a request).  The last block to finish a
// request acknowledges it after a system-scope fence.
#include "qc_decode.cuh"

namespace {

constexpr unsigned kLeave = 0xffffffffu;   // broadcast seq: the launch is over

struct Broadcast {
    unsigned long long word;   // id << 32 | seq (or kLeave)
    unsigned long long llr;    // LLR address of the request
    int frames;
    unsigned count;            // blocks done with the current request
    unsigned last;             // last request done (read by the next launch)
};

__device__ __forceinline__ unsigned long long now_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned long long ld_acquire_sys64(const unsigned long long* p)
{
    unsigned long long v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void st_release_sys(unsigned* p, unsigned v)
{
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned long long ld_acquire_gpu(const unsigned long long* p)
{
    unsigned long long v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void st_release_gpu(unsigned long long* p, unsigned long long v)
{
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// Thread 0 of each block: the next request (seq, frames, llr) after `last`, or kLeave.
__device__ unsigned next_request(unsigned* ctrl, Broadcast* bc, unsigned id, unsigned last, unsigned long long born,
                                 unsigned long long idle_ns, unsigned long long life_ns, int& frames,
                                 unsigned long long& llr)
{
    const unsigned long long t0 = now_ns();
    if (blockIdx.x == 0) {
        unsigned seq = kLeave;
        for (;;) {
            const unsigned long long w = ld_acquire_sys64(reinterpret_cast<const unsigned long long*>(ctrl));
            const unsigned r = (unsigned)(w >> 48);
            if (r != last) {                     // the whole request in one read: one PCIe round trip
                seq = r;
                frames = (int)(w & 7) + 1;
                llr = w & 0x0000fffffffffff8ull;
                break;
            }
            const unsigned long long t = now_ns();
            if (t - t0 > idle_ns || t - born > life_ns) break;
            __nanosleep(100);
        }
        if (gridDim.x > 1) {
            bc->frames = frames;
            bc->llr = llr;
            st_release_gpu(&bc->word, ((unsigned long long)id << 32) | seq);
        }
        return seq;
    }
    for (;;) {                                   // the other blocks follow block 0
        const unsigned long long w = ld_acquire_gpu(&bc->word);
        if ((unsigned)(w >> 32) == id && (unsigned)w != last) {
            frames = *reinterpret_cast<volatile int*>(&bc->frames);
            llr = *reinterpret_cast<volatile unsigned long long*>(&bc->llr);
            return (unsigned)w;
        }
        __nanosleep(100);
    }
}

template <class M, typename In>
__device__ void resident_decode(unsigned* ctrl, Broadcast* bc, unsigned id, unsigned long long idle_ns,
                                unsigned long long life_ns, float scale, unsigned char* bits, int packed,
                                int* iters, unsigned char* valid, const int2* edges, const int* layer_start,
                                float* msg_store, int n, int z, int mb, int nblocks, int max_iter, int early_stop,
                                int rule, float alpha, float beta)
{
    __shared__ unsigned s_seq;
    __shared__ int s_frames;
    __shared__ unsigned long long s_llr;
    const unsigned long long born = now_ns();
    unsigned last = *reinterpret_cast<volatile unsigned*>(&bc->last);
    // the block tables and the column table, once a launch (every block: one frame of a full grid)
    decode_frames<M, false, In, kTables>(nullptr, scale, bits, packed, iters, valid, edges, layer_start, msg_store, n,
                                         z, mb, nblocks, (int)gridDim.x, 1, max_iter, early_stop, rule, alpha, beta,
                                         nullptr);
    for (;;) {
        if (threadIdx.x == 0) {
            int frames = 0;
            unsigned long long llr = 0;
            s_seq = next_request(ctrl, bc, id, last, born, idle_ns, life_ns, frames, llr);
            s_frames = frames;
            s_llr = llr;
        }
        __syncthreads();
        const unsigned seq = s_seq;
        const int frames = s_frames;
        if (seq == kLeave) {
            if (blockIdx.x == 0 && threadIdx.x == 0) {
                bc->last = last;
                __threadfence_system();
                st_release_sys(ctrl + 3, 0u);    // alive = 0: the host launches again
            }
            return;
        }
        if ((int)blockIdx.x < frames) {
            decode_frames<M, false, In, kFrames>(reinterpret_cast<const In*>(s_llr), scale, bits, packed, iters,
                                                 valid, edges, layer_start, msg_store, n, z, mb, nblocks, frames, 1,
                                                 max_iter, early_stop, rule, alpha, beta, nullptr);
            __threadfence_system();              // this thread's results, before the count
            __syncthreads();
            if (threadIdx.x == 0 && atomicAdd(&bc->count, 1u) == (unsigned)frames - 1) {
                bc->count = 0;
                __threadfence_system();
                st_release_sys(ctrl + 2, seq);   // ack
            }
        }
        last = seq;
        __syncthreads();                         // s_seq is rewritten
    }
}

}  // namespace

// qc_<messages>_resident_layered_<input>: the latency preset's layered kernel kept resident; one
// frame a block, grid = the frames a request may carry (python/gpuldpc/cuda/resident.py MAX_FRAMES).
#define GPULDPC_RESIDENT(name, M, In)                                                                      \
    extern "C" __global__ void __launch_bounds__(M::kMaxThreads, M::kMinBlocks) name(                      \
        unsigned *ctrl, Broadcast *bc, unsigned id, unsigned long long idle_ns, unsigned long long life_ns, \
        float scale, unsigned char *bits, int packed, int *iters, unsigned char *valid, const int2 *edges,  \
        const int *layer_start, float *msg_store, int n, int z, int mb, int nblocks, int max_iter,          \
        int early_stop, int rule, float alpha, float beta)                                                 \
    {                                                                                                      \
        resident_decode<M, In>(ctrl, bc, id, idle_ns, life_ns, scale, bits, packed, iters, valid, edges,   \
                               layer_start, msg_store, n, z, mb, nblocks, max_iter, early_stop, rule, alpha, \
                               beta);                                                                      \
    }
#define GPULDPC_RESIDENT_INPUTS(prefix, M)                 \
    GPULDPC_RESIDENT(prefix##_resident_layered_f32, M, float) \
    GPULDPC_RESIDENT(prefix##_resident_layered_f16, M, __half) \
    GPULDPC_RESIDENT(prefix##_resident_layered_i8, M, signed char)

// the latency preset's layered kernels (python/gpuldpc/cuda/decoder.py EDGE_PARALLEL, PAIRED_ROWS,
// RESIDENT_PREFIXES): a layer a step, and two layers of no common column a step
using LatencyRows = SharedRowMinSum<12, 8, 96>;
using PairedRows = SharedRowMinSum<12, 7, 192, 2>;
GPULDPC_RESIDENT_INPUTS(qc_ep12x1x8, LatencyRows)
GPULDPC_RESIDENT_INPUTS(qc_pl12x2x7, PairedRows)
