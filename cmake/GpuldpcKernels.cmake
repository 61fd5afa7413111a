# gpuldpc_add_kernels(<target> SOURCE_DIR <dir> DESTINATION <dir>)
#
# Compiles every <dir>/*.cu with nvcc into <name>.fatbin holding machine code
# for each architecture of GPULDPC_CUDA_ARCHS (default sm_80, sm_90) and PTX of
# the last one (so newer GPUs JIT it), and installs the fatbins into
# DESTINATION, where gpuldpc._native.kernel_fatbin(<name>) finds them and
# PyCUDA/CUDA's module loader (cuModuleLoad) reads them.
#
# Without nvcc nothing is compiled (a status line says so), unless
# GPULDPC_REQUIRE_CUDA is ON: then that is an error.  A kernel that does not
# compile fails the build.
include(CheckLanguage)

set(GPULDPC_CUDA_ARCHS "80;90" CACHE STRING "SM architectures the kernels are compiled for")
set(GPULDPC_NVCC_FLAGS "-O3;-lineinfo;-std=c++17" CACHE STRING "nvcc flags for every kernel")

function(gpuldpc_add_kernels target)
    cmake_parse_arguments(ARG "" "SOURCE_DIR;DESTINATION" "" ${ARGN})
    file(GLOB kernels CONFIGURE_DEPENDS "${ARG_SOURCE_DIR}/*.cu")
    file(GLOB kernel_headers CONFIGURE_DEPENDS "${ARG_SOURCE_DIR}/*.cuh" "${ARG_SOURCE_DIR}/*.h")

    check_language(CUDA)
    if(NOT CMAKE_CUDA_COMPILER)
        if(GPULDPC_REQUIRE_CUDA)
            message(FATAL_ERROR "GPULDPC_REQUIRE_CUDA is ON but no working nvcc was found: "
                                "put nvcc on PATH or pass -DCMAKE_CUDA_COMPILER=/path/to/nvcc")
        endif()
        message(STATUS "gpuldpc: no nvcc found, CUDA kernels not compiled "
                       "(the cuda backend then builds them at run time, if it can)")
        return()
    endif()

    set(gencode "")
    foreach(arch IN LISTS GPULDPC_CUDA_ARCHS)
        list(APPEND gencode "-gencode=arch=compute_${arch},code=sm_${arch}")
    endforeach()
    list(GET GPULDPC_CUDA_ARCHS -1 ptx_arch)
    list(APPEND gencode "-gencode=arch=compute_${ptx_arch},code=compute_${ptx_arch}")

    set(fatbins "")
    foreach(cu IN LISTS kernels)
        get_filename_component(name "${cu}" NAME_WE)
        set(out "${CMAKE_CURRENT_BINARY_DIR}/kernels/${name}.fatbin")
        add_custom_command(
            OUTPUT "${out}"
            COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_CURRENT_BINARY_DIR}/kernels"
            COMMAND "${CMAKE_CUDA_COMPILER}" --fatbin ${GPULDPC_NVCC_FLAGS} ${gencode}
                    "-I${ARG_SOURCE_DIR}" -o "${out}" "${cu}"
            DEPENDS "${cu}" ${kernel_headers}
            COMMENT "nvcc: kernels/${name}.cu -> ${name}.fatbin (sm ${GPULDPC_CUDA_ARCHS})"
            VERBATIM)
        list(APPEND fatbins "${out}")
    endforeach()
    list(LENGTH fatbins count)
    message(STATUS "gpuldpc: ${count} CUDA kernel(s) -> fatbins for sm ${GPULDPC_CUDA_ARCHS} "
                   "(${CMAKE_CUDA_COMPILER})")
    if(count GREATER 0)
        add_custom_target(${target} ALL DEPENDS ${fatbins})
        install(FILES ${fatbins} DESTINATION "${ARG_DESTINATION}")
    endif()
endfunction()
