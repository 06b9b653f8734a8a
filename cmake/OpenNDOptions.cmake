option(OPENND_BUILD_TESTS "Build the test suite" ON)
option(OPENND_BUILD_BENCH "Build the benchmarks" ON)
# Warnings are errors in the project's own checks (scripts/test.sh turns
# this on), never in a user's or a packager's build: another compiler or
# build type may warn where GCC 12 and Clang 14 at the CI's types do not.
option(OPENND_WERROR "Treat warnings as errors" OFF)
# The test programs' own code at the build type's optimisation (default), or
# at -O0 (OFF: what CI's optimised build uses; the libraries, providers and
# tools under test are built as the build type says either way, and the
# test code, half of the build's compile time, builds twice as fast).
option(OPENND_OPTIMIZE_TESTS "Optimise the test programs' own code as the build type says" ON)
set(OPENND_SANITIZE "" CACHE STRING "Sanitizers for the whole build: address,undefined or thread")

add_library(opennd_warnings INTERFACE)
target_compile_options(opennd_warnings INTERFACE -Wall -Wextra $<$<BOOL:${OPENND_WERROR}>:-Werror>)
# GCC 12 at -O3 (Release) reports -Wrestrict, -Warray-bounds and
# -Wstringop-overread inside libstdc++'s std::string and std::vector code
# inlined into ours (a string literal + a std::string, a vector built from
# a list and then inserted into) where nothing overlaps or runs past an end:
# known false positives of that release. The other build types keep them.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(opennd_warnings INTERFACE $<$<CONFIG:Release>:-Wno-restrict -Wno-array-bounds -Wno-stringop-overread>)
endif()

if(OPENND_SANITIZE)
  # libstdc++'s bounds checks too: an index past a deque or vector (which
  # ASan sees only when it leaves the allocation) aborts at once.
  add_compile_options(-fsanitize=${OPENND_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all
                      -D_GLIBCXX_ASSERTIONS)
  add_link_options(-fsanitize=${OPENND_SANITIZE})
endif()

# Shared libraries and providers are linked with every symbol resolved
# (-Wl,--no-undefined), except under Clang's sanitizers: Clang links the
# sanitizer runtime into executables only, so a library's calls into it
# are resolved when the program loads it.
set(OPENND_NO_UNDEFINED -Wl,--no-undefined)
if(OPENND_SANITIZE AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(OPENND_NO_UNDEFINED "")
endif()

# Link-time optimisation for the data path (the provider kit and the
# providers built on it): the per-message path crosses a dozen small
# functions in several files (ring, CQ, MR table, queue pair), and inlining
# across them took ~3% off the one-thread ping-pong (ndperf loop). Off for
# sanitizer builds (they measure nothing) and Debug.
include(CheckIPOSupported)
check_ipo_supported(RESULT _opennd_ipo_ok OUTPUT _opennd_ipo_why LANGUAGES CXX)
set(_opennd_lto_default OFF)
if(_opennd_ipo_ok AND NOT OPENND_SANITIZE AND NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
  set(_opennd_lto_default ON)
endif()
option(OPENND_LTO "Link-time optimisation of the provider kit and providers" ${_opennd_lto_default})
if(OPENND_LTO AND NOT _opennd_ipo_ok)
  message(FATAL_ERROR "OPENND_LTO: the toolchain cannot do link-time optimisation: ${_opennd_ipo_why}")
endif()
# Marks a data-path target for link-time optimisation when OPENND_LTO is on.
function(opennd_data_path_lto target)
  if(OPENND_LTO)
    set_property(TARGET ${target} PROPERTY INTERPROCEDURAL_OPTIMIZATION TRUE)
  endif()
endfunction()
