// pybind11 front of the CPU decoders: gpuldpc._core.BinaryDecoder and
// gpuldpc._core.NonBinaryDecoder.  A decoder object owns its thread pool and
// one workspace per worker; decode() releases the GIL while the pool works
// (chunks of SIMD-interleaved frames are the pool's tasks).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuldpc/cpu_bad_llr.hpp"
#include "gpuldpc/cpu_binary_decoder.hpp"
#include "gpuldpc/cpu_intra_decoder.hpp"
#include "gpuldpc/cpu_nb_decoder.hpp"
#include "gpuldpc/cpu_thread_pool.hpp"
#include "gpuldpc/python_module.hpp"

namespace py = pybind11;

namespace gpuldpc {
namespace cpu {
namespace {

template <typename E>
E ParseChoice(const std::string& name, const std::string& value,
              std::initializer_list<std::pair<const char*, E>> choices) {
  std::string names;
  for (const auto& [text, e] : choices) {
    if (value == text) return e;
    names += std::string(names.empty() ? "" : ", ") + "'" + text + "'";
  }
  throw py::value_error(name + "='" + value + "' is not one of " + names);
}

Precision ParsePrecision(const std::string& precision) {
  return ParseChoice<Precision>("precision", precision,
                                {{"float32", Precision::kFloat32}, {"int16", Precision::kInt16}, {"int8", Precision::kInt8}});
}

// H's structure as CheckRows, from CSR indptr [m+1] / indices [edges].
CheckRows MakeCheckRows(int n, py::array_t<int64_t, py::array::c_style | py::array::forcecast> indptr,
                        py::array_t<int64_t, py::array::c_style | py::array::forcecast> indices) {
  if (n < 1) throw py::value_error("n must be >= 1, got " + std::to_string(n));
  if (indptr.ndim() != 1 || indptr.shape(0) < 2 || indices.ndim() != 1) {
    throw py::value_error("indptr and indices must be the 1-D CSR arrays of H (H.indptr, H.indices)");
  }
  CheckRows rows;
  rows.n = n;
  rows.m = static_cast<int>(indptr.shape(0) - 1);
  const int64_t* p = indptr.data();
  const int64_t* c = indices.data();
  if (p[0] != 0 || p[rows.m] != indices.shape(0)) {
    throw py::value_error("indptr must start at 0 and end at len(indices)");
  }
  rows.row_ptr.resize(rows.m + 1);
  rows.col.resize(indices.shape(0));
  for (int r = 0; r <= rows.m; ++r) {
    if (r > 0 && p[r] < p[r - 1]) throw py::value_error("indptr must be non-decreasing");
    rows.row_ptr[r] = static_cast<uint32_t>(p[r]);
    if (r > 0) {
      const int weight = static_cast<int>(p[r] - p[r - 1]);
      if (weight == 1) {
        throw py::value_error("check row " + std::to_string(r - 1) +
                              " has a single nonzero; degree-1 checks are not supported");
      }
      rows.max_row_weight = std::max(rows.max_row_weight, weight);
    }
  }
  for (py::ssize_t e = 0; e < indices.shape(0); ++e) {
    if (c[e] < 0 || c[e] >= n) {
      throw py::value_error("indices must lie in 0..n-1 (n=" + std::to_string(n) + ")");
    }
    rows.col[e] = static_cast<uint32_t>(c[e]);
  }
  return rows;
}

// Checks a float32 LLR array [batch, tail...] and returns the batch size.
py::ssize_t CheckLlr(const py::array& llr, std::initializer_list<py::ssize_t> tail) {
  if (!py::isinstance<py::array_t<float>>(llr) || !(llr.flags() & py::array::c_style)) {
    throw py::type_error("llr must be a C-contiguous float32 numpy array (np.ascontiguousarray(llr, "
                         "dtype=np.float32)), got dtype " + std::string(py::str(llr.dtype())));
  }
  bool ok = llr.ndim() == static_cast<py::ssize_t>(tail.size()) + 1;
  size_t i = 1;
  for (auto t : tail) ok = ok && llr.shape(i++) == t;
  if (!ok) {
    std::string want = "[batch";
    for (auto t : tail) want += ", " + std::to_string(t);
    want += "]";
    std::string got = "(";
    for (py::ssize_t k = 0; k < llr.ndim(); ++k) got += (k ? ", " : "") + std::to_string(llr.shape(k));
    throw py::value_error("llr must have shape " + want + ", got " + got + ")");
  }
  return llr.shape(0);
}

using IndexArray = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

// The hard decisions' array [batch, n]: a new one, or `out` (the caller's, written in
// place) after checking that it is a writeable C-contiguous uint8 array of that shape.
py::array_t<uint8_t> BitsArray(const py::object& out, py::ssize_t batch, py::ssize_t n) {
  if (out.is_none()) return py::array_t<uint8_t>({batch, n});
  const std::string want = "(" + std::to_string(batch) + ", " + std::to_string(n) + ")";
  if (!py::isinstance<py::array>(out)) {
    throw py::value_error("out must be a C-contiguous uint8 array of shape " + want + ", got " +
                          std::string(py::str(py::type::of(out).attr("__name__"))));
  }
  const auto a = py::reinterpret_borrow<py::array>(out);
  if (!py::isinstance<py::array_t<uint8_t>>(a) || !(a.flags() & py::array::c_style) || a.ndim() != 2 ||
      a.shape(0) != batch || a.shape(1) != n || !a.writeable()) {
    std::string got = "(";
    for (py::ssize_t k = 0; k < a.ndim(); ++k) got += (k ? ", " : "") + std::to_string(a.shape(k));
    throw py::value_error("out must be a C-contiguous uint8 array of shape " + want + ", got " +
                          std::string(py::str(a.dtype())) + " " + got + (a.ndim() == 1 ? ",)" : ")") +
                          (a.writeable() ? "" : " (read-only)"));
  }
  return py::reinterpret_borrow<py::array_t<uint8_t>>(out);
}

// Decodes llr [batch, ...] chunk by chunk on the pool with the GIL released, the
// decisions into `out` (None: a new array; BitsArray);
// decode_chunk(in, frames, symbols, iterations, valid, bad_llr, soft, worker) does one chunk
// (soft: nullptr, or the chunk's rows of a float32 array shaped like llr, with `soft`).
// Non-finite LLRs are handled where each chunk loads them (cpu_bad_llr.hpp): no pass
// here, and bad_llr flags the frames that held any.
template <typename ChunkFn>
py::tuple DecodeBatch(ThreadPool& pool, size_t lanes, const py::array& llr, size_t frame_llrs,
                      size_t n, bool soft, const py::object& bits_out, ChunkFn decode_chunk) {
  const py::ssize_t batch = llr.shape(0);
  py::object soft_out = py::none();
  float* post = nullptr;
  if (soft) {
    std::vector<py::ssize_t> shape(llr.shape(), llr.shape() + llr.ndim());
    py::array_t<float> a(shape);
    post = a.mutable_data();
    soft_out = std::move(a);
  }
  py::array_t<uint8_t> out = BitsArray(bits_out, batch, static_cast<py::ssize_t>(n));
  py::array_t<int32_t> iterations(batch);
  py::array_t<bool> valid(batch);
  py::array_t<bool> bad_llr(batch);
  const float* in = static_cast<const float*>(llr.data());
  uint8_t* sym = out.mutable_data();
  int32_t* it = iterations.mutable_data();
  uint8_t* ok = reinterpret_cast<uint8_t*>(valid.mutable_data());
  uint8_t* bad = reinterpret_cast<uint8_t*>(bad_llr.mutable_data());
  const size_t frames = static_cast<size_t>(batch);
  const size_t chunks = (frames + lanes - 1) / lanes;
  {
    py::gil_scoped_release release;
    pool.Run(chunks, [&](size_t chunk, int worker) {
      const size_t f0 = chunk * lanes, count = std::min(lanes, frames - f0);
      decode_chunk(in + f0 * frame_llrs, count, sym + f0 * n, it + f0, ok + f0, bad + f0,
                   post == nullptr ? nullptr : post + f0 * frame_llrs, worker);
    });
  }
  return py::make_tuple(out, iterations, valid, bad_llr, soft_out);
}

class BinaryDecoder {
 public:
  BinaryDecoder(int n, IndexArray indptr, IndexArray indices,
                const std::string& algorithm, const std::string& schedule,
                const std::string& precision, int max_iterations, bool early_stop, float alpha,
                float beta, float llr_scale, int threads, float llr_sign,
                const std::optional<IndexArray>& base, int z, int intra_frames)
      : rows_(MakeCheckRows(n, indptr, indices)),
        pool_(threads > 0 ? threads : DefaultThreads()) {
    config_.rule = ParseChoice<BinaryRule>(
        "algorithm", algorithm,
        {{"nms", BinaryRule::kNms}, {"oms", BinaryRule::kOms}, {"spa", BinaryRule::kSpa}});
    config_.schedule = ParseChoice<Schedule>(
        "schedule", schedule, {{"layered", Schedule::kLayered}, {"flooding", Schedule::kFlooding}});
    config_.precision = ParsePrecision(precision);
    if (config_.rule == BinaryRule::kSpa && config_.precision != Precision::kFloat32) {
      throw py::value_error("algorithm='spa' runs in float32 only (precision='" + precision +
                            "' is for 'nms' and 'oms')");
    }
    if (max_iterations < 1) throw py::value_error("max_iterations must be >= 1");
    if (!(alpha > 0.0f && alpha <= 1.0f)) throw py::value_error("alpha must lie in (0, 1]");
    if (!(beta >= 0.0f)) throw py::value_error("beta must be >= 0");
    if (!(llr_scale > 0.0f) || !std::isfinite(llr_scale)) {
      throw py::value_error("llr_scale must be a positive finite number");
    }
    config_.max_iterations = max_iterations;
    config_.early_stop = early_stop;
    config_.alpha = alpha;
    config_.beta = beta;
    config_.llr_scale = llr_scale;
    if (llr_sign != 1.0f && llr_sign != -1.0f) throw py::value_error("llr_sign must be 1 or -1");
    config_.llr_sign = llr_sign;
    lanes_ = BinaryLanes(config_.precision);
    for (int w = 0; w < pool_.threads(); ++w) {
      workspaces_.push_back(std::make_unique<BinaryWorkspace>(rows_));
    }
    if (intra_frames < 0) throw py::value_error("intra_frames must be >= 0");
    if (intra_frames > 0) SetUpIntraFrame(base, z, intra_frames);
  }

