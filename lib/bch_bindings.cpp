// Python binding of BchDecoder: gpuldpc._core.BchDecoder.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "gpuldpc/bch_decoder.hpp"
#include "gpuldpc/python_module.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace gpuldpc {

namespace {

void check_bits(const py::array& a, const char* name) {
    const auto dtype = a.dtype();
    if (!(dtype.kind() == 'b' || (dtype.kind() == 'u' && dtype.itemsize() == 1)))
        throw py::type_error(std::string(name) + " must be a uint8 (or bool) array of bits, got dtype " +
                             std::string(py::str(static_cast<const py::handle&>(dtype))) + ": pass " + name + ".astype(numpy.uint8)");
}

BchDecoder make_decoder(int m, std::uint32_t primitive, const py::array& generator, int n, int t) {
    check_bits(generator, "generator");
    if (generator.ndim() != 1 || generator.shape(0) < 2)
        throw py::value_error("generator must be 1-D [r + 1] (coefficients of x^0 .. x^r), got shape " +
                              shape_of(generator));
    const auto g = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>::ensure(generator);
    return BchDecoder(m, primitive, g.data(), static_cast<int>(g.shape(0)) - 1, n, t);
}

py::tuple decode(const BchDecoder& dec, const py::array& frames) {
    check_bits(frames, "frames");
    if (frames.ndim() != 2 || frames.shape(1) != dec.n())
        throw py::value_error("frames must have shape [batch, " + std::to_string(dec.n()) + "], got " +
                              shape_of(frames));
    const auto in = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>::ensure(frames);
    const py::ssize_t batch = in.shape(0);
    py::array_t<std::uint8_t> out({batch, static_cast<py::ssize_t>(dec.n())});
    py::array_t<std::int32_t> errors(batch);
    const std::uint8_t* src = in.data();
    std::uint8_t* dst = out.mutable_data();
    std::int32_t* err = errors.mutable_data();
    {
        py::gil_scoped_release release;
        dec.decode(src, dst, err, static_cast<std::size_t>(batch));
    }
    return py::make_tuple(out, errors);
}

}  // namespace

void register_bch(py::module_& m) {
    py::class_<BchDecoder>(m, "BchDecoder", R"doc(
Hard-decision decoder of a binary (shortened) BCH code: remainder mod g(x), syndromes,
Berlekamp-Massey, Chien search (include/gpuldpc/bch_decoder.hpp).

A frame's first bit is the highest power of c(x) (gr-dtv's dvb_bch_bb order); g(x) must
vanish at alpha^1 .. alpha^2t, alpha a root of ``primitive``.

Parameters
----------
m : int
    Field degree, GF(2^m), 2..16.
primitive : int
    The primitive polynomial, bit d = coefficient of x^d.
generator : uint8 array [r + 1]
    g(x), entry d = coefficient of x^d.
n : int
    Frame length (shortened code), r < n <= 2^m - 1.
t : int
    Errors corrected.

Raises ValueError naming the offending parameter.
)doc")
        .def(py::init(&make_decoder), "m"_a, "primitive"_a, "generator"_a, "n"_a, "t"_a)
        .def_property_readonly("n", &BchDecoder::n, "Frame length (bits).")
        .def_property_readonly("k", &BchDecoder::k, "Information length (bits).")
        .def_property_readonly("t", &BchDecoder::t, "Errors corrected.")
        .def_property_readonly("m", &BchDecoder::m, "Field degree.")
        .def("decode", &decode, "frames"_a, R"doc(
Decode ``frames`` uint8 [batch, n] (bits) -> (corrected uint8 [batch, n], errors int32 [batch]).

errors[f] is the number of bits corrected in frame f (0 .. t), or -1 when decoding
failed ("BCH ok" is errors >= 0); a failed frame is returned as received.  With at
most t errors the sent codeword comes back; with more, either -1 or another codeword.
Runs without the GIL.  Raises TypeError for a non-uint8/bool array and ValueError for
a wrong shape or an entry other than 0 or 1.
)doc")
        .def("__repr__", [](const BchDecoder& d) {
            return "BchDecoder(n=" + std::to_string(d.n()) + ", k=" + std::to_string(d.k()) +
                   ", t=" + std::to_string(d.t()) + ", m=" + std::to_string(d.m()) + ")";
        });
}

}  // namespace gpuldpc
