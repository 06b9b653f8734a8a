# Where things go, in the build tree and once installed. The build tree
# mirrors the install tree (lib/, lib/opennd/, etc/opennd/providers.d/) so the
# library finds its catalog the same way in both: relative to its own file.
set(OPENND_PROVIDER_SUBDIR "opennd")
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_BINDIR})
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_LIBDIR})
set(CMAKE_ARCHIVE_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/archive)
# Installed programs and providers find libopennd relative to themselves, so
# an install prefix can be moved or used without ldconfig.
file(RELATIVE_PATH _bin_to_lib "/p/${CMAKE_INSTALL_BINDIR}" "/p/${CMAKE_INSTALL_LIBDIR}")
set(CMAKE_INSTALL_RPATH "$ORIGIN/${_bin_to_lib}")
set(OPENND_PROVIDER_OUTPUT_DIR ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_LIBDIR}/${OPENND_PROVIDER_SUBDIR})

if(IS_ABSOLUTE "${CMAKE_INSTALL_SYSCONFDIR}")
  set(_sysconf_rel "")
else()
  set(_sysconf_rel "${CMAKE_INSTALL_SYSCONFDIR}")
endif()

# The catalog directory, relative to the directory that holds libopennd.so.
if(_sysconf_rel)
  file(RELATIVE_PATH OPENND_CATALOG_FROM_LIBDIR "/p/${CMAKE_INSTALL_LIBDIR}" "/p/${_sysconf_rel}/opennd/providers.d")
  set(OPENND_BUILD_CATALOG_DIR ${PROJECT_BINARY_DIR}/${_sysconf_rel}/opennd/providers.d)
  set(OPENND_INSTALL_CATALOG_DIR ${_sysconf_rel}/opennd/providers.d)
  file(RELATIVE_PATH OPENND_PROVIDERS_FROM_CATALOG "/p/${_sysconf_rel}/opennd/providers.d"
       "/p/${CMAKE_INSTALL_LIBDIR}/${OPENND_PROVIDER_SUBDIR}")
else()
  set(OPENND_CATALOG_FROM_LIBDIR "")
  set(OPENND_BUILD_CATALOG_DIR ${PROJECT_BINARY_DIR}/etc/opennd/providers.d)
  set(OPENND_INSTALL_CATALOG_DIR ${CMAKE_INSTALL_SYSCONFDIR}/opennd/providers.d)
  set(OPENND_PROVIDERS_FROM_CATALOG ${CMAKE_INSTALL_FULL_LIBDIR}/${OPENND_PROVIDER_SUBDIR})
endif()
# The system-wide fallback when the relative one does not exist.
set(OPENND_SYSTEM_CATALOG_DIR "/etc/opennd/providers.d")
file(MAKE_DIRECTORY ${OPENND_BUILD_CATALOG_DIR})

# opennd_add_provider(<target> NAME <file-stem> GUID <{...}> [DESCRIPTION <text>] [ORDER <NN>] SOURCES ...)
# Builds a provider library into lib/opennd/, writes its catalog entry into
# the build-tree catalog and installs both. ORDER is the entry's place in the
# catalog (default 50); 90 to 99 are for providers that serve every address
# (opennd/catalog.h), so that one serving a NIC's addresses is tried first.
function(opennd_add_provider target)
  cmake_parse_arguments(P "" "NAME;GUID;DESCRIPTION;ORDER" "SOURCES;LIBS" ${ARGN})
  if(NOT P_ORDER)
    set(P_ORDER 50)
  endif()
  add_library(${target} MODULE ${P_SOURCES})
  target_link_libraries(${target} PRIVATE opennd_kit opennd opennd_warnings ${P_LIBS})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${P_NAME} PREFIX "lib"
    LIBRARY_OUTPUT_DIRECTORY ${OPENND_PROVIDER_OUTPUT_DIR}
    INSTALL_RPATH "$ORIGIN/..")
  target_link_options(${target} PRIVATE ${OPENND_NO_UNDEFINED})
  opennd_data_path_lto(${target})
  set(OPENND_ENTRY_NAME ${P_NAME})
  set(OPENND_ENTRY_GUID ${P_GUID})
  set(OPENND_ENTRY_DESCRIPTION "${P_DESCRIPTION}")
  set(OPENND_ENTRY_LIBRARY "${OPENND_PROVIDERS_FROM_CATALOG}/lib${P_NAME}.so")
  # An entry this build wrote under another order is gone from the build catalog.
  file(GLOB _stale ${OPENND_BUILD_CATALOG_DIR}/[0-9][0-9]-${P_NAME}.conf)
  list(REMOVE_ITEM _stale ${OPENND_BUILD_CATALOG_DIR}/${P_ORDER}-${P_NAME}.conf)
  if(_stale)
    file(REMOVE ${_stale})
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/provider.conf.in ${OPENND_BUILD_CATALOG_DIR}/${P_ORDER}-${P_NAME}.conf @ONLY)
  install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/${OPENND_PROVIDER_SUBDIR})
  install(FILES ${OPENND_BUILD_CATALOG_DIR}/${P_ORDER}-${P_NAME}.conf DESTINATION ${OPENND_INSTALL_CATALOG_DIR})
endfunction()
