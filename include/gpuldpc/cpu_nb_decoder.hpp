// Non-binary (GF(q), q = 2^m <= 256) LDPC decoder for the CPU: Min-Max with
// the forward-backward check update (paper 003, Algorithm 2), in the
// multiplied form whose merger needs no GF multiplication (paper 000 §2.3,
// the modified Min-Max "MMMA"), layered (paper 000 Algorithm 1, the block
// layers of a QC code row by row) or flooding (paper 003 Algorithm 1).
//
// Messages are float32 costs over the q field elements (smaller = more
// likely), frames interleaved across SIMD lanes as in the binary decoders.
// The arithmetic is python/gpuldpc/decoders/reference_nb.py's, bit for bit:
//   Qh_i(a) = Q_i(a / h_i);  F_0 = Qh_0,  F_i = F_{i-1} (*) Qh_i;
//   B_{d-1} = Qh_{d-1},  B_i = B_{i+1} (*) Qh_i;
//   M_0 = B_1,  M_{d-1} = F_{d-2},  M_i = F_{i-1} (*) B_{i+1};  R_i(a) = M_i(h_i a)
// with (x (*) y)(a) = min_{a' + a'' = a} max(x(a'), y(a'')) (min and max are
// exact, so any evaluation order gives the reference's numbers);
//   layered:  Q' = L - R_old, Q = Q' - min_a Q', L = Q + R_new;
//   flooding: T = Lch + R_1 + R_2 + ... (increasing check row), Q' = T - R.
// Decision: argmin_a of the posterior (smallest element on ties).
//
// CheckRule::kTrellis ("tmm") replaces the forward-backward update by the
// trellis Min-Max check node (Lacruz, Garcia-Herrero, Declercq, Valls, IEEE
// TVLSI 2015, §II-B and §III; steps in python/gpuldpc/decoders/reference_tmm.py):
//   z_i = argmin_x Qh_i(x), beta = sum_i z_i, dQ_i(eta) = Qh_i(eta + z_i);
//   m1(eta), p(eta), m2(eta), p2(eta): first and second minimum over i, their columns;
//   E(eta) = min(m1(eta), min_{eta'+eta''=eta, eta'<eta'', p(eta')!=p(eta'')}
//            max(m1(eta'), m1(eta''))) with its path {c1(eta), c2(eta)};
//   A_x(eta): the same with every row's best value off column x (m2 at p2 where p = x);
//   dR_i(eta) = i == c1 ? A_c1(eta) : i == c2 ? A_c2(eta) : E(eta), dR_i(0) = 0;
//   R_i(a) = alpha * dR_i(h_i a + beta + z_i).
// CheckRule::kTrellisFirstMinimaPairs ("tmm1", reference_tmm.py "Pairs from
// first minima") is T-MM with A_x's pairs from first minima: a pair's rows give
// m1 at p only and a row with p = x gives +inf (the pair is not allowed); the
// one deviation keeps m2 where p(eta) = x, so A_x is finite as in T-MM.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpuldpc/cpu_binary_decoder.hpp"
#include "hwy/aligned_allocator.h"

namespace gpuldpc {
namespace cpu {

// H over GF(q): the check rows plus, per edge e, the gathers in and out of
// the multiplied domain: div[e * q + a] = a / h_e and mul[e * q + a] = h_e a.
struct NbCheckRows {
  CheckRows rows;
  int q = 0;
  std::vector<uint16_t> div;
  std::vector<uint16_t> mul;
};

// The check-node rule: forward-backward Min-Max ("minmax", "mmma") or the
// trellis Min-Max ("tmm", output scale alpha; "tmm1": step 5's pairs from
// first minima, the same scale).
enum class CheckRule { kMinMax, kTrellis, kTrellisFirstMinimaPairs };

struct NbConfig {
  CheckRule rule = CheckRule::kMinMax;
  float alpha = 1.0f;  // kTrellis, kTrellisFirstMinimaPairs: R = alpha * dR
  Schedule schedule = Schedule::kLayered;
  int max_iterations = 10;
  bool early_stop = true;
};

struct NbWorkspace {
  explicit NbWorkspace(const NbCheckRows& code);
  hwy::AlignedFreeUniquePtr<float[]> posterior;  // [n][q][lanes]
  hwy::AlignedFreeUniquePtr<float[]> channel;    // [n][q][lanes] (flooding)
  hwy::AlignedFreeUniquePtr<float[]> messages;   // [edges][q][lanes]
  hwy::AlignedFreeUniquePtr<float[]> extrinsic;  // [max_row_weight][q][lanes]: a row's Q
  hwy::AlignedFreeUniquePtr<float[]> backward;   // [max_row_weight][q][lanes]: B_i
  hwy::AlignedFreeUniquePtr<float[]> work;       // [6][q][lanes]: Qh_i, F, F', M (trellis: Qh_i, m1, m2, E, A_c1, A_c2)
  hwy::AlignedFreeUniquePtr<int32_t[]> trellis;  // [max_row_weight + 4 q][lanes]: z_i; p, p2, c1, c2 (trellis; tmm1: p2 unused)
  std::vector<uint8_t> symbols;                  // [n][lanes]: decisions
};

// Frames per chunk (float32 lanes of the dispatched instruction set).
size_t NbLanes();

// Decodes `frames` (1 <= frames <= NbLanes()) frames of symbol LLRs
// llr[frames][n][q] (Min-Max costs) into symbols[frames][n],
// iterations[frames], valid[frames] and bad_llr[frames] (1 = the frame held
// NaN or +-inf, loaded by the rule of cpu_bad_llr.hpp and decoded); soft
// (nullptr: none) receives soft[frames][n][q], each frame's posterior costs at
// its stop as the decoder holds them (normalised by python/gpuldpc/soft.py).
void DecodeNbChunk(const NbCheckRows& code, const NbConfig& config, const float* llr,
                   size_t frames, uint8_t* symbols, int32_t* iterations, uint8_t* valid,
                   uint8_t* bad_llr, float* soft, NbWorkspace& ws);

}  // namespace cpu
}  // namespace gpuldpc
