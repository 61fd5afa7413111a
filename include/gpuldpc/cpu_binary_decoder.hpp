// Binary LDPC decoders for the CPU: layered and flooding min-sum (normalized,
// offset) in float32, int16 and int8, and sum-product in float32.
//
// Frames are interleaved across SIMD lanes (as AFF3CT's inter-frame decoders
// and gr-dvbs2rx): a chunk of `lanes` frames is decoded at once, the message
// of variable v for the chunk is one vector of `lanes` frames, so every check
// row becomes straight-line vector code with no shuffles.  The lane count
// comes from the instruction set picked at run time (Google Highway dynamic
// dispatch): 16/32/64 frames for float32/int16/int8 with AVX-512, half that
// with AVX2, a quarter with SSE4.
//
// Arithmetic (see python/gpuldpc/decoders/reference_binary.py, the contract):
//   layered:  for each check row in order, Q = L - R_old, R_new = rule(Q),
//             L = Q + R_new.  Processing the rows of a QC layer one by one is
//             the same computation as processing the layer at once (its rows
//             share no variable).
//   flooding: T = Lch + R_1 + R_2 + ... (increasing check row), Q = T - R.
//   nms: R = sign * (alpha * min_excl |Q|);  oms: R = sign * max(min_excl|Q| - beta, 0)
//   spa: R = sign * phi(sum_excl phi(|Q|)), phi(x) = -ln tanh(x/2) (float32 only)
// In float32 the min-sum arithmetic is the reference's, bit for bit.
//
// Non-finite channel LLRs: NaN -> 0, +-inf -> +-2^64 as they are loaded
// (cpu_bad_llr.hpp), the frame flagged; fixed point then clips as below.
//
// Fixed point: the channel LLRs are multiplied by `llr_scale`, rounded to the
// nearest integer and saturated to +-(2^(b-1) - 1) (b = 8 or 16; the
// symmetric range keeps |x| and -x exact).  Every addition and subtraction
// saturates to the same range.  alpha is applied as round(min * A / 2^(b-1))
// with A = round(alpha * 2^(b-1)); beta as round(beta * llr_scale).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hwy/aligned_allocator.h"

namespace gpuldpc {
namespace cpu {

enum class BinaryRule { kNms, kOms, kSpa };
enum class Schedule { kLayered, kFlooding };
enum class Precision { kFloat32, kInt16, kInt8 };

// Check rows of H in order (CSR without values): row r joins the variables
// col[row_ptr[r] .. row_ptr[r+1]).
struct CheckRows {
  int n = 0;
  int m = 0;
  std::vector<uint32_t> row_ptr;
  std::vector<uint32_t> col;
  int max_row_weight = 0;
};

struct BinaryConfig {
  BinaryRule rule = BinaryRule::kNms;
  Schedule schedule = Schedule::kLayered;
  Precision precision = Precision::kFloat32;
  int max_iterations = 10;
  bool early_stop = true;
  float alpha = 0.75f;
  float beta = 0.5f;
  float llr_scale = 1.0f;  // fixed point only
  float llr_sign = 1.0f;   // -1: input LLRs whose positive means bit 1 (GNU Radio), negated in the load
};

// Per-thread scratch, sized for one chunk of the widest vectors.
struct BinaryWorkspace {
  explicit BinaryWorkspace(const CheckRows& rows);
  hwy::AlignedFreeUniquePtr<uint8_t[]> posterior;  // [n][lanes]
  hwy::AlignedFreeUniquePtr<uint8_t[]> channel;    // [n][lanes] (flooding)
  hwy::AlignedFreeUniquePtr<uint8_t[]> messages;   // [edges][lanes]
  hwy::AlignedFreeUniquePtr<uint8_t[]> extrinsic;  // [max_row_weight][lanes]: a row's Q
  hwy::AlignedFreeUniquePtr<uint8_t[]> scratch;    // [2 max_row_weight][lanes]: phi(|Q|), suffix sums (spa)
};

// Frames per chunk for `precision` on this machine (the SIMD lane count).
size_t BinaryLanes(Precision precision);

// Name of the instruction set the dispatcher picked ("AVX3", "AVX2", ...).
const char* SimdTargetName();

// Decodes `frames` (1 <= frames <= BinaryLanes) frames of float32 LLRs
// llr[frames][n] into bits[frames][n] (0/1), iterations[frames],
// valid[frames] (1 = zero syndrome) and bad_llr[frames] (1 = the frame held
// NaN or +-inf, loaded by the rule of cpu_bad_llr.hpp and decoded).
// soft (nullptr: none) receives soft[frames][n], each frame's posteriors at its
// stop, in the input's sign: L * llr_sign (float32), float32(L) * llr_sign /
// llr_scale (fixed point, de-scaled; python/gpuldpc/soft.py).
void DecodeBinaryChunk(const CheckRows& rows, const BinaryConfig& config, const float* llr,
                       size_t frames, uint8_t* bits, int32_t* iterations, uint8_t* valid,
                       uint8_t* bad_llr, float* soft, BinaryWorkspace& ws);

}  // namespace cpu
}  // namespace gpuldpc
