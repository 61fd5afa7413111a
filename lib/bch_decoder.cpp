// BCH decoder (remainder, syndromes, Berlekamp-Massey, Chien search): the steps and the
// conventions are in include/gpuldpc/bch_decoder.hpp.
#include "gpuldpc/bch_decoder.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

#include "gpuldpc/cpu_thread_pool.hpp"

namespace gpuldpc {

namespace {

using Word = std::uint64_t;

inline bool bit(const Word* v, int d) { return (v[d >> 6] >> (d & 63)) & 1; }
inline void flip(Word* v, int d) { v[d >> 6] ^= Word{1} << (d & 63); }

// v = (v << s) keeping bits 0 .. r-1 (s < 64).
inline void shift_left(Word* v, int words, int s, int r) {
    for (int w = words - 1; w > 0; --w) v[w] = (v[w] << s) | (v[w - 1] >> (64 - s));
    v[0] <<= s;
    if (r % 64) v[words - 1] &= (Word{1} << (r % 64)) - 1;
}

// Bits r-8 .. r-1 of v (r >= 8).
inline unsigned top_byte(const Word* v, int r) {
    const int lo = r - 8, w = lo >> 6, b = lo & 63;
    Word x = v[w] >> b;
    if (b > 56) x |= v[w + 1] << (64 - b);
    return static_cast<unsigned>(x & 0xFF);
}

}  // namespace

BchDecoder::BchDecoder(int m, std::uint32_t primitive, const std::uint8_t* generator, int r, int n, int t)
    : m_(m), order_((1 << m) - 1), n_(n), r_(r), t_(t), words_((r + 63) / 64) {
    if (m < 2 || m > 16) throw std::invalid_argument("field degree m must be 2..16, got " + std::to_string(m));
    if (primitive >> m != 1)
        throw std::invalid_argument("primitive polynomial must have degree m = " + std::to_string(m));
    if (t < 1) throw std::invalid_argument("t must be >= 1, got " + std::to_string(t));
    if (r < 8 || r < m) throw std::invalid_argument("generator degree r must be >= 8 and >= m, got " + std::to_string(r));
    if (n <= r || n > order_)
        throw std::invalid_argument("frame length n must satisfy r < n <= 2^m - 1 = " + std::to_string(order_) +
                                    ", got n = " + std::to_string(n) + ", r = " + std::to_string(r));
    if (generator[0] != 1 || generator[r] != 1)
        throw std::invalid_argument("generator polynomial must have 1 as its x^0 and x^r coefficients");

    exp_.assign(2 * static_cast<std::size_t>(order_), 0);
    log_.assign(static_cast<std::size_t>(order_) + 1, 0);
    std::uint32_t x = 1;
    for (int i = 0; i < order_; ++i) {
        if (i > 0 && x == 1)
            throw std::invalid_argument("polynomial " + std::to_string(primitive) + " is not primitive over GF(2^" +
                                        std::to_string(m) + ")");
        exp_[i] = exp_[i + order_] = x;
        log_[x] = static_cast<std::uint32_t>(i);
        x <<= 1;
        if (x >> m) x ^= primitive;
    }
    // g(alpha^j) = 0, j = 1 .. 2t: the code corrects t errors with these syndromes.
    for (int j = 1; j <= 2 * t; ++j) {
        std::uint32_t s = 0;
        for (int d = 0; d <= r; ++d)
            if (generator[d]) s ^= exp_[static_cast<std::size_t>(j) * d % order_];
        if (s != 0)
            throw std::invalid_argument("generator polynomial does not vanish at alpha^" + std::to_string(j) +
                                        ": it is not a t = " + std::to_string(t) + " BCH generator for this field");
    }

    gen_.assign(words_, 0);
    for (int d = 0; d < r; ++d)
        if (generator[d]) flip(gen_.data(), d);
    // x^(r+j) mod g, j = 0..7, then the table by linearity.
    std::vector<Word> pw(8 * static_cast<std::size_t>(words_), 0), cur(gen_);
    for (int j = 0; j < 8; ++j) {
        std::copy(cur.begin(), cur.end(), pw.begin() + static_cast<std::ptrdiff_t>(j) * words_);
        const bool carry = bit(cur.data(), r - 1);
        shift_left(cur.data(), words_, 1, r);
        if (carry)
            for (int w = 0; w < words_; ++w) cur[w] ^= gen_[w];
    }
    table_.assign(256 * static_cast<std::size_t>(words_), 0);
    for (int b = 0; b < 256; ++b)
        for (int j = 0; j < 8; ++j)
            if ((b >> j) & 1)
                for (int w = 0; w < words_; ++w) table_[b * words_ + w] ^= pw[j * words_ + w];
}

bool BchDecoder::remainder(const std::uint8_t* frame, Word* rho) const {
    std::fill(rho, rho + words_, Word{0});
    const int head = n_ % 8;
    for (int i = 0; i < head; ++i) {  // bit by bit until the rest is whole bytes
        const bool carry = bit(rho, r_ - 1);
        shift_left(rho, words_, 1, r_);
        rho[0] ^= frame[i];
        if (carry)
            for (int w = 0; w < words_; ++w) rho[w] ^= gen_[w];
    }
    for (int i = head; i < n_; i += 8) {
        unsigned byte = 0;
        for (int b = 0; b < 8; ++b) byte = (byte << 1) | frame[i + b];
        const Word* tb = &table_[static_cast<std::size_t>(top_byte(rho, r_)) * words_];
        shift_left(rho, words_, 8, r_);
        rho[0] ^= byte;
        for (int w = 0; w < words_; ++w) rho[w] ^= tb[w];
    }
    Word any = 0;
    for (int w = 0; w < words_; ++w) any |= rho[w];
    return any != 0;
}

int BchDecoder::locate(const Word* rho, int* pos) const {
    const int two_t = 2 * t_;
    std::vector<std::uint32_t> s(two_t + 1, 0);  // s[j] = S_j
    for (int j = 1; j <= two_t; j += 2)
        for (int d = 0; d < r_; ++d)
            if (bit(rho, d)) s[j] ^= exp_[static_cast<std::size_t>(j) * d % order_];
    for (int j = 2; j <= two_t; j += 2) s[j] = mul(s[j / 2], s[j / 2]);

    // Berlekamp-Massey (Massey 1969): c = Lambda, b = the last c before a length change.
    std::vector<std::uint32_t> c(two_t + 2, 0), b(two_t + 2, 0), tmp;
    c[0] = b[0] = 1;
    int len = 0, shift = 1;
    std::uint32_t last = 1;
    for (int q = 0; q < two_t; ++q) {
        std::uint32_t delta = s[q + 1];
        for (int i = 1; i <= len; ++i) delta ^= mul(c[i], s[q + 1 - i]);
        if (delta == 0) {
            ++shift;
            continue;
        }
        const std::uint32_t coef = exp_[log_[delta] + order_ - log_[last]];  // delta / last
        const bool grow = 2 * len <= q;
        if (grow) tmp = c;
        for (int i = 0; i + shift < two_t + 2; ++i)
            if (b[i]) c[i + shift] ^= mul(coef, b[i]);
        if (grow) {
            len = q + 1 - len;
            b = tmp;
            last = delta;
            shift = 1;
        } else {
            ++shift;
        }
    }
    if (len > t_) return -1;
    for (int i = len + 1; i < two_t + 2; ++i)
        if (c[i]) return -1;

    // Chien search over the n positions: e = n-1-i, Lambda(alpha^-e) = sum_k c_k alpha^(-k e).
    std::vector<int> lg(len + 1, -1);  // log c_k, -1 for c_k = 0
    for (int k = 1; k <= len; ++k)
        if (c[k]) lg[k] = static_cast<int>(log_[c[k]]);
    int found = 0;
    for (int e = 0; e < n_ && found < len; ++e) {
        std::uint32_t v = 1;
        for (int k = 1; k <= len; ++k)
            if (lg[k] >= 0) {
                v ^= exp_[lg[k]];
                lg[k] -= k;  // next e: times alpha^-k
                if (lg[k] < 0) lg[k] += order_;
            }
        if (v == 0) pos[found++] = n_ - 1 - e;
    }
    return found == len ? len : -1;
}

namespace {

// The BCH decoders' pool (header, "Threads"), made on first use and again in a forked child,
// which has the object but none of its threads (Run() would then do every task on the calling
// thread).  Never deleted: its workers wait on a condition until the process ends, and a static
// pool's destructor would join, in a child, threads that only its parent had.
cpu::ThreadPool& SharedPool() {
    static std::mutex mutex;
    static cpu::ThreadPool* pool = nullptr;
    static pid_t owner = 0;
    std::lock_guard<std::mutex> lock(mutex);
    if (pool == nullptr || owner != getpid()) {
        pool = new cpu::ThreadPool(cpu::DefaultThreads());
        owner = getpid();
    }
    return *pool;
}

// Runs task(i) for i < tasks: on the calling thread alone for one task, else on the shared pool.
template <class Task>
void RunTasks(std::size_t tasks, const Task& task) {
    if (tasks <= 1) {
        for (std::size_t i = 0; i < tasks; ++i) task(i);
        return;
    }
    SharedPool().Run(tasks, [&](std::size_t i, int) { task(i); });
}

}  // namespace

void BchDecoder::decode(const std::uint8_t* frames, std::uint8_t* corrected, std::int32_t* errors,
                        std::size_t batch) const {
    const std::size_t n = static_cast<std::size_t>(n_);
    // One pass: each task checks its frames' entries, then decodes them unless one is not 0 or 1;
    // the lowest such index over all tasks (SIZE_MAX: none) is thrown after the pass.
    std::atomic<std::size_t> bad{SIZE_MAX};
    RunTasks((batch + kFramesPerTask - 1) / kFramesPerTask, [&](std::size_t task) {
        const std::size_t a = task * kFramesPerTask, b = std::min(batch, a + kFramesPerTask);
        for (std::size_t i = a * n; i < b * n; ++i)
            if (frames[i] > 1) {
                std::size_t seen = bad.load();
                while (i < seen && !bad.compare_exchange_weak(seen, i)) {
                }
                return;
            }
        std::vector<Word> rho(words_);
        std::vector<int> pos(t_ + 1);
        for (std::size_t f = a; f < b; ++f) {
            const std::uint8_t* in = frames + f * n;
            std::uint8_t* out = corrected + f * n;
            std::memcpy(out, in, n);
            if (!remainder(in, rho.data())) {
                errors[f] = 0;
                continue;
            }
            const int count = locate(rho.data(), pos.data());
            errors[f] = count;
            for (int i = 0; i < count; ++i) out[pos[i]] ^= 1;
        }
    });
    if (const std::size_t i = bad.load(); i != SIZE_MAX)
        throw std::invalid_argument("frame " + std::to_string(i / n) + " bit " + std::to_string(i % n) + " is " +
                                    std::to_string(frames[i]) + ", not 0 or 1");
}

}  // namespace gpuldpc
