// The pybind11 module gpuldpc._core is assembled in lib/module.cpp from one
// register_* function per feature; each lives beside the code it binds.
// A new feature adds its declaration here and one line to lib/module.cpp.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

namespace gpuldpc {

// "(2, 7)": an array's shape for error messages (lib/encoder_bindings.cpp).
std::string shape_of(const pybind11::array& a);

// lib/encoder_bindings.cpp: DualDiagonalEncoder (802.11n / 802.16e encoding).
void register_encoder(pybind11::module_& m);

// lib/cpu_decoder_bindings.cpp: BinaryDecoder, NonBinaryDecoder, simd_target (CPU backend).
void register_cpu_decoders(pybind11::module_& m);

// lib/bch_bindings.cpp: BchDecoder (hard-decision BCH decoding, DVB-S2's outer codes).
void register_bch(pybind11::module_& m);

// lib/resident_bindings.cpp: resident_request, mapped_results (the latency preset's host side).
void register_resident(pybind11::module_& m);

}  // namespace gpuldpc
