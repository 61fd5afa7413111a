// Linear-time systematic encoder of the IEEE 802.11n / 802.16e QC-LDPC codes.
//
// The standards' parity-check matrices H = [H_s | h_b | H_dd] (base matrix
// [mb, nb], kb = nb - mb information columns, expansion factor z) have
//   * h_b, base column kb: nonzero blocks among whose shifts exactly one, x,
//     occurs an odd number of times (both standards: equal shifts in the top
//     and bottom rows, which cancel in the sum below, and one more in between:
//     x = 0, except 802.16e rate 3/4B where x = 80 scaled to z);
//   * H_dd, base columns kb+1..nb-1: the dual diagonal, column kb+t holding
//     identity blocks (shift 0) in rows t-1 and t.
// With P^s the identity with its columns shifted right by s ((P^s v)[r] =
// v[(r + s) mod z], the convention of gpuldpc.codes.qc) and s_j the
// information blocks, the encoder computes (IEEE 802.11-2020 Annex F;
// Richardson-Urbanke for this dual-diagonal special case):
//   lambda_i = sum_{j < kb} P^{h(i,j)} s_j                       (i = 0..mb-1)
//   p_0      = P^{-x} sum_i lambda_i          (the rows summed: every H_dd block
//                                              cancels, h_b leaves P^x p_0)
//   p_1      = lambda_0 + P^{h(0,kb)} p_0
//   p_{i+1}  = lambda_i + P^{h(i,kb)} p_0 + p_i                  (i = 1..mb-2)
// where a term with h = -1 is absent.  The codeword is [s | p_0 | ... | p_{mb-1}]
// (information in the first k = kb z positions), O(edges) work per frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuldpc {

class DualDiagonalEncoder {
public:
    // base: row-major [mb, nb] shifts, -1 for a zero block, else 0..z-1.
    // Throws std::invalid_argument naming the offending entry when the matrix
    // is not of the dual-diagonal form above.
    DualDiagonalEncoder(const std::int64_t* base, int mb, int nb, int z);

    int n() const { return nb_ * z_; }
    int k() const { return (nb_ - mb_) * z_; }
    int z() const { return z_; }

    // info: [batch, k] bits (0/1), codeword: [batch, n], both row-major.
    // Throws std::invalid_argument (before writing) when an info entry is not 0 or 1.
    void encode(const std::uint8_t* info, std::uint8_t* codeword, std::size_t batch) const;

private:
    struct Block {
        int row;    // base row i
        int col;    // base column j (< kb)
        int shift;  // h(i, j)
    };

    int mb_, nb_, z_;
    int p0_shift_;                   // x: P^x p_0 = sum_i lambda_i
    std::vector<Block> info_blocks_;  // nonzero blocks of H_s, row by row
    std::vector<int> hb_shift_;       // h(i, kb) per row, -1 for none
};

}  // namespace gpuldpc
