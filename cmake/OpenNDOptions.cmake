option(OPENND_BUILD_TESTS "Build the test suite" ON)
option(OPENND_BUILD_BENCH "Build the benchmarks" ON)
option(OPENND_WERROR "Treat warnings as errors" ON)
set(OPENND_SANITIZE "" CACHE STRING "Sanitizers for the whole build: address,undefined or thread")

add_library(opennd_warnings INTERFACE)
target_compile_options(opennd_warnings INTERFACE -Wall -Wextra $<$<BOOL:${OPENND_WERROR}>:-Werror>)

if(OPENND_SANITIZE)
  add_compile_options(-fsanitize=${OPENND_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${OPENND_SANITIZE})
endif()
