// Linear-time encoder of the 802.11n / 802.16e codes: the equations are in
// include/gpuldpc/dual_diagonal_encoder.hpp.
#include "gpuldpc/dual_diagonal_encoder.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace gpuldpc {

namespace {

std::string cell(int i, int j) { return "(" + std::to_string(i) + ", " + std::to_string(j) + ")"; }

// acc ^= P^s v, i.e. acc[r] ^= v[(r + s) mod z], as two contiguous runs.
inline void add_shifted(std::uint8_t* acc, const std::uint8_t* v, int s, int z) {
    const int head = z - s;
    for (int r = 0; r < head; ++r) acc[r] ^= v[r + s];
    for (int r = head; r < z; ++r) acc[r] ^= v[r - head];
}

}  // namespace

DualDiagonalEncoder::DualDiagonalEncoder(const std::int64_t* base, int mb, int nb, int z)
    : mb_(mb), nb_(nb), z_(z), p0_shift_(0), hb_shift_(static_cast<std::size_t>(mb), -1) {
    if (z < 1) throw std::invalid_argument("expansion factor z must be >= 1, got " + std::to_string(z));
    if (mb < 1 || nb <= mb)
        throw std::invalid_argument("base matrix must have more columns than rows (at least one information "
                                    "column), got " + std::to_string(mb) + " x " + std::to_string(nb));
    const int kb = nb - mb;
    auto h = [&](int i, int j) { return base[static_cast<std::size_t>(i) * nb + j]; };
    for (int i = 0; i < mb; ++i)
        for (int j = 0; j < nb; ++j)
            if (h(i, j) < -1 || h(i, j) >= z)
                throw std::invalid_argument("base matrix entry " + cell(i, j) + " = " + std::to_string(h(i, j)) +
                                            " is not -1 or a shift in 0.." + std::to_string(z - 1));

    // H_dd: column kb+t holds shift 0 in rows t-1 and t, nothing else.
    for (int t = 1; t < mb; ++t)
        for (int i = 0; i < mb; ++i) {
            const std::int64_t want = (i == t - 1 || i == t) ? 0 : -1;
            if (h(i, kb + t) != want)
                throw std::invalid_argument(
                    "base matrix is not dual-diagonal: entry " + cell(i, kb + t) + " is " +
                    std::to_string(h(i, kb + t)) + ", the staircase needs " + std::to_string(want) +
                    " (use the generator encoder for this code)");
        }

    // h_b: exactly one shift of odd multiplicity, so that sum_i lambda_i = P^x p_0.
    std::map<int, int> multiplicity;
    for (int i = 0; i < mb; ++i)
        if (h(i, kb) >= 0) {
            hb_shift_[i] = static_cast<int>(h(i, kb));
            ++multiplicity[hb_shift_[i]];
        }
    int odd = 0;
    for (const auto& [shift, count] : multiplicity)
        if (count % 2) {
            ++odd;
            p0_shift_ = shift;
        }
    if (odd != 1)
        throw std::invalid_argument("base column " + std::to_string(kb) + " (h_b) must have exactly one shift "
                                    "occurring an odd number of times, found " + std::to_string(odd) +
                                    ": the parity part is not invertible this way");

    for (int i = 0; i < mb; ++i)
        for (int j = 0; j < kb; ++j)
            if (h(i, j) >= 0) info_blocks_.push_back({i, j, static_cast<int>(h(i, j))});
}

void DualDiagonalEncoder::encode(const std::uint8_t* info, std::uint8_t* codeword, std::size_t batch) const {
    const std::size_t k = static_cast<std::size_t>(this->k()), n = static_cast<std::size_t>(this->n());
    const std::size_t z = static_cast<std::size_t>(z_);
    for (std::size_t f = 0; f < batch; ++f) {
        const std::uint8_t* s = info + f * k;
        const auto bad = std::find_if(s, s + k, [](std::uint8_t b) { return b > 1; });
        if (bad != s + k)
            throw std::invalid_argument("info entries must be bits (0 or 1): frame " + std::to_string(f) +
                                        ", position " + std::to_string(bad - s) + " holds " +
                                        std::to_string(*bad));
    }

    std::vector<std::uint8_t> lambda(static_cast<std::size_t>(mb_) * z), total(z);
    for (std::size_t f = 0; f < batch; ++f) {
        const std::uint8_t* s = info + f * k;
        std::uint8_t* c = codeword + f * n;
        std::copy(s, s + k, c);

        std::fill(lambda.begin(), lambda.end(), 0);
        for (const Block& b : info_blocks_)
            add_shifted(&lambda[b.row * z], s + b.col * z, b.shift, z_);

        std::fill(total.begin(), total.end(), 0);
        for (int i = 0; i < mb_; ++i)
            for (std::size_t r = 0; r < z; ++r) total[r] ^= lambda[i * z + r];

        std::uint8_t* p = c + k;  // parity block t at p + t*z
        std::fill(p, p + static_cast<std::size_t>(mb_) * z, 0);
        add_shifted(p, total.data(), (z_ - p0_shift_) % z_, z_);  // p_0 = P^{-x} sum lambda
        for (int i = 0; i + 1 < mb_; ++i) {
            std::uint8_t* next = p + (i + 1) * z;
            std::copy(&lambda[i * z], &lambda[i * z] + z, next);
            if (hb_shift_[i] >= 0) add_shifted(next, p, hb_shift_[i], z_);
            if (i >= 1)
                for (std::size_t r = 0; r < z; ++r) next[r] ^= p[i * z + r];
        }
    }
}

}  // namespace gpuldpc
