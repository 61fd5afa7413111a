// gpuldpc._core: the compiled part of the core package (see
// include/gpuldpc/python_module.hpp for how features register themselves).
//
// `without` maps each feature group this build lacks to the reason, so that
// gpuldpc._native.core(group) can say why (CMakeLists.txt decides what is built).
#include "gpuldpc/python_module.hpp"

PYBIND11_MODULE(_core, m) {
    m.doc() = "gpuldpc compiled core: CPU encoders and decoders, BCH decoder, the latency preset's host side (C++17, pybind11)";
    pybind11::dict without;
    gpuldpc::register_encoder(m);
    gpuldpc::register_bch(m);
    gpuldpc::register_resident(m);
#if GPULDPC_WITH_CPU_DECODERS
    gpuldpc::register_cpu_decoders(m);
#else
    without["cpu_decoders"] = "Google Highway (libhwy-dev) was not found when _core was built";
#endif
    m.attr("without") = without;
}
