// Intra-frame layered min-sum for binary QC codes (the z rows of a layer in the
// SIMD lanes; Le Gal & Jego, SiPS 2017), compiled for SSE4, AVX2 and AVX-512 and
// dispatched at run time by Google Highway.  Design and contract:
// include/gpuldpc/cpu_intra_decoder.hpp; row arithmetic: cpu_min_sum-inl.h.
//
// Posterior layout, per block column j (N = lanes):
//   [N pad][L_j[0..z)][L_j[0..N-1): a copy of the head][pad]
// Rows t..t+N-1 of a layer read L_j from o = (s + t) mod z on, one unaligned load
// (past z it reads the head's copy).  A store writes at o, again at o + z when it
// touched the head (o < N - 1), and at o - z when it ran into the head's copy
// (o + N > z); the pads take what falls outside, so every store is a whole
// vector.  The last row group of a layer with z % N != 0 holds z - t rows: its
// other lanes compute on whatever they load and are masked off every store and
// the syndrome.
#include "gpuldpc/cpu_intra_decoder.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lib/cpu_intra_decoder.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "gpuldpc/cpu_bad_llr-inl.h"
#include "gpuldpc/cpu_min_sum-inl.h"

HWY_BEFORE_NAMESPACE();
namespace gpuldpc {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Posterior accessor of MinSumRow for one row group of a layer: edge e reads
// post + off[e] and a store writes there and at the copies wrap[e] names (z away;
// IntraWorkspace::offsets and wraps); `rows` masks the lanes that are rows of the code.
template <class D>
struct LayerPosteriors {
  hn::TFromD<D>* post;
  const uint32_t* off;
  const uint8_t* wrap;
  size_t z;
  hn::Mask<D> rows;
  bool full;  // every lane a row of the layer: plain stores (AVX2's masked stores are slow on AMD)

  HWY_INLINE hn::Vec<D> Load(D d, size_t e) const { return hn::LoadU(d, post + off[e]); }

  HWY_INLINE void Put(D d, hn::Vec<D> v, hn::TFromD<D>* p) const {
    if (full) {
      hn::StoreU(v, d, p);
    } else {
      hn::BlendedStore(v, rows, d, p);
    }
  }

