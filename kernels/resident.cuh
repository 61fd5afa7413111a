// Resident kernels: the request protocol shared by the binary latency kernel (qc_resident.cu)
// and the GF(q) one-frame kernel (nb_frame.cu), host side python/gpuldpc/cuda/resident.py.
//
// Request block (mapped page-locked host memory, 32-bit words): [0], [1] the request, one
// aligned 64-bit word written at once by the host (read at once by the kernel: one PCIe round
// trip a request): seq << 48 | LLR address (8-byte aligned, below 2^48) | frames - 1 (frames
// 1..8), seq a 16-bit request number 1..65535; [2] ack, the last request done; [3] alive, set by
// the host before a launch and cleared by the kernel when it leaves.
// Block 0 polls the host (acquire, system scope) and hands each request to the other blocks
// through `Broadcast` in device memory (its seq word carries the launch's id in the high half, so
// a word left by an earlier launch is never taken for a request).  The kernel leaves after
// `idle_ns` without a request or `life_ns` after its launch (poll_host returns kLeave), but never
// while a request is in flight: block 0 first waits for the acknowledgement of the last one
// (wait_done), so that blocks not yet resident when the request came (the GPU shared with other
// kernels) still find it, not kLeave, when they start.
#pragma once

namespace resident {

constexpr unsigned kLeave = 0xffffffffu;   // broadcast seq: the launch is over

struct Broadcast {
    unsigned long long word;   // id << 32 | seq (or kLeave)
    unsigned long long llr;    // LLR address of the request
    int frames;
    unsigned count;            // blocks done with the current request
    unsigned last;             // last request done (read by the next launch)
    unsigned done;             // last request acknowledged (written by the acknowledging thread)
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

// Thread 0 of block 0: the next request after `last` from the host (seq, frames, llr), or kLeave
// once `idle_ns` passed without one (since t0) or `life_ns` since the launch (born).
__device__ inline unsigned poll_host(const unsigned* ctrl, unsigned last, unsigned long long born,
                                     unsigned long long idle_ns, unsigned long long life_ns, int& frames,
                                     unsigned long long& llr)
{
    const unsigned long long t0 = now_ns();
    for (;;) {
        const unsigned long long w = ld_acquire_sys64(reinterpret_cast<const unsigned long long*>(ctrl));
        const unsigned r = (unsigned)(w >> 48);
        if (r != last) {                         // the whole request in one read: one PCIe round trip
            frames = (int)(w & 7) + 1;
            llr = w & 0x0000fffffffffff8ull;
            return r;
        }
        const unsigned long long t = now_ns();
        if (t - t0 > idle_ns || t - born > life_ns) return kLeave;
        __nanosleep(100);
    }
}

// The acknowledging thread, once every result of request `seq` is ordered before it (a barrier,
// or a fence after the other blocks' counts): mark it done for block 0 (wait_done), then
// acknowledge it to the host (a system-scope release, cumulative over those results).
__device__ __forceinline__ void acknowledge(unsigned* ctrl, Broadcast* bc, unsigned seq)
{
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(&bc->done), "r"(seq) : "memory");
    st_release_sys(ctrl + 2, seq);
}

// Thread 0 of block 0, before it polls for the next request: wait until request `last` has been
// acknowledged (every block that serves it has run, however late it became resident).
__device__ inline void wait_done(const Broadcast* bc, unsigned last)
{
    for (;;) {
        unsigned v;
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(&bc->done) : "memory");
        if (v == last) return;
        __nanosleep(100);
    }
}

// Thread 0 of block 0: hand request `seq` (or kLeave) to the other blocks.
__device__ __forceinline__ void broadcast(Broadcast* bc, unsigned id, unsigned seq, int frames,
                                          unsigned long long llr)
{
    if (gridDim.x > 1) {
        bc->frames = frames;
        bc->llr = llr;
        st_release_gpu(&bc->word, ((unsigned long long)id << 32) | seq);
    }
}

// Thread 0 of the other blocks: the request block 0 broadcast after `last`.
__device__ inline unsigned follow(Broadcast* bc, unsigned id, unsigned last, int& frames, unsigned long long& llr)
{
    for (;;) {
        const unsigned long long w = ld_acquire_gpu(&bc->word);
        if ((unsigned)(w >> 32) == id && (unsigned)w != last) {
            frames = *reinterpret_cast<volatile int*>(&bc->frames);
            llr = *reinterpret_cast<volatile unsigned long long*>(&bc->llr);
            return (unsigned)w;
        }
        __nanosleep(100);
    }
}

// Block 0 thread 0 when the launch leaves: the last request done (for the next launch), then
// alive = 0 (the host launches again at its next request).
__device__ __forceinline__ void leave(unsigned* ctrl, Broadcast* bc, unsigned last)
{
    bc->last = last;
    __threadfence_system();
    st_release_sys(ctrl + 3, 0u);
}

}  // namespace resident
