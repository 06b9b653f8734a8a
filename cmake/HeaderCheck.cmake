# Every public header must compile on its own, as C++17 and as C++20, with
# -Wall -Wextra (errors with OPENND_WERROR). One generated source per header
# and standard.
file(GLOB_RECURSE _public_headers RELATIVE ${PROJECT_SOURCE_DIR}/include CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/include/*.h)
foreach(_std 17 20)
  set(_sources)
  foreach(_h ${_public_headers})
    string(MAKE_C_IDENTIFIER "${_h}" _id)
    set(_src ${PROJECT_BINARY_DIR}/header-check/cxx${_std}/${_id}.cpp)
    file(WRITE ${_src}.in "#include <${_h}>\n#include <${_h}>\nint header_check_${_id}_${_std};\n")
    configure_file(${_src}.in ${_src} COPYONLY)
    list(APPEND _sources ${_src})
  endforeach()
  add_library(opennd_header_check_cxx${_std} OBJECT ${_sources})
  target_include_directories(opennd_header_check_cxx${_std} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(opennd_header_check_cxx${_std} PRIVATE -Wall -Wextra $<$<BOOL:${OPENND_WERROR}>:-Werror>)
  set_target_properties(opennd_header_check_cxx${_std} PROPERTIES CXX_STANDARD ${_std} CXX_EXTENSIONS OFF)
endforeach()

# The provider kit's headers too (C++20, the standard providers build with):
# a provider includes only the kit header it needs.
file(GLOB _kit_headers RELATIVE ${PROJECT_SOURCE_DIR}/kit/include CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/kit/include/opennd/kit/*.h)
set(_sources)
foreach(_h ${_kit_headers})
  string(MAKE_C_IDENTIFIER "${_h}" _id)
  set(_src ${PROJECT_BINARY_DIR}/header-check/kit/${_id}.cpp)
  file(WRITE ${_src}.in "#include <${_h}>\n#include <${_h}>\nint header_check_kit_${_id};\n")
  configure_file(${_src}.in ${_src} COPYONLY)
  list(APPEND _sources ${_src})
endforeach()
add_library(opennd_header_check_kit OBJECT ${_sources})
target_include_directories(opennd_header_check_kit PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/kit/include)
target_compile_options(opennd_header_check_kit PRIVATE -Wall -Wextra $<$<BOOL:${OPENND_WERROR}>:-Werror>)
set_target_properties(opennd_header_check_kit PROPERTIES CXX_STANDARD 20 CXX_EXTENSIONS OFF)
