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
// The request protocol (request block, broadcast to the other blocks, leaving): resident.cuh.
// The last block to finish a request acknowledges it (a lone frame's block at once) with a
// system-scope release by its thread 0 after the block's barrier.
#include "qc_decode.cuh"
#include "resident.cuh"

namespace {

using resident::Broadcast;
using resident::kLeave;

// Thread 0 of each block: the next request (seq, frames, llr) after `last`, or kLeave.
__device__ unsigned next_request(unsigned* ctrl, Broadcast* bc, unsigned id, unsigned last, unsigned long long born,
                                 unsigned long long idle_ns, unsigned long long life_ns, int& frames,
                                 unsigned long long& llr)
{
    if (blockIdx.x != 0) return resident::follow(bc, id, last, frames, llr);
    resident::wait_done(bc, last);
    const unsigned seq = resident::poll_host(ctrl, last, born, idle_ns, life_ns, frames, llr);
    resident::broadcast(bc, id, seq, frames, llr);
    return seq;
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
    const unsigned long long born = resident::now_ns();
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
            if (blockIdx.x == 0 && threadIdx.x == 0) resident::leave(ctrl, bc, last);
            return;
        }
        if ((int)blockIdx.x < frames) {
            decode_frames<M, false, In, kFrames>(reinterpret_cast<const In*>(s_llr), scale, bits, packed, iters,
                                                 valid, edges, layer_start, msg_store, n, z, mb, nblocks, frames, 1,
                                                 max_iter, early_stop, rule, alpha, beta, nullptr);
            // the block's results, then thread 0's release: cumulative through the barrier (the
            // pattern of cooperative groups' grid sync), no fence in every thread
            __syncthreads();
            if (threadIdx.x == 0) {
                if (frames == 1) {
                    resident::acknowledge(ctrl, bc, seq);
                } else {
                    __threadfence_system();
                    if (atomicAdd(&bc->count, 1u) == (unsigned)frames - 1) {
                        bc->count = 0;
                        __threadfence_system();      // the other blocks' counts (and results), then the ack
                        resident::acknowledge(ctrl, bc, seq);
                    }
                }
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
