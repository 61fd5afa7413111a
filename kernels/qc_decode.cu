// Entry points of the binary QC-LDPC decoders; the device code and its description are in
// qc_decode.cuh.
#include "qc_decode.cuh"

// Entry points: qc_<messages>_<schedule>_<input>, one argument list for all of them.
//   messages: ms<LAYERS_MAX>x<DC_MAX>  min-sum (nms/oms) with compressed rows in registers,
//             for codes with mb <= LAYERS_MAX layers and rows of <= DC_MAX blocks (blocks of up
//             to 512 threads; ms24x10, hs24x10, hs16x24: 384);
//             ep<LAYERS_MAX>x<LANES>x<EDGES>  min-sum with each row over LANES threads
//             (EdgeParallelMinSum; fpb * z * LANES threads a block): the latency kernels
//             (v7 ep12x8x1; v8 ep12x2x4); ep<LAYERS_MAX>x1x<EDGES>: a row a thread, its state
//             in shared memory (SharedRowMinSum; fpb * z threads a block, and SharedRowMinSum::
//             state_bytes(mb) + 16 more bytes of dynamic shared memory), the latency preset's since v9;
//             pl<LAYERS_MAX>x2x<ROW>  the same with two layers of no common column a step, rows of up
//             to ROW blocks (computed at ROW edges, the table padded to 4s)
//             (layered only; fpb * 2z threads a block; the host pairs the layers: layout.pair_layers),
//             the latency preset's where the code's layers pair up (WiMAX rate 1/2);
//             stored  any rule, messages in device memory (msg_store: frames*nblocks*z floats);
//             hs<LAYERS_MAX>x<DC_MAX>  the ms kernels in binary16, two frames a thread (HalfMinSum:
//             fpb even, fpb / 2 * z threads a block; hs12x7, hs12x8: through the column table,
//             z <= 256); hw12x8  hs12x8 without the column table, for 256 < z <= 512;
//             mm<DC_MAX>, hm<DC_MAX>  the ms / hs kernels with the rows' state in device memory, any
//             number of layers >= 2 (msg_store: ms 3, hs 5 words a row and layer of each frame /
//             frame pair; blocks of up to 384 threads).
//   schedule: layered | flooding;   input: f32 | f16 | i8 (LLR = value * scale); the binary16
//   kernels (hs, hw, hm) also i4: packed int4 rows of ceil(n/2) bytes (qc_decode.cuh Nibbles).
// soft: 0, or float32 [frames][n] that receives each frame's posteriors at its stop (soft output,
// python/gpuldpc/soft.py; the throughput preset's ms*, hs* and stored kernels: the host refuses it
// for the others).
#define GPULDPC_ARGS(In)                                                                           \
    const In *llr, float scale, unsigned char *bits, int packed, int *iters, unsigned char *valid, \
        const int2 *edges, const int *layer_start, float *msg_store, int n, int z, int mb,          \
        int nblocks, int frames, int fpb, int max_iter, int early_stop, int rule, float alpha,      \
        float beta, float *soft
#define GPULDPC_PASS                                                                                \
    llr, scale, bits, packed, iters, valid, edges, layer_start, msg_store, n, z, mb, nblocks, frames, \
        fpb, max_iter, early_stop, rule, alpha, beta, soft
#define GPULDPC_KERNEL(name, M, FLOOD, In)                                                          \
    extern "C" __global__ void __launch_bounds__(M::kMaxThreads, M::kMinBlocks) name(GPULDPC_ARGS(In))  \
    {                                                                                               \
        decode_frames<M, FLOOD, In>(GPULDPC_PASS);                                                  \
    }