  py::tuple Decode(const py::array& llr, bool soft, const py::object& out) {
    const size_t batch = static_cast<size_t>(CheckLlr(llr, {rows_.n}));
    const size_t n = static_cast<size_t>(rows_.n);
    if (batch <= static_cast<size_t>(intra_frames_)) {
      // Frames one by one, the rows of a layer in the lanes.  Waking a worker costs about
      // one to three frames' decoding (20-40 us measured on a 2-core VM), so the batch is
      // spread over the pool (one frame per task) only when every worker gets two frames.
      const size_t frames_per_task =
          batch < 2 * static_cast<size_t>(pool_.threads()) ? std::max<size_t>(batch, 1) : 1;
      return DecodeBatch(pool_, frames_per_task, llr, n, n, soft, out,
                         [&](const float* in, size_t frames, uint8_t* bits, int32_t* it, uint8_t* ok,
                             uint8_t* bad, float* post, int worker) {
                           for (size_t f = 0; f < frames; ++f) {
                             DecodeBinaryFrame(layers_, config_, in + f * n, bits + f * n, it + f, ok + f,
                                               bad + f, post == nullptr ? nullptr : post + f * n,
                                               *intra_workspaces_[worker]);
                           }
                         });
    }
    return DecodeBatch(pool_, lanes_, llr, n, n, soft, out,
                       [&](const float* in, size_t frames, uint8_t* bits, int32_t* it,
                           uint8_t* ok, uint8_t* bad, float* post, int worker) {
                         DecodeBinaryChunk(rows_, config_, in, frames, bits, it, ok, bad, post,
                                           *workspaces_[worker]);
                       });
  }

