// Python binding of DualDiagonalEncoder: gpuldpc._core.DualDiagonalEncoder.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "gpuldpc/dual_diagonal_encoder.hpp"
#include "gpuldpc/python_module.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace gpuldpc {

std::string shape_of(const py::array& a) {
    std::string s = "(";
    for (py::ssize_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
    return s + (a.ndim() == 1 ? ",)" : ")");
}

namespace {

DualDiagonalEncoder make_encoder(const py::array& base, int z) {
    const char kind = base.dtype().kind();
    if (kind != 'i' && kind != 'u')
        throw py::type_error("base must be an integer array of circulant shifts (-1 for a zero block), got dtype " +
                             std::string(py::str(base.dtype())));
    if (base.ndim() != 2) throw py::value_error("base must be 2-D [mb, nb], got shape " + shape_of(base));
    const auto b = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(base);
    return DualDiagonalEncoder(b.data(), static_cast<int>(b.shape(0)), static_cast<int>(b.shape(1)), z);
}

py::array_t<std::uint8_t> encode(const DualDiagonalEncoder& enc, const py::array& info) {
    const auto dtype = info.dtype();
    if (!(dtype.kind() == 'b' || (dtype.kind() == 'u' && dtype.itemsize() == 1)))
        throw py::type_error("info must be a uint8 (or bool) array of bits, got dtype " +
                             std::string(py::str(info.dtype())) + ": pass info.astype(numpy.uint8)");
    if (info.ndim() != 2 || info.shape(1) != enc.k())
        throw py::value_error("info must have shape [batch, " + std::to_string(enc.k()) + "], got " +
                              shape_of(info));
    const auto in = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>::ensure(info);
    const py::ssize_t batch = in.shape(0);
    py::array_t<std::uint8_t> out({batch, static_cast<py::ssize_t>(enc.n())});
    const std::uint8_t* src = in.data();
    std::uint8_t* dst = out.mutable_data();
    {
        py::gil_scoped_release release;
        enc.encode(src, dst, static_cast<std::size_t>(batch));
    }
    return out;
}

}  // namespace

void register_encoder(py::module_& m) {
    py::class_<DualDiagonalEncoder>(m, "DualDiagonalEncoder", R"doc(
Linear-time systematic encoder of the IEEE 802.11n / 802.16e QC-LDPC codes.

Parity from the dual-diagonal structure H = [H_s | h_b | H_dd] (IEEE 802.11-2020
Annex F): lambda_i = sum_j P^h(i,j) s_j, p_0 = P^-x sum_i lambda_i,
p_1 = lambda_0 + P^h(0,kb) p_0, p_(i+1) = lambda_i + P^h(i,kb) p_0 + p_i.
Equations and conventions: include/gpuldpc/dual_diagonal_encoder.hpp.

Parameters
----------
base : int array [mb, nb]
    Circulant shifts, -1 for a zero block; shift s puts row r's 1 in column
    (r + s) mod z (gpuldpc.codes convention, ``Code.base``).
z : int
    Expansion factor (``Code.z``).

Raises ValueError when the matrix is not of the standards' dual-diagonal form.
)doc")
        .def(py::init(&make_encoder), "base"_a, "z"_a)
        .def_property_readonly("n", &DualDiagonalEncoder::n, "Code length (bits).")
        .def_property_readonly("k", &DualDiagonalEncoder::k, "Information length (bits).")
        .def_property_readonly("z", &DualDiagonalEncoder::z, "Expansion factor.")
        .def("encode", &encode, "info"_a, R"doc(
Encode ``info`` uint8 [batch, k] (bits) into codewords uint8 [batch, n].

The first k positions of each codeword are the information.  Runs without
the GIL.  Raises TypeError for a non-uint8/bool array and ValueError for a
wrong shape or an entry other than 0 or 1.
)doc")
        .def("__repr__", [](const DualDiagonalEncoder& e) {
            return "DualDiagonalEncoder(n=" + std::to_string(e.n()) + ", k=" + std::to_string(e.k()) +
                   ", z=" + std::to_string(e.z()) + ")";
        });
}

}  // namespace gpuldpc