#define GPULDPC_INPUTS(prefix, M, FLOOD)                  \
    GPULDPC_KERNEL(prefix##_f32, M, FLOOD, float)         \
    GPULDPC_KERNEL(prefix##_f16, M, FLOOD, __half)        \
    GPULDPC_KERNEL(prefix##_i8, M, FLOOD, signed char)
#define GPULDPC_SCHEDULES(prefix, M)                      \
    GPULDPC_INPUTS(prefix##_layered, M, false)            \
    GPULDPC_INPUTS(prefix##_flooding, M, true)
// the binary16 (frame pair) kernels also read packed int4 rows in their load (load_pairs of Nibbles)
#define GPULDPC_HALF_SCHEDULES(prefix, M)                         \
    GPULDPC_SCHEDULES(prefix, M)                                  \
    GPULDPC_KERNEL(prefix##_layered_i4, M, false, Nibbles)        \
    GPULDPC_KERNEL(prefix##_flooding_i4, M, true, Nibbles)

using Ms12x7 = RegisterMinSum<12, 7, 2>;
using Ms12x8 = RegisterMinSum<12, 8, 2>;
using Ms8x16 = RegisterMinSum<8, 16, 1>;
using Ms4x24 = RegisterMinSum<4, 24, 1>;
using Ms16x16 = RegisterMinSum<16, 16, 1>;
// 5G NR pruned graphs (gpuldpc.codes.shaping.prune): BG1 rate 8/9 and 4/5 (5 / 8 layers, rows of
// 19 blocks), BG1 rate 2/3 and 3/4 (13 / 10 layers), BG2 rate 1/3 (22 layers, rows of <= 10).
// Variants past 128 registers are bounded at 384 threads a block (Zc <= 384: one frame, or one
// frame pair of the binary16 kernels, a block) instead of spilling.
using Ms8x24 = RegisterMinSum<8, 24, 1>;
using Ms16x24 = RegisterMinSum<16, 24, 1>;
using Ms24x10 = RegisterMinSum<24, 10, 1, 384>;
// Graphs with more layers than registers hold (5G NR BG1 below rate 2/3: up to 46 layers, BG2 below
// 1/3: up to 42; rows of up to 24 blocks): the rows' state in device memory (RowState<0, ...>).
using Mm24 = RegisterMinSum<0, 24, 2, 384>;
using Hm24 = HalfMinSum<0, 24, 2, 384>;
using Ep12x8x1 = EdgeParallelMinSum<12, 8, 1, 768, 1>;
using Ep12x2x4 = EdgeParallelMinSum<12, 2, 4, 192, 1>;
using Ep12x1x8 = SharedRowMinSum<12, 8, 96>;
using Pl12x2x7 = SharedRowMinSum<12, 7, 192, 2>;
using Stored = StoredMessages<27>;
using Hs12x7 = HalfMinSum<12, 7, 2>;
using Hs12x8 = HalfMinSum<12, 8, 2>;
using Hw12x8 = HalfMinSum<12, 8, 2, kMaxBlockThreads, false>;
using Hs8x16 = HalfMinSum<8, 16, 1>;
using Hs4x24 = HalfMinSum<4, 24, 1>;
using Hs8x24 = HalfMinSum<8, 24, 1>;
using Hs24x10 = HalfMinSum<24, 10, 1, 384>;
using Hs16x24 = HalfMinSum<16, 24, 1, 384>;
GPULDPC_SCHEDULES(qc_ms12x7, Ms12x7)
GPULDPC_SCHEDULES(qc_ms12x8, Ms12x8)
GPULDPC_SCHEDULES(qc_ms8x16, Ms8x16)
GPULDPC_SCHEDULES(qc_ms4x24, Ms4x24)
GPULDPC_SCHEDULES(qc_ms16x16, Ms16x16)
GPULDPC_SCHEDULES(qc_ms8x24, Ms8x24)
GPULDPC_SCHEDULES(qc_ms16x24, Ms16x24)
GPULDPC_SCHEDULES(qc_ms24x10, Ms24x10)
GPULDPC_SCHEDULES(qc_mm24, Mm24)
GPULDPC_HALF_SCHEDULES(qc_hm24, Hm24)
GPULDPC_SCHEDULES(qc_ep12x8x1, Ep12x8x1)
GPULDPC_SCHEDULES(qc_ep12x2x4, Ep12x2x4)
GPULDPC_SCHEDULES(qc_ep12x1x8, Ep12x1x8)
GPULDPC_INPUTS(qc_pl12x2x7_layered, Pl12x2x7, false)
GPULDPC_SCHEDULES(qc_stored, Stored)
GPULDPC_HALF_SCHEDULES(qc_hs12x7, Hs12x7)
GPULDPC_HALF_SCHEDULES(qc_hs12x8, Hs12x8)
GPULDPC_HALF_SCHEDULES(qc_hw12x8, Hw12x8)
GPULDPC_HALF_SCHEDULES(qc_hs8x16, Hs8x16)
GPULDPC_HALF_SCHEDULES(qc_hs4x24, Hs4x24)
GPULDPC_HALF_SCHEDULES(qc_hs8x24, Hs8x24)
GPULDPC_HALF_SCHEDULES(qc_hs24x10, Hs24x10)
GPULDPC_HALF_SCHEDULES(qc_hs16x24, Hs16x24)