  size_t lanes() const { return lanes_; }
  int threads() const { return pool_.threads(); }
  int intra_frames() const { return intra_frames_; }

 private:
  // The intra-frame path (cpu_intra_decoder.hpp) for batches of <= intra_frames frames.
  void SetUpIntraFrame(const std::optional<IndexArray>& base, int z, int intra_frames) {
    if (!base || base->ndim() != 2) {
      throw py::value_error("intra_frames > 0 needs the code's QC base matrix (base int [mb, nb]) and z");
    }
    if (!IntraFrameSupports(config_)) {
      throw py::value_error("the intra-frame path runs 'nms' and 'oms', layered; "
                            "pass intra_frames=0 for this configuration");
    }
    try {
      layers_ = MakeQcLayers(rows_, base->data(), static_cast<int>(base->shape(0)),
                             static_cast<int>(base->shape(1)), z);
    } catch (const std::invalid_argument& e) {
      throw py::value_error(std::string("intra_frames > 0: ") + e.what());
    }
    for (int w = 0; w < pool_.threads(); ++w) {
      intra_workspaces_.push_back(std::make_unique<IntraWorkspace>(layers_, lanes_));
    }
    intra_frames_ = intra_frames;
  }

  CheckRows rows_;
  BinaryConfig config_;
  ThreadPool pool_;
  size_t lanes_ = 0;
  std::vector<std::unique_ptr<BinaryWorkspace>> workspaces_;
  QcLayers layers_;
  int intra_frames_ = 0;
  std::vector<std::unique_ptr<IntraWorkspace>> intra_workspaces_;
};

// GF(q) tables per edge: [edges, q] element integers in 0..q-1.
std::vector<uint16_t> EdgeTable(const char* name, const IndexArray& table, size_t edges, int q) {
  if (table.ndim() != 2 || static_cast<size_t>(table.shape(0)) != edges || table.shape(1) != q) {
    throw py::value_error(std::string(name) + " must have shape [edges, q] = [" +
                          std::to_string(edges) + ", " + std::to_string(q) + "]");
  }
  std::vector<uint16_t> out(edges * q);
  const int64_t* p = table.data();
  for (size_t i = 0; i < out.size(); ++i) {
    if (p[i] < 0 || p[i] >= q) throw py::value_error(std::string(name) + " entries must lie in 0..q-1");
    out[i] = static_cast<uint16_t>(p[i]);
  }
  return out;
}

class NonBinaryDecoder {
 public:
  NonBinaryDecoder(int n, int q, IndexArray indptr, IndexArray indices, IndexArray div,
                   IndexArray mul, const std::string& schedule, int max_iterations,
                   bool early_stop, int threads, const std::string& algorithm, float alpha)
      : pool_(threads > 0 ? threads : DefaultThreads()) {
    if (q < 2 || q > 256 || (q & (q - 1)) != 0) {
      throw py::value_error("q must be a power of 2 in 2..256, got " + std::to_string(q));
    }
    code_.rows = MakeCheckRows(n, indptr, indices);
    code_.q = q;
    code_.div = EdgeTable("div", div, code_.rows.col.size(), q);
    code_.mul = EdgeTable("mul", mul, code_.rows.col.size(), q);
    config_.schedule = ParseChoice<Schedule>(
        "schedule", schedule, {{"layered", Schedule::kLayered}, {"flooding", Schedule::kFlooding}});
    config_.rule = ParseChoice<CheckRule>(
        "algorithm", algorithm,
        {{"minmax", CheckRule::kMinMax},
         {"mmma", CheckRule::kMinMax},
         {"tmm", CheckRule::kTrellis},
         {"tmm1", CheckRule::kTrellisFirstMinimaPairs}});
    if (!(alpha > 0.0f && alpha <= 1.0f)) throw py::value_error("alpha must lie in (0, 1]");
    config_.alpha = alpha;
    if (max_iterations < 1) throw py::value_error("max_iterations must be >= 1");
    config_.max_iterations = max_iterations;
    config_.early_stop = early_stop;
    lanes_ = NbLanes();
    for (int w = 0; w < pool_.threads(); ++w) workspaces_.push_back(std::make_unique<NbWorkspace>(code_));
  }

