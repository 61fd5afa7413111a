// Intra-frame layered min-sum for binary quasi-cyclic codes: one frame at a
// time, the z rows of a layer (base row) in the SIMD lanes.
//
// Le Gal & Jego, "Low-latency software LDPC decoders for x86 multi-core
// devices", SiPS 2017 (the intra-frame mapping; issue 17's anchor, not among
// /work/shared/papers, so no section is cited): a layer of a QC code
// is z independent check rows; row t of base row i reads variable
// j*z + (t + s_ij) mod z of every block column j with shift s_ij >= 0, so rows
// t..t+N-1 read N consecutive posteriors of block column j, from offset
// (t + s_ij) mod z, and one unaligned vector load serves N rows.  Here each
// block column's first N - 1 posteriors are copied after its last, so the load
// never wraps; a store that touches them writes both copies.
//
// The per-row arithmetic is the inter-frame decoder's (MinSumRow,
// cpu_min_sum-inl.h), and the rows of a layer share no variable, so decisions,
// iteration counts, syndrome flags and posteriors are the inter-frame
// decoder's bit for bit in every precision, and in float32 the layered
// reference's (python/gpuldpc/decoders/reference_binary.py).  NMS and OMS in
// float32, int16 and int8, layered schedule only (IntraFrameSupports).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpuldpc/cpu_binary_decoder.hpp"
#include "hwy/aligned_allocator.h"

namespace gpuldpc {
namespace cpu {

// The layers of a QC code, base row by base row: the nonzero blocks of base
// row i are block_col/shift[layer_ptr[i] .. layer_ptr[i+1]).
struct QcLayers {
  int z = 0;
  int mb = 0;
  int nb = 0;
  std::vector<uint32_t> layer_ptr;
  std::vector<uint32_t> block_col;
  std::vector<uint32_t> shift;
  int max_layer_weight = 0;
};

// The layers of base [mb][nb] (-1: zero block, s in 0..z-1: identity shifted right
// by s) after checking that `rows` (H in CSR) is its expansion, row for row;
// throws std::invalid_argument saying what differs.
QcLayers MakeQcLayers(const CheckRows& rows, const int64_t* base, int mb, int nb, int z);

// Whether the intra-frame decoder runs `config` ("nms"/"oms", layered; float32,
// int16 or int8).
bool IntraFrameSupports(const BinaryConfig& config);

// Padded z and the floats between block columns (lib/cpu_intra_decoder.cpp) for
// `lanes` lanes; both grow with `lanes` (a power of 2), so the workspace is sized
// for the most.
constexpr size_t kIntraMaxLanes = 64;        // AVX-512 int8
constexpr size_t kIntraMaxVectorBytes = 64;  // AVX-512
inline size_t IntraPaddedZ(size_t z, size_t lanes) { return (z + lanes - 1) / lanes * lanes; }
inline size_t IntraColumnStride(size_t z, size_t lanes) { return lanes + z + 2 * lanes; }

// Which copies of a block column's posteriors a vector store at offset o (rows t..t+N-1,
// o = (shift + t) mod z) must also write (lib/cpu_intra_decoder.cpp, the layout):
// o + 1 < N: it touched the head, whose copy lies z further; o + N > z: it ran into the
// copy, whose head lies z before.
enum IntraWrap : uint8_t { kIntraWrapHead = 1, kIntraWrapCopy = 2 };

// Per-thread scratch for one frame, for `lanes` SIMD lanes (BinaryLanes(precision)).
struct IntraWorkspace {
  IntraWorkspace(const QcLayers& layers, size_t lanes);
  hwy::AlignedFreeUniquePtr<uint8_t[]> posterior;  // [nb][column stride]: L_j and its head, padded
  hwy::AlignedFreeUniquePtr<uint8_t[]> messages;   // [blocks][z rounded up to the lanes]: R
  hwy::AlignedFreeUniquePtr<uint8_t[]> extrinsic;  // [max_layer_weight][lanes]: a row group's Q
  std::vector<float> clean;                      // [z]: a block column's LLRs after the bad-LLR rule
  size_t lanes;
  // Per block and row group g (layer i's edge e at layer_ptr[i] * groups + g * dc + e):
  // where rows g*N.. read the edge's block column j, the offset of
  // its (shift + g*N) mod z in `posterior`, and the copies a store there also writes.
  std::vector<uint32_t> offsets;
  std::vector<uint8_t> wraps;                    // IntraWrap bits
};

// Decodes one frame llr[n] (float32, n = nb*z) into bits[n], *iterations, *valid,
// *bad_llr and (soft != nullptr) soft[n], as DecodeBinaryChunk does for one frame;
// `config` must satisfy IntraFrameSupports.
void DecodeBinaryFrame(const QcLayers& layers, const BinaryConfig& config, const float* llr,
                       uint8_t* bits, int32_t* iterations, uint8_t* valid, uint8_t* bad_llr,
                       float* soft, IntraWorkspace& ws);

}  // namespace cpu
}  // namespace gpuldpc
