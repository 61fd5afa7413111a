# cmake -DMANIFEST=<build>/install_manifest.txt -P cmake/Uninstall.cmake
#
# The `uninstall` target: removes every file `cmake --install` wrote (the
# manifest), then the package folders those files were in (gpuldpc/,
# gnuradio/gpuldpc/, share/gpuldpc/) with what Python left there (__pycache__).
# Shared folders (share/gnuradio/grc/blocks, the gnuradio/ namespace) stay.
cmake_minimum_required(VERSION 3.18)
if(NOT EXISTS "${MANIFEST}")
    message(FATAL_ERROR " gpuldpc: nothing to uninstall: ${MANIFEST} does not exist "
                        "(cmake --install was not run from this build folder)")
endif()
file(STRINGS "${MANIFEST}" files)
set(dirs "")
set(removed 0)
foreach(file IN LISTS files)
    # (one MATCHES an if(): an OR would evaluate both and leave the second's CMAKE_MATCH_1)
    if(file MATCHES "^(.*/gpuldpc)/__init__\\.py$")
        list(APPEND dirs "${CMAKE_MATCH_1}")
    elseif(file MATCHES "^(.*/share/gpuldpc)/")
        list(APPEND dirs "${CMAKE_MATCH_1}")
    endif()
    if(EXISTS "${file}" OR IS_SYMLINK "${file}")
        file(REMOVE "${file}")
        math(EXPR removed "${removed} + 1")
    endif()
endforeach()
list(REMOVE_DUPLICATES dirs)
foreach(dir IN LISTS dirs)
    if(IS_DIRECTORY "${dir}")
        file(REMOVE_RECURSE "${dir}")
        message(STATUS "gpuldpc: removed ${dir}")
    endif()
endforeach()
message(STATUS "gpuldpc: uninstalled ${removed} files listed in ${MANIFEST}")
