include(CMakePackageConfigHelpers)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/opennd)
install(TARGETS opennd EXPORT OpenNDTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/opennd)
install(EXPORT OpenNDTargets NAMESPACE OpenND:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/OpenND)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/OpenNDConfig.cmake.in
  ${PROJECT_BINARY_DIR}/OpenNDConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/OpenND)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/OpenNDConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/OpenNDConfig.cmake ${PROJECT_BINARY_DIR}/OpenNDConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/OpenND)
file(RELATIVE_PATH OPENND_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file(${PROJECT_SOURCE_DIR}/cmake/opennd.pc.in ${PROJECT_BINARY_DIR}/opennd.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/opennd.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(TARGET opennd_ndk)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/opennd-ndk.pc.in ${PROJECT_BINARY_DIR}/opennd-ndk.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/opennd-ndk.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