  HWY_INLINE void Store(D d, size_t e, hn::Vec<D> v) const {
    hn::TFromD<D>* p = post + off[e];
    const uint8_t w = wrap[e];  // read before the stores, which may alias it
    Put(d, v, p);
    if (w & kIntraWrapHead) Put(d, v, p + z);
    if (w & kIntraWrapCopy) Put(d, v, p - z);
  }
};

// Whether the hard decisions (sign bits of L) satisfy every check, layer by layer.
template <class D>
bool Satisfied(D d, const QcLayers& q, const hn::TFromD<D>* HWY_RESTRICT post, const uint32_t* offsets) {
  const size_t N = hn::Lanes(d), z = static_cast<size_t>(q.z), groups = IntraPaddedZ(z, N) / N;
  const hn::RebindToSigned<D> di;
  for (int i = 0; i < q.mb; ++i) {
    const size_t e0 = q.layer_ptr[i], dc = q.layer_ptr[i + 1] - e0;
    for (size_t g = 0; g < groups; ++g) {
      const uint32_t* off = offsets + e0 * groups + g * dc;
      auto x = hn::Zero(di);
      for (size_t e = 0; e < dc; ++e) x = hn::Xor(x, hn::BitCast(di, hn::LoadU(d, post + off[e])));
      const auto odd = hn::And(hn::Lt(x, hn::Zero(di)), hn::FirstN(di, z - g * N));
      if (!hn::AllFalse(di, odd)) return false;
    }
  }
  return true;
}

// Row weights up to this run with Q in registers (MinSumRow's kDc): WiMAX and
// WiFi up to rate 3/4 (dc <= 15); the heavier rows of rate 5/6 go through q_buf.
constexpr size_t kIntraConstantRowWeight = 16;

template <typename T>
void DecodeFrameT(const QcLayers& q, const BinaryConfig& cfg, const float* llr, uint8_t* bits,
                  int32_t* iterations, uint8_t* valid, uint8_t* bad_llr, float* soft, IntraWorkspace& ws) {
  using D = hn::ScalableTag<T>;
  const D d;
  const size_t N = hn::Lanes(d), z = static_cast<size_t>(q.z), zp = IntraPaddedZ(z, N);
  const size_t stride = IntraColumnStride(z, N);
  T* post = reinterpret_cast<T*>(ws.posterior.get());
  T* msg = reinterpret_cast<T*>(ws.messages.get());
  T* q_buf = reinterpret_cast<T*>(ws.extrinsic.get());
  HWY_DASSERT(ws.lanes == N);
  const uint32_t* offsets = ws.offsets.data();

  *bad_llr = 0;
  for (int j = 0; j < q.nb; ++j) {
    const float* in = LoadableLlrs(llr + j * z, z, ws.clean.data(), bad_llr);
    T* p = post + j * stride + N;
    for (size_t c = 0; c < z; ++c) p[c] = ChannelMessage<T>(in[c], cfg.llr_scale, cfg.llr_sign);
    std::copy(p, p + std::min(z, N - 1), p + z);
  }
  const MagnitudeRule<D> rule(d, cfg);
  const size_t groups = zp / N;
  std::fill(msg, msg + q.block_col.size() * zp, T{0});

  *iterations = cfg.max_iterations;
  bool ok = false;
  for (int it = 1; it <= cfg.max_iterations; ++it) {
    for (int i = 0; i < q.mb; ++i) {
      const uint32_t e0 = q.layer_ptr[i];
      const size_t dc = q.layer_ptr[i + 1] - e0;
      for (size_t g = 0; g < groups; ++g) {
        const size_t k0 = e0 * groups + g * dc;
        const LayerPosteriors<D> rows{post, offsets + k0, ws.wraps.data() + k0, z, hn::FirstN(d, z - g * N),
                                      z - g * N >= N};
        WithRowWeight<kIntraConstantRowWeight>(dc, [&](auto k) HWY_INLINE_LAMBDA {
          MinSumRow<true, decltype(k)::value>(d, dc, rows, msg + e0 * zp + g * N, zp, q_buf, rule);
        });
      }
    }
    if (cfg.early_stop && Satisfied(d, q, post, offsets)) {
      *iterations = it;
      ok = true;
      break;
    }
  }
  *valid = ok || Satisfied(d, q, post, offsets) ? 1 : 0;
  for (int j = 0; j < q.nb; ++j) {
    const T* p = post + j * stride + N;
    for (size_t c = 0; c < z; ++c) bits[j * z + c] = p[c] < 0 ? 1 : 0;
    if (soft != nullptr) {
      for (size_t c = 0; c < z; ++c) soft[j * z + c] = SoftOutput(p[c], cfg);
    }
  }
}

void DecodeFrame(const QcLayers& q, const BinaryConfig& cfg, const float* llr, uint8_t* bits,
                 int32_t* iterations, uint8_t* valid, uint8_t* bad_llr, float* soft, IntraWorkspace& ws) {
  switch (cfg.precision) {
    case Precision::kFloat32:
      return DecodeFrameT<float>(q, cfg, llr, bits, iterations, valid, bad_llr, soft, ws);
    case Precision::kInt16:
      return DecodeFrameT<int16_t>(q, cfg, llr, bits, iterations, valid, bad_llr, soft, ws);
    case Precision::kInt8:
      return DecodeFrameT<int8_t>(q, cfg, llr, bits, iterations, valid, bad_llr, soft, ws);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace gpuldpc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gpuldpc {
namespace cpu {

HWY_EXPORT(DecodeFrame);

QcLayers MakeQcLayers(const CheckRows& rows, const int64_t* base, int mb, int nb, int z) {
  if (z < 1 || mb < 1 || nb < 1) throw std::invalid_argument("base must be non-empty and z >= 1");
  if (rows.m != mb * z || rows.n != nb * z) {
    throw std::invalid_argument("H is " + std::to_string(rows.m) + " x " + std::to_string(rows.n) +
                                ", not the base matrix's " + std::to_string(mb * z) + " x " +
                                std::to_string(nb * z));
  }
  QcLayers q;
  q.z = z;
  q.mb = mb;
  q.nb = nb;
  q.layer_ptr.push_back(0);
  std::vector<uint32_t> want, have;
  for (int i = 0; i < mb; ++i) {
    for (int j = 0; j < nb; ++j) {
      const int64_t s = base[i * nb + j];
      if (s < -1 || s >= z) throw std::invalid_argument("base entries must be -1 or a shift in 0..z-1");
      if (s < 0) continue;
      q.block_col.push_back(static_cast<uint32_t>(j));
      q.shift.push_back(static_cast<uint32_t>(s));
    }
    q.layer_ptr.push_back(static_cast<uint32_t>(q.block_col.size()));
    q.max_layer_weight = std::max(q.max_layer_weight, static_cast<int>(q.layer_ptr[i + 1] - q.layer_ptr[i]));
    for (int t = 0; t < z; ++t) {
      want.clear();
      for (uint32_t e = q.layer_ptr[i]; e < q.layer_ptr[i + 1]; ++e) {
        want.push_back(q.block_col[e] * z + (t + q.shift[e]) % z);
      }
      const int r = i * z + t;
      have.assign(rows.col.begin() + rows.row_ptr[r], rows.col.begin() + rows.row_ptr[r + 1]);
      std::sort(have.begin(), have.end());
      if (have != want) {
        throw std::invalid_argument("check row " + std::to_string(r) + " of H is not row " + std::to_string(t) +
                                    " of base row " + std::to_string(i) + " expanded");
      }
    }
  }
  return q;
}

bool IntraFrameSupports(const BinaryConfig& config) {
  return config.schedule == Schedule::kLayered && config.rule != BinaryRule::kSpa;
}

IntraWorkspace::IntraWorkspace(const QcLayers& layers, size_t lanes)
    : clean(static_cast<size_t>(layers.z)), lanes(lanes) {
  // Sized for the most lanes (int8 AVX-512) in the widest type (float32).
  const size_t z = static_cast<size_t>(layers.z);
  const size_t post_bytes = static_cast<size_t>(layers.nb) * IntraColumnStride(z, kIntraMaxLanes) * sizeof(float);
  const size_t msg_bytes = std::max<size_t>(layers.block_col.size(), 1) * IntraPaddedZ(z, kIntraMaxLanes) * sizeof(float);
  const size_t q_bytes = static_cast<size_t>(std::max(layers.max_layer_weight, 1)) * kIntraMaxVectorBytes;
  posterior = hwy::AllocateAligned<uint8_t>(post_bytes);
  messages = hwy::AllocateAligned<uint8_t>(msg_bytes);
  extrinsic = hwy::AllocateAligned<uint8_t>(q_bytes);
  if (!posterior || !messages || !extrinsic) throw std::bad_alloc();
  std::memset(posterior.get(), 0, post_bytes);  // the pads: finite
  std::memset(extrinsic.get(), 0, q_bytes);
  // Where each row group reads each block column, and the copies its stores also write.
  const size_t groups = IntraPaddedZ(z, lanes) / lanes, stride = IntraColumnStride(z, lanes);
  offsets.resize(layers.block_col.size() * groups);
  wraps.resize(offsets.size());
  for (int i = 0; i < layers.mb; ++i) {
    const size_t e0 = layers.layer_ptr[i], dc = layers.layer_ptr[i + 1] - e0;
    for (size_t g = 0; g < groups; ++g) {
      for (size_t e = 0; e < dc; ++e) {
        const size_t s = layers.shift[e0 + e] + g * lanes, o = s >= z ? s - z : s;  // (shift + t) mod z
        const size_t k = e0 * groups + g * dc + e;
        offsets[k] = static_cast<uint32_t>(layers.block_col[e0 + e] * stride + lanes + o);
        wraps[k] = static_cast<uint8_t>((o + 1 < lanes ? kIntraWrapHead : 0) | (o + lanes > z ? kIntraWrapCopy : 0));
      }
    }
  }
}

void DecodeBinaryFrame(const QcLayers& layers, const BinaryConfig& config, const float* llr,
                       uint8_t* bits, int32_t* iterations, uint8_t* valid, uint8_t* bad_llr,
                       float* soft, IntraWorkspace& ws) {
  HWY_DYNAMIC_DISPATCH(DecodeFrame)(layers, config, llr, bits, iterations, valid, bad_llr, soft, ws);
}

}  // namespace cpu
}  // namespace gpuldpc
#endif  // HWY_ONCE
