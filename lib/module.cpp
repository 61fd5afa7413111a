// gpuldpc._core: the compiled part of the core package (see
// include/gpuldpc/python_module.hpp for how features register themselves).
#include "gpuldpc/python_module.hpp"

PYBIND11_MODULE(_core, m) {
    m.doc() = "gpuldpc compiled core: CPU encoders and decoders (C++17, pybind11)";
    gpuldpc::register_encoder(m);
    gpuldpc::register_cpu_decoders(m);
}
