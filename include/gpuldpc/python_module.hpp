// The pybind11 module gpuldpc._core is assembled in lib/module.cpp from one
// register_* function per feature; each lives beside the code it binds.
// A new feature adds its declaration here and one line to lib/module.cpp.
#pragma once

#include <pybind11/pybind11.h>

namespace gpuldpc {

// lib/encoder_bindings.cpp: DualDiagonalEncoder (802.11n / 802.16e encoding).
void register_encoder(pybind11::module_& m);

// lib/cpu_decoder_bindings.cpp: BinaryDecoder, NonBinaryDecoder, simd_target (CPU backend).
void register_cpu_decoders(pybind11::module_& m);

}  // namespace gpuldpc
