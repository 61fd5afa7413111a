// The host side of a call to a resident decoding kernel (python/gpuldpc/cuda/resident.py; the
// kernel side: kernels/resident.cuh), as two native functions, because in Python the statements of
// a one-codeword call took 7-11 us of its 25-30 (bench/results/h200-h100-latency-host-cpu.txt):
//   resident_request: copy the caller's rows into the page-locked staging buffer, post the request
//     (one aligned 64-bit store into the mapped request block), then spin on the acknowledgement
//     word with the GIL released, for at most max_ns;
//   mapped_results: the decisions, iteration counts and flags a latency kernel wrote into mapped
//     memory, as fresh NumPy arrays (bits, iterations, valid, bad_llr).
// Python keeps everything that needs the CUDA driver (launching the kernel when it is not running,
// errors, timeouts): resident_request returns instead of deciding.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "gpuldpc/python_module.hpp"

namespace py = pybind11;

namespace gpuldpc {

namespace {

constexpr int kAck = 2, kAlive = 3;  // 32-bit words of the request block after the 64-bit request

// 0: acknowledged; 1: the kernel is not running (launch it, then wait); 2: no answer within max_ns
// (max_ns <= 0: the request is posted and not waited for).
int resident_request(std::uintptr_t ctrl, std::uint64_t request, std::uint32_t seq, py::object src,
                     std::uintptr_t staging, std::int64_t max_ns) {
    if (!src.is_none()) {  // any C-contiguous buffer (else its exporter raises; NumPy: ValueError)
        Py_buffer rows;
        if (PyObject_GetBuffer(src.ptr(), &rows, PyBUF_C_CONTIGUOUS) != 0) throw py::error_already_set();
        std::memcpy(reinterpret_cast<void*>(staging), rows.buf, static_cast<std::size_t>(rows.len));
        PyBuffer_Release(&rows);
    }
    auto* words = reinterpret_cast<volatile std::uint32_t*>(ctrl);
    py::gil_scoped_release nogil;
    // the rows before the request (x86 keeps stores in order; this keeps the compiler from moving them)
    std::atomic_thread_fence(std::memory_order_release);
    *reinterpret_cast<volatile std::uint64_t*>(ctrl) = request;
    if (max_ns <= 0) return words[kAlive] ? 2 : 1;  // post only
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(max_ns);
    for (unsigned spin = 1;; ++spin) {
        if (words[kAck] == seq) {
            std::atomic_thread_fence(std::memory_order_acquire);  // the results after the acknowledgement
            return 0;
        }
        if (!words[kAlive]) return 1;
        if (spin % 256 == 0 && std::chrono::steady_clock::now() > deadline) return 2;
    }
}

// The mapped result block of `frames` frames (engine._Slot.host_out: int32 iteration counts, then
// the flag bytes at 4 * capacity, then the decisions at `offset`, `width` bytes a frame).
py::tuple mapped_results(std::uintptr_t block, py::ssize_t frames, py::ssize_t width, py::ssize_t offset,
                         py::ssize_t capacity) {
    const auto* base = reinterpret_cast<const std::uint8_t*>(block);
    py::array_t<std::uint8_t> bits({frames, width});
    py::array_t<std::int32_t> iterations(frames);
    py::array_t<bool> valid(frames), bad_llr(frames);
    std::memcpy(bits.mutable_data(), base + offset, static_cast<std::size_t>(frames * width));
    std::memcpy(iterations.mutable_data(), base, static_cast<std::size_t>(4 * frames));
    bool* v = valid.mutable_data();
    bool* b = bad_llr.mutable_data();
    for (py::ssize_t i = 0; i < frames; ++i) {  // bit 0: syndrome satisfied, bit 1: non-finite LLRs
        const std::uint8_t f = base[4 * capacity + i];
        v[i] = (f & 1u) != 0;
        b[i] = f > 1u;
    }
    return py::make_tuple(bits, iterations, valid, bad_llr);
}

}  // namespace

void register_resident(py::module_& m) {
    m.def("resident_request", &resident_request, py::arg("ctrl"), py::arg("request"), py::arg("seq"),
          py::arg("src"), py::arg("staging"), py::arg("max_ns"),
          "Copy src (C-contiguous rows, or None) to the staging address, store the 64-bit request into the "
          "mapped request block at ctrl and spin on its acknowledgement word (GIL released): 0 acknowledged, "
          "1 kernel not running, 2 no answer within max_ns.");
    m.def("mapped_results", &mapped_results, py::arg("block"), py::arg("frames"), py::arg("width"),
          py::arg("offset"), py::arg("capacity"),
          "(bits uint8 [frames, width], iterations int32, valid bool, bad_llr bool) copied out of a latency "
          "kernel's mapped result block.");
}

}  // namespace gpuldpc
