// Hard-decision decoder of binary (shortened) BCH codes: the DVB-S2 outer codes
// (ETSI EN 302 307-1 5.3.1; t = 12, 10 or 8 over GF(2^16), t = 12 over GF(2^14)).
//
// Conventions (those of gpuldpc/codes/dvbs2_bch.py and gr-dtv's dvb_bch_bb): a frame is n
// bits c_0 .. c_{n-1}, one per byte, read as c(x) = sum_i c_i x^(n-1-i) (the first bit is
// the highest power); the code is the length-(2^m - 1) BCH code with generator g(x) of
// degree r, shortened to n bits; alpha is a root of the primitive polynomial p(x) of
// degree m, and g(alpha^j) = 0 for j = 1 .. 2t (checked by the constructor).
//
// Per frame (Lin & Costello, "Error Control Coding", 2nd ed., 6.2-6.4):
//   1. remainder rho(x) = c(x) mod g(x), eight bits a step (a table of x^r b(x) mod g(x)
//      for the 256 bytes b); rho = 0: a codeword, nothing to correct;
//   2. syndromes S_j = rho(alpha^j) = c(alpha^j), j odd; S_2j = S_j^2;
//   3. Berlekamp-Massey: the error locator Lambda(x) = prod_l (1 + X_l x), degree L;
//   4. Chien search: position i is in error when Lambda(alpha^-(n-1-i)) = 0, i < n.
// The frame decodes ("BCH ok") when L <= t and Lambda has exactly L distinct roots among
// the n positions; the bits are then flipped there.  Otherwise the frame is left as it was
// received and reported as failed.  Guarantee: with at most t errors the sent codeword is
// returned and reported ok; with more, the decoder reports a failure or returns another
// codeword (within t bits of the received frame, so never the sent one).
//
// Threads: one pool of cpu::DefaultThreads() workers for every BCH decoder of the process
// (SharedPool, made at the first batch of more than one task and again in a forked child; Run()
// calls take turns), so that the decoders of many MODCODs do not each keep a pool: a frame with
// t errors takes ~0.4 ms (the Chien search over n positions), and one thread held a DVB-S2
// receiver to 2-18 k frames/s while the GPU decodes ~100 k normal frames/s (docs/dvbs2.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuldpc {

class BchDecoder {
public:
    // m: field degree (2..16); primitive: p(x), bit d = coefficient of x^d (degree m);
    // generator: g(x)'s r + 1 coefficients, generator[d] = coefficient of x^d;
    // n: frame length (r < n <= 2^m - 1); t: errors corrected.
    // Throws std::invalid_argument with a sentence naming what is wrong.
    BchDecoder(int m, std::uint32_t primitive, const std::uint8_t* generator, int r, int n, int t);

    int n() const { return n_; }
    int k() const { return n_ - r_; }
    int t() const { return t_; }
    int m() const { return m_; }

    // frames: [batch, n] bits (0/1) -> corrected: [batch, n]; errors[f] = bits corrected
    // in frame f (0 .. t), or -1 when decoding failed (corrected[f] = frames[f]).
    // Throws std::invalid_argument when an entry is not 0 or 1, naming the first such entry
    // (corrected and errors are then partly written: the binding drops them).  Frames are
    // decoded in groups of kFramesPerTask by the process's shared thread pool (SharedPool), the
    // calling thread working too; the results do not depend on the number of threads.
    void decode(const std::uint8_t* frames, std::uint8_t* corrected, std::int32_t* errors,
                std::size_t batch) const;

    static constexpr std::size_t kFramesPerTask = 4;

private:
    // Frame f: the remainder into rho (words_ uint64, bit d = x^d); true when nonzero.
    bool remainder(const std::uint8_t* frame, std::uint64_t* rho) const;
    // Steps 2-4 for a nonzero remainder: error positions into pos, their count or -1.
    int locate(const std::uint64_t* rho, int* pos) const;

    std::uint32_t mul(std::uint32_t a, std::uint32_t b) const {
        return (a && b) ? exp_[log_[a] + log_[b]] : 0;
    }

    int m_, order_, n_, r_, t_, words_;
    std::vector<std::uint32_t> exp_;   // alpha^i, i = 0 .. 2 (2^m - 1) - 1
    std::vector<std::uint32_t> log_;   // log_alpha(a), a = 1 .. 2^m - 1
    std::vector<std::uint64_t> gen_;   // g(x) without x^r, words_ words
    std::vector<std::uint64_t> table_; // [256][words_]: x^r b(x) mod g(x)
};

}  // namespace gpuldpc
