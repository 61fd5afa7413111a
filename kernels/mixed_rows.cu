// Rows of bytes moved between a padded array and a packed one through an index table: the
// device side of gl.MixedDecoder (docs/mixed.md, "On the GPU").
//
//   gather   dst[i, 0:width] = src[rows[i], 0:width]     i = 0 .. count-1
//   scatter  dst[rows[i], 0:width] = src[i, 0:width]
//
// src and dst are byte arrays whose rows lie src_pitch / dst_pitch bytes apart; rows[] holds
// row numbers (int32).  Gather packs one code's frames of a mixed batch (rows of max-n LLRs,
// the caller's order) into the contiguous input of that code's decoder; scatter puts the
// decoder's results (hard decisions, iteration counts) back at the frames' positions.
//
// Each entry moves vectors of V bytes (V = 16, 8, 4, 2, 1): the caller
// (gpuldpc.cuda.mixed_rows.vector_bytes) picks the largest V dividing the width, both pitches
// and both base addresses, so every access is V-aligned (16: one 128-bit load and store a
// thread, for float32/int8/float16 rows of WiFi and WiMAX codes).  One block a row at a time
// (blocks stride over the rows), its threads over the row's vectors: no division per element.

namespace {

template <class V, bool kGather>
__device__ void move_rows(const unsigned char* __restrict__ src, long long src_pitch,
                          unsigned char* __restrict__ dst, long long dst_pitch,
                          const int* __restrict__ rows, int width, int count)
{
    const int vectors = width / (int)sizeof(V);
    for (int i = blockIdx.x; i < count; i += gridDim.x) {
        const long long from = kGather ? (long long)rows[i] : (long long)i;
        const long long to = kGather ? (long long)i : (long long)rows[i];
        const V* s = reinterpret_cast<const V*>(src + from * src_pitch);
        V* d = reinterpret_cast<V*>(dst + to * dst_pitch);
        for (int j = threadIdx.x; j < vectors; j += blockDim.x) d[j] = s[j];
    }
}

}  // namespace

#define GPULDPC_MIXED_ROWS(NAME, V, GATHER)                                                        \
    extern "C" __global__ void __launch_bounds__(128) NAME(                                        \
        const unsigned char* __restrict__ src, long long src_pitch, unsigned char* __restrict__ dst, \
        long long dst_pitch, const int* __restrict__ rows, int width, int count)                   \
    {                                                                                              \
        move_rows<V, GATHER>(src, src_pitch, dst, dst_pitch, rows, width, count);                  \
    }

GPULDPC_MIXED_ROWS(mixed_gather_v16, uint4, true)
GPULDPC_MIXED_ROWS(mixed_gather_v8, uint2, true)
GPULDPC_MIXED_ROWS(mixed_gather_v4, unsigned int, true)
GPULDPC_MIXED_ROWS(mixed_gather_v2, unsigned short, true)
GPULDPC_MIXED_ROWS(mixed_gather_v1, unsigned char, true)
GPULDPC_MIXED_ROWS(mixed_scatter_v16, uint4, false)
GPULDPC_MIXED_ROWS(mixed_scatter_v8, uint2, false)
GPULDPC_MIXED_ROWS(mixed_scatter_v4, unsigned int, false)
GPULDPC_MIXED_ROWS(mixed_scatter_v2, unsigned short, false)
GPULDPC_MIXED_ROWS(mixed_scatter_v1, unsigned char, false)