  py::tuple Decode(const py::array& llr, bool soft, const py::object& out) {
    CheckLlr(llr, {code_.rows.n, code_.q});
    const size_t n = static_cast<size_t>(code_.rows.n);
    return DecodeBatch(pool_, lanes_, llr, n * code_.q, n, soft, out,
                       [&](const float* in, size_t frames, uint8_t* sym, int32_t* it,
                           uint8_t* ok, uint8_t* bad, float* post, int worker) {
                         DecodeNbChunk(code_, config_, in, frames, sym, it, ok, bad, post,
                                       *workspaces_[worker]);
                       });
  }

  size_t lanes() const { return lanes_; }
  int threads() const { return pool_.threads(); }

 private:
  NbCheckRows code_;
  NbConfig config_;
  ThreadPool pool_;
  size_t lanes_ = 0;
  std::vector<std::unique_ptr<NbWorkspace>> workspaces_;
};

}  // namespace
}  // namespace cpu

void register_cpu_decoders(py::module_& m) {
  using cpu::BinaryDecoder;
  using cpu::IndexArray;
  using cpu::NonBinaryDecoder;
  m.def("simd_target", &cpu::SimdTargetName,
        "Instruction set the CPU decoders dispatched to on this machine (e.g. 'AVX3', 'AVX2').");
  m.def(
      "binary_lanes",
      [](const std::string& precision) {
        return cpu::BinaryLanes(cpu::ParsePrecision(precision));
      },
      py::arg("precision"), "Frames in one SIMD chunk of BinaryDecoder for precision on this machine.");
  m.attr("llr_saturation") = cpu::kLlrSaturation;  // |LLR| of +-inf: gpuldpc.bad_llr.LLR_SATURATION
  py::class_<BinaryDecoder>(m, "BinaryDecoder", R"doc(
Binary LDPC decoder (inter-frame SIMD, thread pool), see docs/cpu.md.

BinaryDecoder(n, indptr, indices, algorithm, schedule, precision, max_iterations,
              early_stop, alpha, beta, llr_scale, threads, llr_sign=1, base=None, z=0,
              intra_frames=0)
  n, indptr, indices: H's CSR structure (H.indptr, H.indices), check rows in order.
  algorithm: 'nms' | 'oms' | 'spa'; schedule: 'layered' | 'flooding';
  precision: 'float32' | 'int16' | 'int8' (min-sum only for the integers);
  llr_scale: fixed point LLR unit (integer = round(L * llr_scale), saturated);
  threads: worker threads, 0 = every core.
  llr_sign: 1, or -1 for input whose positive LLR means bit 1 (GNU Radio's sign),
  negated in the load (gl.Decoder(positive_llr_bit=1)).
  base, z, intra_frames: batches of at most intra_frames frames are decoded one frame
  at a time with the rows of a layer in the SIMD lanes (intra-frame path, 'nms'/'oms'
  layered; H must be the expansion of base [mb, nb] with lifting z;
  ValueError otherwise); 0 = always inter-frame.  Same numbers either way.
decode(llr float32 [batch, n], positive = bit 0, soft=False, out=None) -> (bits uint8 [batch, n]
  (`out` itself when given: a writeable C-contiguous uint8 array [batch, n], else ValueError),
  iterations int32 [batch], valid bool [batch], bad_llr bool [batch], posteriors float32
  [batch, n] with soft=True, else None: each frame's at its stop, in the input's sign,
  fixed point de-scaled by llr_scale); NaN LLRs are
  decoded as 0, +-inf as +-llr_saturation, and bad_llr flags those frames (the rule of
  gpuldpc.bad_llr); the GIL is released while decoding.
)doc")
      .def(py::init<int, IndexArray, IndexArray, const std::string&, const std::string&, const std::string&, int, bool, float,
                    float, float, int, float, const std::optional<IndexArray>&, int, int>(),
           py::arg("n"), py::arg("indptr"), py::arg("indices"), py::arg("algorithm"),
           py::arg("schedule"), py::arg("precision"), py::arg("max_iterations"),
           py::arg("early_stop"), py::arg("alpha"), py::arg("beta"), py::arg("llr_scale"),
           py::arg("threads"), py::arg("llr_sign") = 1.0f, py::arg("base") = py::none(),
           py::arg("z") = 0, py::arg("intra_frames") = 0)
      .def("decode", &BinaryDecoder::Decode, py::arg("llr"), py::arg("soft") = false, py::arg("out") = py::none())
      .def_property_readonly("lanes", &BinaryDecoder::lanes,
                             "Frames decoded together in one SIMD chunk")
      .def_property_readonly("threads", &BinaryDecoder::threads)
      .def_property_readonly("intra_frames", &BinaryDecoder::intra_frames,
                             "Batches of at most this many frames take the intra-frame path (0: none)");

  py::class_<NonBinaryDecoder>(m, "NonBinaryDecoder", R"doc(
GF(q) Min-Max decoder (forward-backward, modified Min-Max merger, or trellis Min-Max), see docs/cpu.md.

NonBinaryDecoder(n, q, indptr, indices, div, mul, schedule, max_iterations, early_stop, threads,
                 algorithm='minmax', alpha=1.0)
  n, q, indptr, indices: H's CSR structure; div, mul: int [edges, q] with
  div[e, a] = a / h_e and mul[e, a] = h_e * a over GF(q) (h_e = H.data[e]).
  schedule: 'layered' | 'flooding'; threads: worker threads, 0 = every core.
  algorithm: 'minmax' | 'mmma' (the same numbers) | 'tmm' (trellis Min-Max, check
  messages scaled by alpha in (0, 1]; gpuldpc/decoders/reference_tmm.py) | 'tmm1'
  (T-MM with step 5's pairs from first minima, the same scale; reference_tmm.py).
decode(llr float32 [batch, n, q], Min-Max costs, 0 = most likely, soft=False, out=None) -> (symbols
  uint8 [batch, n] (`out` itself when given, as BinaryDecoder), iterations int32 [batch], valid bool [batch], bad_llr bool [batch],
  posterior costs float32 [batch, n, q] at each frame's stop with soft=True, else None);
  NaN/+-inf costs loaded by the rule of gpuldpc.bad_llr (as BinaryDecoder); GIL released.
)doc")
      .def(py::init<int, int, IndexArray, IndexArray, IndexArray, IndexArray, const std::string&,
                    int, bool, int, const std::string&, float>(),
           py::arg("n"), py::arg("q"), py::arg("indptr"), py::arg("indices"), py::arg("div"),
           py::arg("mul"), py::arg("schedule"), py::arg("max_iterations"), py::arg("early_stop"),
           py::arg("threads"), py::arg("algorithm") = "minmax", py::arg("alpha") = 1.0f)
      .def("decode", &NonBinaryDecoder::Decode, py::arg("llr"), py::arg("soft") = false,
           py::arg("out") = py::none())
      .def_property_readonly("lanes", &NonBinaryDecoder::lanes,
                             "Frames decoded together in one SIMD chunk")
      .def_property_readonly("threads", &NonBinaryDecoder::threads);
}

}  // namespace gpuldpc
